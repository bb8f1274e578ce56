"""Aggregation that learns per user: a logistic regression on dense features, the user's items
against sampled background papers (Scholar Inbox's rule), scored on the candidates.

The background is the candidates themselves (a random sample, the user's own papers excluded):
most candidates are not for this user, and no other papers are needed at run time.

The fit is scikit-learn's LogisticRegression(C=1, class_weight="balanced", solver="lbfgs",
max_iter=200): the same objective (class-weighted mean log-loss + ||w||² / (2·C·Σweights), intercept
not penalised) handed to the same scipy L-BFGS-B with the same options. Importing scikit-learn cost
0.6-0.9 s of CPU per run, more than the fit; tests/test_learned.py checks the scores against
scikit-learn's on real libraries.
"""

from __future__ import annotations

import numpy as np

NEGATIVES_PER_POSITIVE = 10
MIN_NEGATIVES = 200
# The user's items the model sees at most (a seeded sample beyond): a 384-weight direction is settled
# long before, while the fit's time and its float64 design matrix grow with every item (164 MB at 50,000 items).
MAX_POSITIVES = 10000
C = 1.0
MAX_ITER = 200
TOL = 1e-4  # LogisticRegression's default


def _loss_gradient(coef: np.ndarray, x: np.ndarray, y: np.ndarray, weights: np.ndarray, l2: float):
    """scikit-learn's LinearModelLoss.loss_gradient for the half binomial loss, with an intercept."""
    raw = x @ coef[:-1] + coef[-1]
    loss = np.logaddexp(0.0, raw) - y * raw  # log(1 + e^raw) − y·raw, without overflow
    pointwise = weights * (0.5 * (1.0 + np.tanh(0.5 * raw)) - y)  # weight · (sigmoid(raw) − y)
    total = weights.sum()
    pointwise /= total
    gradient = np.empty_like(coef)
    gradient[:-1] = x.T @ pointwise + l2 * coef[:-1]
    gradient[-1] = pointwise.sum()
    return float((weights * loss).sum() / total) + float(0.5 * l2 * (coef[:-1] @ coef[:-1])), gradient


def fit_logistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weights (no intercept) of the class-balanced L2 logistic regression of y (0/1) on x."""
    from scipy.optimize import minimize

    x = np.asarray(x, dtype=np.float64)  # no copy when it is float64 already
    y = np.asarray(y, dtype=np.float64)
    counts = np.bincount(y.astype(np.int64), minlength=2).astype(np.float64)
    weights = (len(y) / (2.0 * counts))[y.astype(np.int64)]
    l2 = 1.0 / (C * float(weights.sum()))
    result = minimize(_loss_gradient, np.zeros(x.shape[1] + 1), method="L-BFGS-B", jac=True,
                      args=(x, y, weights, l2),
                      options={"maxiter": MAX_ITER, "maxls": 50, "gtol": TOL, "ftol": 64 * np.finfo(float).eps})
    return result.x[:-1]


def linear_user_scores(library_rows: np.ndarray, background_rows: np.ndarray, corpus_rows: np.ndarray,
                       seed: int = 0, exclude: np.ndarray | None = None) -> np.ndarray:
    """Decision values (without the intercept, which ranks nothing) of a per-user logistic regression
    for every corpus row.

    library_rows : the user's item embeddings (positives).
    background_rows : rows to sample negatives from (`exclude`: their indices never sampled).
    """
    rng = np.random.default_rng(seed)
    if len(library_rows) > MAX_POSITIVES:
        library_rows = library_rows[np.sort(rng.choice(len(library_rows), size=MAX_POSITIVES, replace=False))]
    pool = np.arange(len(background_rows))
    if exclude is not None and len(exclude):
        pool = np.setdiff1d(pool, exclude)
    wanted = min(max(MIN_NEGATIVES, NEGATIVES_PER_POSITIVE * len(library_rows)), len(pool))
    negatives = background_rows[rng.choice(pool, size=wanted, replace=False)]
    x = np.empty((len(library_rows) + len(negatives), library_rows.shape[1]), dtype=np.float64)  # one copy
    x[: len(library_rows)], x[len(library_rows) :] = library_rows, negatives
    y = np.r_[np.ones(len(library_rows)), np.zeros(len(negatives))]
    return np.asarray(corpus_rows, dtype=np.float64) @ fit_logistic(x, y)
