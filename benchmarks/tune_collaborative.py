"""Choose ALS / text-map settings on a validation split of fold 0's TRAINING items (the test fold is never read).

Usage:
    .venv/bin/python benchmarks/tune_collaborative.py citeulike-a:../shared/data/citeulike-a \\
        '[{}, {"weighting": "binary", "alpha": 10}, {"factors": 128}]'

Each JSON object overrides the evaluation settings; prints content→ALS (ALS user) recall@50 on the split.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from recommender.collaborative.datasets import load_dataset
from recommender.collaborative.model import ALSSettings
from recommender.evaluation.folds import (
    VALIDATION_FRACTION,
    VALIDATION_SEED,
    item_cold_folds,
    ranking_metrics,
    settings_for,
    without_items,
)
from recommender.evaluation.tfidf_peer import train_collaborative


def main(spec: str, overrides: list[dict]) -> None:
    data = load_dataset(spec)
    test = item_cold_folds(data.n_items)[0]
    train_items = np.setdiff1d(np.arange(data.n_items), test)
    rng = np.random.default_rng(VALIDATION_SEED)
    validation = np.sort(rng.choice(train_items, size=int(VALIDATION_FRACTION * len(train_items)), replace=False))
    matrix = without_items(data.interactions, np.union1d(validation, test))
    held = data.interactions[:, validation]
    users = np.flatnonzero((held.getnnz(axis=1) > 0) & (matrix.getnnz(axis=1) > 0))
    relevant = held[users].toarray() > 0
    base = settings_for(data)
    for override in overrides:
        started = time.perf_counter()
        model = train_collaborative(matrix, data.texts, ALSSettings(**{**base.__dict__, **override}))
        factors = model.item_factors_for_rows(model.features.transform([data.texts[i] for i in validation]))
        scores = model.training_user_factors[users] @ factors.T
        recall = ranking_metrics(scores, relevant)["recall@50"].mean()
        print(json.dumps(override), f"recall@50 {recall:.4f}  {time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]) if len(sys.argv) > 2 else [{}])
