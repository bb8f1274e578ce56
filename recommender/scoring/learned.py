"""The per-user linear model: a logistic regression of the user's items against sampled background
papers (Scholar Inbox's rule), whose decision values score the candidates.

The background is the candidates themselves (a random sample, the user's own papers excluded):
most candidates are not for this user, and no other papers are needed at run time.

The fit is scikit-learn's LogisticRegression(C=1, class_weight="balanced", solver="lbfgs",
max_iter=200) — the same objective handed to the same scipy L-BFGS-B — without importing
scikit-learn, which costs more than the fit (docs/performance.md); a test checks the
two agree (tests/test_lexical.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

NEGATIVES_PER_POSITIVE = 10
MIN_NEGATIVES = 200
# The user's items the model sees at most (a seeded sample beyond): the direction is settled long
# before, while the fit's time and its float64 design matrix grow with every item.
MAX_POSITIVES = 10000
C = 1.0
MAX_ITER = 200
TOL = 1e-4  # LogisticRegression's default
SETTINGS = (NEGATIVES_PER_POSITIVE, MIN_NEGATIVES, MAX_POSITIVES, C, MAX_ITER, TOL)  # what a kept result depends on


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


def fit_logistic(x, y: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Weights (no intercept) of the class-balanced L2 logistic regression of y (0/1) on x, a dense
    array or a sparse matrix (`sample_weight`: per-sample weights instead of the balanced ones, as
    LogisticRegression(C=1).fit(x, y, sample_weight) with no class weights)."""
    return minimize_logistic(x, y, sample_weight=sample_weight).x[:-1]


def minimize_logistic(x, y: np.ndarray, start: np.ndarray | None = None, tol: float = TOL,
                      sample_weight: np.ndarray | None = None):
    """scipy's L-BFGS-B result for that regression (`.x`: the weights, then the intercept), from zero
    unless `start` is given (the retired benchmarks/warm_start.py compared both: docs/benchmarks-retired.md; scoring always starts from zero)."""
    from scipy.optimize import minimize

    from scipy import sparse

    # no copy when it is float64 already; a sparse matrix stays sparse
    x = x.astype(np.float64) if sparse.issparse(x) else np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if sample_weight is None:
        counts = np.bincount(y.astype(np.int64), minlength=2).astype(np.float64)
        sample_weight = (len(y) / (2.0 * counts))[y.astype(np.int64)]
    weights = np.asarray(sample_weight, dtype=np.float64)
    l2 = 1.0 / (C * float(weights.sum()))
    return minimize(_loss_gradient, np.zeros(x.shape[1] + 1) if start is None else start, method="L-BFGS-B",
                    jac=True, args=(x, y, weights, l2),
                    options={"maxiter": MAX_ITER, "maxls": 50, "gtol": tol, "ftol": 64 * np.finfo(float).eps})


def sampled(n_library: int, n_background: int, seed: int = 0,
            exclude: np.ndarray | None = None) -> tuple[np.ndarray | None, np.ndarray]:
    """(the positives' indices, None for all of them; the negatives' indices): a seeded sample of
    MAX_POSITIVES beyond that many items, then NEGATIVES_PER_POSITIVE background rows per positive
    (MIN_NEGATIVES at least, as many as there are at most), never an excluded one."""
    rng = np.random.default_rng(seed)
    positives = None
    if n_library > MAX_POSITIVES:
        positives = np.sort(rng.choice(n_library, size=MAX_POSITIVES, replace=False))
    pool = np.arange(n_background)
    if exclude is not None and len(exclude):
        pool = np.setdiff1d(pool, exclude)
    wanted = min(max(MIN_NEGATIVES, NEGATIVES_PER_POSITIVE * min(n_library, MAX_POSITIVES)), len(pool))
    return positives, rng.choice(pool, size=wanted, replace=False)


class RowBlocks(NamedTuple):
    """`count` rows arriving as consecutive blocks: rows made on demand (adapter.py) are copied into
    the float64 design a block at a time, never all at once beside it."""

    count: int
    blocks: Iterable[np.ndarray]


def design(positive_rows: np.ndarray | RowBlocks, negative_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x (float64, one copy) and y (1 for the positives, 0 for the negatives)."""
    if not isinstance(positive_rows, RowBlocks):
        positive_rows = RowBlocks(len(positive_rows), [positive_rows])
    count = positive_rows.count
    x = np.empty((count + len(negative_rows), negative_rows.shape[1]), dtype=np.float64)
    start = 0
    for block in positive_rows.blocks:
        x[start : start + len(block)] = block
        start += len(block)
    if start != count:
        raise ValueError(f"{start} positive rows arrived, {count} expected")
    x[count:] = negative_rows
    return x, np.r_[np.ones(count), np.zeros(len(negative_rows))]


def linear_scores(positive_rows: np.ndarray | RowBlocks, negative_rows: np.ndarray,
                  candidate_rows: np.ndarray) -> np.ndarray:
    """Decision values (without the intercept, which ranks nothing) for every candidate row of the
    model fitted on these positives and negatives."""
    x, y = design(positive_rows, negative_rows)
    coef = fit_logistic(x, y)
    del x  # freed before the candidates' float64 copy is made
    return np.asarray(candidate_rows, dtype=np.float64) @ coef


def linear_user_scores(library_rows: np.ndarray, background_rows: np.ndarray, corpus_rows: np.ndarray,
                       seed: int = 0, exclude: np.ndarray | None = None) -> np.ndarray:
    """linear_scores with the sampled design: the user's rows (MAX_POSITIVES at most) against
    background rows never in `exclude`."""
    positives, negatives = sampled(len(library_rows), len(background_rows), seed, exclude)
    chosen = library_rows if positives is None else library_rows[positives]
    return linear_scores(chosen, background_rows[negatives], corpus_rows)


def training_rows(library_rows: np.ndarray, background_rows: np.ndarray, seed: int = 0,
                  exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of the fit linear_user_scores makes with these arguments."""
    positives, negatives = sampled(len(library_rows), len(background_rows), seed, exclude)
    return design(library_rows if positives is None else library_rows[positives], background_rows[negatives])
