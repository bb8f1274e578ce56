"""Aggregation that learns per user: a logistic regression on dense features, the user's items
against sampled background papers (Scholar Inbox's rule), scored on the candidates.

The background is the candidates themselves (a random sample, the user's own papers excluded):
most candidates are not for this user, and no other papers are needed at run time.

The fit is scikit-learn's LogisticRegression(C=1, class_weight="balanced", solver="lbfgs",
max_iter=200): the same objective (class-weighted mean log-loss + ||w||² / (2·C·Σweights), intercept
not penalised) handed to the same scipy L-BFGS-B with the same options. Importing scikit-learn cost
0.6-0.9 s of CPU per run, more than the fit; tests/test_learned.py checks the scores against
scikit-learn's on real libraries.

With the kept library state (`kept`, recommender/scoring/incremental.py) the scores of an unchanged
input are the last run's: they are keyed by a digest of every input, so neither scipy.optimize
(0.1-0.2 s of CPU to import) nor the fit runs again. A changed input is fitted from zero, as in a
full run: L-BFGS started from the last run's weights (content embeddings, 10,000 items plus 10)
stopped after one evaluation instead of 19, but its scores differed from a full run's by up to 0.036
(their spread is 2.0), and the candidates' order still differed at a 10,000 times tighter tolerance,
where even the warm start cost twice today's fit (benchmarks/warm_start.py). A re-run must give a
full run's output.
"""

from __future__ import annotations

import hashlib

import numpy as np

from recommender.scoring.adapter import AdaptedRows

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
    return minimize_logistic(x, y).x[:-1]


def minimize_logistic(x: np.ndarray, y: np.ndarray, start: np.ndarray | None = None, tol: float = TOL):
    """scipy's L-BFGS-B result for that regression (`.x`: the weights, then the intercept), from zero
    unless `start` is given (benchmarks/warm_start.py compares both; scoring always starts from zero)."""
    from scipy.optimize import minimize

    x = np.asarray(x, dtype=np.float64)  # no copy when it is float64 already
    y = np.asarray(y, dtype=np.float64)
    counts = np.bincount(y.astype(np.int64), minlength=2).astype(np.float64)
    weights = (len(y) / (2.0 * counts))[y.astype(np.int64)]
    l2 = 1.0 / (C * float(weights.sum()))
    return minimize(_loss_gradient, np.zeros(x.shape[1] + 1) if start is None else start, method="L-BFGS-B",
                    jac=True, args=(x, y, weights, l2),
                    options={"maxiter": MAX_ITER, "maxls": 50, "gtol": tol, "ftol": 64 * np.finfo(float).eps})


def linear_user_scores(library_rows: np.ndarray, background_rows: np.ndarray, corpus_rows: np.ndarray,
                       seed: int = 0, exclude: np.ndarray | None = None, *, kept=None) -> np.ndarray:
    """Decision values (without the intercept, which ranks nothing) of a per-user logistic regression
    for every corpus row.

    library_rows : the user's item embeddings (positives): an array, or rows made on demand
        (scoring/adapter.py AdaptedRows), of which only the sampled ones are ever made.
    background_rows : rows to sample negatives from (`exclude`: their indices never sampled).
    kept : the kept library state (IncrementalScorer): the last run's scores when every input is the same.
    """
    positives, negatives = sampled(len(library_rows), len(background_rows), seed, exclude)

    def fit() -> np.ndarray:  # the design matrix is freed before the corpus's float64 copy is made
        coef = fit_logistic(*_sampled_design(library_rows, background_rows, positives, negatives))
        return np.asarray(corpus_rows, dtype=np.float64) @ coef

    if kept is None:
        return fit()
    key = inputs_digest(library_rows, background_rows, corpus_rows, negatives, positives=positives)
    return kept.kept_value("learned", key, fit)


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


def training_rows(library_rows: np.ndarray, background_rows: np.ndarray, seed: int = 0,
                  exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of the fit linear_user_scores makes with these arguments."""
    return _sampled_design(library_rows, background_rows, *sampled(len(library_rows), len(background_rows), seed, exclude))


def _sampled_design(library_rows, background_rows: np.ndarray, positives: np.ndarray | None,
                    negatives: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _design(library_rows if positives is None else library_rows[positives], background_rows[negatives])


def _design(positive_rows, negative_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x (float64, one copy) and y (1 for the positives, 0 for the negatives). The positives are copied
    a block at a time, so rows made on demand (scoring/adapter.py AdaptedRows) never exist all at once."""
    x = np.empty((len(positive_rows) + len(negative_rows), positive_rows.shape[1]), dtype=np.float64)
    for start in range(0, len(positive_rows), 1024):
        x[start : min(start + 1024, len(positive_rows))] = positive_rows[start : start + 1024]
    x[len(positive_rows) :] = negative_rows
    return x, np.r_[np.ones(len(positive_rows)), np.zeros(len(negative_rows))]


def inputs_digest(library_rows: np.ndarray, background_rows: np.ndarray, corpus_rows: np.ndarray,
                  negatives: np.ndarray, positives: np.ndarray | None = None) -> bytes:
    """SHA-256 of everything the scores depend on: the positives' rows (only the sampled ones, when
    `positives` says which: at 50,000 items a fifth of the bytes), the background rows and which of
    them are the negatives, the corpus rows (each array's dtype, shape and bytes), this module's
    settings and the numpy and scipy versions."""
    import scipy

    digest = hashlib.sha256(repr((NEGATIVES_PER_POSITIVE, MIN_NEGATIVES, MAX_POSITIVES, C, MAX_ITER, TOL,
                                  np.__version__, scipy.__version__)).encode())

    def add(array: np.ndarray, chunks: np.ndarray | None = None) -> None:
        """dtype, shape and bytes; with `chunks`, of array[chunks], a few thousand rows at a time (no copy of all)."""
        if isinstance(array, AdaptedRows):  # what the rows are made of: they are never joined just to be hashed
            rows = array.rows if chunks is None else chunks if array.rows is None else array.rows[chunks]
            digest.update(repr(("adapted rows", array.beta)).encode())
            add(array.vectors, rows)
            add(array.factors, rows)
            return
        shape = array.shape if chunks is None else (len(chunks),) + array.shape[1:]
        digest.update(repr((array.dtype.str, shape)).encode())
        if chunks is None:
            digest.update(np.ascontiguousarray(array).data if array.size else b"")
            return
        for start in range(0, len(chunks), 4096):
            digest.update(np.ascontiguousarray(array[chunks[start : start + 4096]]).data)

    add(library_rows, positives)
    add(background_rows)
    if corpus_rows is background_rows:  # the usual case: hashed once
        digest.update(b"the corpus is the background")
    else:
        add(corpus_rows)
    add(np.asarray(negatives, dtype=np.int64))
    return digest.digest()
