"""Recency: library items weighted by when they were added, halving every `half_life_days`.

Ages count from the newest item's date (not from today), so a library exported long ago ranks as it
did then and a run is reproducible; only the ratio of two weights matters to a ranking anyway. An item
without a readable date gets the median weight of the dated ones (neither new nor old); a library with
no date at all is not weighted. The weights scale each item's similarities in the content topK and
its share of the positive class in the per-user model (docs/evaluation.md, "Recency").
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

import numpy as np

from recommender.features.base import HybridRows
from recommender.scoring.learned import RowBlocks, design, fit_logistic

_DATE = re.compile(r"\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")


def added_day(text: str) -> dt.date | None:
    """The day in a date-added value ('2024-02-12', '2011-02-02T22:26:36Z', '2024/02/12 10:00'), or None."""
    match = _DATE.match(text or "")
    if not match:
        return None
    try:
        return dt.date(*map(int, match.groups()))
    except ValueError:
        return None


def recency_weights(dates_added: Sequence[str], half_life_days: float) -> np.ndarray | None:
    """One weight in (0, 1] per item: 0.5 ** (days before the newest dated item / half-life); undated
    items get the dated ones' median. None when no item has a readable date."""
    days = [added_day(text) for text in dates_added]
    known = [day for day in days if day is not None]
    if not known:
        return None
    newest = max(known)
    ages = np.array([np.nan if day is None else (newest - day).days for day in days], dtype=np.float64)
    weights = 0.5 ** (ages / float(half_life_days))
    weights[np.isnan(weights)] = np.median(weights[~np.isnan(weights)])
    return weights


def scaled_rows(rows, weights: np.ndarray):
    """Each row times its weight, so every similarity to it is scaled the same (dense, sparse or hybrid rows)."""
    weights = np.asarray(weights, dtype=np.float32)
    if isinstance(rows, np.ndarray):
        return rows * weights[:, None]
    if isinstance(rows, HybridRows):  # both parts scaled scale their weighted sum
        return HybridRows(scaled_rows(rows.sparse_rows, weights), scaled_rows(rows.dense_rows, weights),
                          rows.dense_weight)
    from scipy import sparse

    return sparse.diags(weights) @ rows


def class_weights(positive_weights: np.ndarray, negatives: int) -> np.ndarray:
    """Per-sample weights of the class-balanced fit, the positives' share of their class following
    `positive_weights` (each class still weighs half of the total, as the unweighted fit's)."""
    positive_weights = np.asarray(positive_weights, dtype=np.float64)
    total = len(positive_weights) + negatives
    positives = positive_weights / positive_weights.sum() * (total / 2.0)
    return np.r_[positives, np.full(negatives, total / (2.0 * negatives))]


def weighted_linear_scores(positive_rows: np.ndarray | RowBlocks, negative_rows: np.ndarray,
                           candidate_rows: np.ndarray, positive_weights: np.ndarray) -> np.ndarray:
    """learned.linear_scores with each positive weighted by its recency (`positive_weights`)."""
    x, y = design(positive_rows, negative_rows)
    coef = fit_logistic(x, y, sample_weight=class_weights(positive_weights, len(negative_rows)))
    del x
    return np.asarray(candidate_rows, dtype=np.float64) @ coef
