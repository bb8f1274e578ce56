"""The tf-idf collaborative model, kept as a peer of the evaluation only: implicit ALS on who-saved-what and
a ridge map from tf-idf rows to item factors (zotrec's model before the dense one, retired from `zotrec train`).

A new paper's factor is predicted from its tf-idf row; a user's vector is folded in (ALS closed form)
from the predicted factors of their own items. The model's class and file format stay in
collaborative/model.py while reading-list still reads such files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np
from scipy import sparse

from recommender.collaborative.model import ALSSettings, CollaborativeModel, TextFeatures, confidence, fit_als

log = logging.getLogger(__name__)


def fit_text_map(rows: sparse.csr_matrix, targets: np.ndarray, regularization: float) -> tuple:
    """Ridge from tf-idf rows to item factors, on the columns that occur (others would weigh 0).

    Returns (columns, weights of shape (columns, factors), intercept of shape (factors,)).
    """
    from sklearn.linear_model import Ridge

    columns = np.unique(rows.indices)
    ridge = Ridge(alpha=regularization, fit_intercept=True, solver="sparse_cg", tol=1e-4)
    ridge.fit(rows[:, columns], targets)
    return columns, ridge.coef_.T.astype(np.float32), ridge.intercept_.astype(np.float32)


def train_collaborative(
    interactions: sparse.csr_matrix, texts: Sequence[str], settings: ALSSettings | None = None
) -> CollaborativeModel:
    """ALS on the interactions, then the text map fitted on the items that have saves."""
    settings = settings or ALSSettings()
    started = time.perf_counter()
    user_factors, item_factors = fit_als(interactions, settings)
    features = TextFeatures(settings.n_features, settings.ngram_range)
    saved = np.flatnonzero(np.asarray(interactions.getnnz(axis=0)) > 0)
    rows = features.fit([texts[i] for i in saved]).transform(list(texts))
    columns, weights, intercept = fit_text_map(rows[saved], item_factors[saved], settings.map_regularization)
    weighted = confidence(interactions, settings)
    model = CollaborativeModel(
        settings=settings,
        map_columns=columns,
        map_weights=weights,
        map_intercept=intercept,
        item_gram=(item_factors[saved].T @ item_factors[saved]).astype(np.float64),
        fold_in_confidence=1.0 + float(np.median(weighted.data)) if weighted.nnz else 1.0 + settings.alpha,
        idf=features.idf.copy(),
        provenance={"users": int(interactions.shape[0]), "items": int(interactions.shape[1]),
                    "saves": int(interactions.nnz)},
    )
    model._features = features
    model.training_user_factors, model.training_item_factors = user_factors, item_factors
    model.provenance["seconds"] = round(time.perf_counter() - started, 2)
    log.debug("trained in %.1f s", model.provenance["seconds"])
    return model
