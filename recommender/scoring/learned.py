"""Aggregation that learns per user: a logistic regression on dense features, the user's items
against sampled background papers (Scholar Inbox's rule), scored on the candidates.

The background is the candidates themselves (a random sample, the user's own papers excluded):
most candidates are not for this user, and no other papers are needed at run time.
"""

from __future__ import annotations

import numpy as np

NEGATIVES_PER_POSITIVE = 10
MIN_NEGATIVES = 200
C = 1.0


def linear_user_scores(library_rows: np.ndarray, background_rows: np.ndarray, corpus_rows: np.ndarray,
                       seed: int = 0, exclude: np.ndarray | None = None) -> np.ndarray:
    """Decision values of a per-user logistic regression for every corpus row.

    library_rows : the user's item embeddings (positives).
    background_rows : rows to sample negatives from (`exclude`: their indices never sampled).
    """
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    pool = np.arange(len(background_rows))
    if exclude is not None and len(exclude):
        pool = np.setdiff1d(pool, exclude)
    wanted = min(max(MIN_NEGATIVES, NEGATIVES_PER_POSITIVE * len(library_rows)), len(pool))
    negatives = background_rows[rng.choice(pool, size=wanted, replace=False)]
    x = np.vstack([library_rows, negatives]).astype(np.float64)
    y = np.r_[np.ones(len(library_rows)), np.zeros(len(negatives))]
    model = LogisticRegression(C=C, class_weight="balanced", max_iter=200).fit(x, y)
    return np.asarray(corpus_rows, dtype=np.float64) @ model.coef_.ravel()
