"""The ordering measure of issue 33: how well a rule orders a user's whole held-out set, not only its top.

The order loss is the share of (saved, unsaved) pairs a rule puts the wrong way round, ties counting
half: 1 − AUC over every held-out item of the fold (or over a user's hard candidates). A held-out
expertise check scores whole candidate lists by such a pairwise loss, and most of what it rates sits
below any top 50, where recall@50 and nDCG@10 are blind.
"""

from __future__ import annotations

import numpy as np



def above_counts(scores: np.ndarray, relevant: np.ndarray, ties: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(the row of each relevant item, how many items of that row score higher: ties counting half, or, with
    `ties` False, not at all). A row at a time: a user has a handful of saves against thousands of items."""
    scores = np.asarray(scores)
    rows, columns = np.nonzero(np.asarray(relevant, dtype=bool))  # row-major: each row's items together
    above = np.empty(len(rows), dtype=np.float64)
    starts = np.searchsorted(rows, np.arange(len(scores) + 1))
    for row in np.flatnonzero(np.diff(starts)):
        part = slice(starts[row], starts[row + 1])
        values = scores[row]
        own = values[columns[part]][:, None]
        above[part] = (values > own).sum(axis=1)
        if ties:
            above[part] += 0.5 * ((values == own).sum(axis=1) - 1)
    return rows, above


def order_losses(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Per row: the fraction of (relevant, other) pairs where the other scores higher, ties half (NaN where a
    row has no relevant item or nothing else)."""
    relevant = np.asarray(relevant, dtype=bool)
    rows, above = above_counts(scores, relevant)
    n_relevant = relevant.sum(axis=1).astype(np.float64)
    n_other = relevant.shape[1] - n_relevant
    # the counts include pairs of two relevant items, n_rel·(n_rel − 1)/2 of them per row whatever the order
    wrong = np.bincount(rows, weights=above, minlength=len(relevant)) - n_relevant * (n_relevant - 1) / 2
    pairs = n_relevant * n_other
    return np.divide(wrong, pairs, out=np.full(len(relevant), np.nan), where=pairs > 0)
