"""The ordering measure of issue 33: how well a rule orders a user's whole held-out set, not only its top.

The order loss is the share of (saved, unsaved) pairs a rule puts the wrong way round, ties counting
half: 1 − AUC over every held-out item of the fold (or over a user's hard candidates). A held-out
expertise check scores whole candidate lists by such a pairwise loss, and most of what it rates sits
below any top 50, where recall@50 and nDCG@10 are blind.
"""

from __future__ import annotations

import numpy as np

CHUNK = 4096  # saved items compared at a time (each against its user's whole row)


def order_losses(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Per row: the fraction of (relevant, other) pairs where the other scores higher, ties half (NaN where a
    row has no relevant item or nothing else)."""
    scores = np.asarray(scores)
    relevant = np.asarray(relevant, dtype=bool)
    rows, columns = np.nonzero(relevant)
    above = np.empty(len(rows), dtype=np.float64)
    for start in range(0, len(rows), CHUNK):
        part = slice(start, start + CHUNK)
        own = scores[rows[part], columns[part]][:, None]
        row_scores = scores[rows[part]]
        above[part] = (row_scores > own).sum(axis=1) + 0.5 * ((row_scores == own).sum(axis=1) - 1)
    n_relevant = relevant.sum(axis=1)
    n_other = relevant.shape[1] - n_relevant
    # pairs between two relevant items are not (relevant, other) pairs: take each such pair out once
    wrong = np.bincount(rows, weights=above, minlength=len(relevant)) - _relevant_pairs_above(scores, relevant)
    pairs = n_relevant * n_other
    return np.divide(wrong, pairs, out=np.full(len(relevant), np.nan), where=pairs > 0)


def _relevant_pairs_above(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Per row, what order_losses counted for pairs of two relevant items: each such pair once in all (one of the
    two sits above the other, or they tie and count half from each side)."""
    n_relevant = relevant.sum(axis=1).astype(np.float64)
    return n_relevant * (n_relevant - 1) / 2
