"""The collaborative adapter of issue 16 in its full form: measured, not shipped (experiments/README.md).

The adapted space (recommender/scoring/adapter.py) joins each paper's unit embedding to β × its unit
predicted ALS factor, renormalised, so papers saved by the same people come closer. Here every
content signal (the topK similarities, hence the reasons, and the per-user linear model) lives in
that space. zotrec ships the lighter form, only the linear model in the adapted space: within noise
of this one on CiteULike, one 128-d join instead of a wider similarity matrix, and the reasons stay
in the plain content space (docs/evaluation.md).

    python experiments/full_adapter.py citeulike-a:../shared/data/citeulike-a [fold] [beta]

prints recall@50 / recall@20 / nDCG@50 of the shipped form beside the full adapter's rows.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.scoring.adapter import ADAPTER_BETA, adapted  # noqa: E402


class AdaptedRepresentation:
    """A Representation (features/base.py) whose rows live in the adapted space: the base encoder's
    embeddings joined to a dense collaborative model's predicted factors of the same texts. With it a
    Recommender's topK, reasons and per-user linear model all use the adapted space (what
    benchmarks/topic_coverage.py and icml_leaveout.py measure)."""

    def __init__(self, base, model, beta: float = ADAPTER_BETA) -> None:
        self.base, self.model, self.beta = base, model, beta
        self.name = f"{getattr(base, 'name', 'dense')}+adapter"

    def fit(self, texts) -> AdaptedRepresentation:
        self.base = self.base.fit(texts)
        return self

    def transform(self, texts) -> np.ndarray:
        texts = list(texts)
        return adapted(np.asarray(self.base.transform(texts)), self.model.item_factors(texts), self.beta)


ROWS = ("zotrec fused (shipped form)", "zotrec fused, plain linear model", "adapted space top5",
        "zotrec linear model (adapted space)", "zotrec fused, adapted space")


def main(spec: str, fold: int = 0, beta: float = ADAPTER_BETA) -> None:
    from recommender.collaborative.datasets import load_dataset
    from recommender.evaluation.folds import item_cold_folds, settings_for
    from recommender.evaluation.protocol import dense_report_rows, run_fold
    from recommender.evaluation.splits import DenseItems
    from recommender.features.dense import MODEL_ID, DenseRepresentation

    data = load_dataset(spec)
    items = DenseItems(dense_report_rows(data, DenseRepresentation()), MODEL_ID)
    result = run_fold(data, fold, item_cold_folds(data.n_items)[fold], settings_for(data), "top5", 0,
                      items=items, adapter_beta=beta, full_adapter=True)
    print(f"fold {fold}, beta {beta:g}, weights {result.blend_weights}")
    for name in ROWS:
        values = result.metrics[name]
        print(f"{name:40s} {values['recall@50']:.4f} {values['recall@20']:.4f} {values['ndcg@50']:.4f}")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    main(sys.argv[1], *([int(sys.argv[2])] if len(sys.argv) > 2 else []), *(float(a) for a in sys.argv[3:4]))
