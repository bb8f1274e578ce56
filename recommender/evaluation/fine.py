"""The fine-ranking benchmark: how well a rule orders papers that are all near the user's interests.

The coarse protocol (folds.py) asks whether a user's saves are found among all held-out items; here
each user gets only the held-out items nearest to their profile (hard candidates), and a rule is
judged on its order among those alone: nDCG@10 and Kendall's tau-b against the 0/1 saves.

Nearness is rule-neutral: the cosine of an item's vector to the mean of the user's training items'
vectors (the normalised mean profile), a measure no rule compared here ranks by.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import kendalltau

HARD_CANDIDATES = 100  # per user: the held-out items nearest to the profile
FINE_AT = 10  # nDCG's cutoff among them


def unit_rows(rows: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (a zero row stays zero)."""
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def profile_nearness(train_vectors: np.ndarray, positions: list[np.ndarray], test_vectors: np.ndarray) -> np.ndarray:
    """(users × test items): cosine of each test item to the mean of the user's training items' unit vectors."""
    train, test = unit_rows(train_vectors), unit_rows(test_vectors)
    profiles = unit_rows(np.vstack([train[p].mean(axis=0) for p in positions]))
    return profiles @ test.T


def nearest_items(nearness: np.ndarray, size: int = HARD_CANDIDATES) -> np.ndarray:
    """(users × size) column indices of each row's `size` largest values, nearest first (ties: lower index)."""
    size = min(size, nearness.shape[1])
    order = np.lexsort((np.broadcast_to(np.arange(nearness.shape[1]), nearness.shape), -nearness), axis=1)
    return order[:, :size]


@dataclass(frozen=True)
class HardCandidates:
    """The benchmark's users and their candidates.

    rows : the kept users, as rows of the fold's users (those with at least one save among their candidates).
    columns : (kept users × size) the candidates, as columns of the fold's held-out items, nearest first.
    relevant : (kept users × size) whether the user saved each candidate.
    considered : how many users had candidates at all (the kept ones are a part of them).
    """

    rows: np.ndarray
    columns: np.ndarray
    relevant: np.ndarray
    considered: int

    def on_candidates(self, scores: np.ndarray) -> np.ndarray:
        """A (fold users × held-out items) score matrix cut to the kept users' candidates."""
        return np.take_along_axis(np.asarray(scores)[self.rows], self.columns, axis=1)


def hard_candidates(nearness: np.ndarray, relevant: np.ndarray, size: int = HARD_CANDIDATES) -> HardCandidates:
    """Each user's `size` nearest held-out items; users without a save among them are left out."""
    columns = nearest_items(nearness, size)
    saved = np.take_along_axis(np.asarray(relevant, dtype=bool), columns, axis=1)
    rows = np.flatnonzero(saved.any(axis=1))
    return HardCandidates(rows=rows, columns=columns[rows], relevant=saved[rows], considered=len(columns))


def ndcg_at(scores: np.ndarray, relevant: np.ndarray, k: int = FINE_AT, seed: int = 0) -> np.ndarray:
    """Per row, nDCG@k with binary gains (ideal: min(saves, k) hits on top); ties broken at random."""
    scores = np.asarray(scores, dtype=np.float64)
    relevant = np.asarray(relevant, dtype=bool)
    k = min(k, scores.shape[1])
    tie_breaker = np.random.default_rng(seed).random(scores.shape)
    top = np.lexsort((tie_breaker, -scores), axis=1)[:, :k]
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = (np.take_along_axis(relevant, top, axis=1) * discounts).sum(axis=1)
    n_relevant = relevant.sum(axis=1)
    ideal = np.cumsum(discounts)[np.clip(np.minimum(n_relevant, k) - 1, 0, None)]
    return np.divide(dcg, ideal, out=np.zeros_like(dcg), where=n_relevant > 0)


def kendall_taus(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Per row, scipy's Kendall tau-b between the scores and the 0/1 saves (NaN where undefined: constant scores
    or every candidate saved)."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(relevant, dtype=np.float64)
    taus = np.full(len(scores), np.nan)
    for row in range(len(scores)):
        if 0 < labels[row].sum() < labels.shape[1] and np.ptp(scores[row]) > 0:
            taus[row] = kendalltau(scores[row], labels[row]).statistic
    return taus


def fine_metrics(scores: np.ndarray, relevant: np.ndarray, seed: int = 0, tau: bool = True) -> dict[str, np.ndarray]:
    """Per user, on scores already cut to the candidates: nDCG@10 and (with `tau`) Kendall's tau-b."""
    metrics = {f"ndcg@{FINE_AT}": ndcg_at(scores, relevant, FINE_AT, seed)}
    if tau:
        metrics["tau"] = kendall_taus(scores, relevant)
    return metrics


def fine_means(metrics: dict[str, np.ndarray]) -> dict[str, float]:
    """Each metric's mean over the users where it is defined."""
    return {name: float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
            for name, values in metrics.items()}
