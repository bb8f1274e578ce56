"""What every CiteULike evaluation shares, whatever the features: the item-cold folds and the cold
validation split (shared/data/citeulike-a/ANCHORS.md), the ranking metrics, and the per-fold summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from recommender.collaborative.datasets import InteractionData
from recommender.collaborative.model import ALSSettings

FOLD_SEED = 20250101
VALIDATION_SEED = 7
VALIDATION_FRACTION = 0.2
CROSS_FIT_PARTS = 3
CUTOFFS = (20, 50, 100, 300)
NDCG_AT = 50


def item_cold_folds(n_items: int, n_folds: int = 5, seed: int = FOLD_SEED) -> list[np.ndarray]:
    """ANCHORS.md step 1: one permutation, consecutive blocks; the last block takes the remainder."""
    order = np.random.default_rng(seed).permutation(n_items)
    size = n_items // n_folds
    return [np.sort(order[f * size : (f + 1) * size if f < n_folds - 1 else n_items]) for f in range(n_folds)]


def validation_items(n_items: int, test_items: np.ndarray, fraction: float = VALIDATION_FRACTION) -> np.ndarray:
    """The cold validation split: a seeded share of the items outside the test fold (which take no part)."""
    train_items = np.setdiff1d(np.arange(n_items), test_items)
    rng = np.random.default_rng(VALIDATION_SEED)
    return np.sort(rng.choice(train_items, size=int(fraction * len(train_items)), replace=False))


def cross_fit_parts(n_items: int) -> np.ndarray:
    """Each training item's part (of CROSS_FIT_PARTS), for maps that must never see the item they predict."""
    return np.random.default_rng(VALIDATION_SEED).integers(0, CROSS_FIT_PARTS, n_items)


def without_items(interactions: sparse.csr_matrix, items: np.ndarray) -> sparse.csr_matrix:
    """The matrix with every save of `items` removed (the columns stay, empty)."""
    keep = np.ones(interactions.shape[1], dtype=np.float32)
    keep[items] = 0.0
    matrix = (interactions @ sparse.diags(keep)).tocsr()
    matrix.eliminate_zeros()
    return matrix


def settings_for(data: InteractionData, settings: ALSSettings | None = None) -> ALSSettings:
    """Unigram features for bag-of-words data (word order is gone), the given settings otherwise."""
    settings = settings or ALSSettings()
    if not data.word_order_kept:
        settings = ALSSettings(**{**settings.__dict__, "ngram_range": (1, 1)})
    return settings


def ranking_metrics(scores: np.ndarray, relevant: np.ndarray, seed: int = 0) -> dict[str, np.ndarray]:
    """Per-user recall@M (no min(M, ·) cap) and nDCG@50 with binary gains; ties broken at random."""
    tie_breaker = np.random.default_rng(seed).random(scores.shape)
    deepest = min(max(CUTOFFS + (NDCG_AT,)), scores.shape[1])
    top = np.lexsort((tie_breaker, -np.asarray(scores, dtype=np.float64)), axis=1)[:, :deepest]
    hits = np.take_along_axis(relevant, top, axis=1)
    found = np.cumsum(hits, axis=1)
    n_relevant = relevant.sum(axis=1)
    metrics = {f"recall@{m}": found[:, min(m, deepest) - 1] / n_relevant for m in CUTOFFS}
    discounts = 1.0 / np.log2(np.arange(2, NDCG_AT + 2))
    dcg = (hits[:, :NDCG_AT] * discounts[: hits[:, :NDCG_AT].shape[1]]).sum(axis=1)
    ideal = np.cumsum(discounts)[np.minimum(n_relevant, NDCG_AT) - 1]
    metrics[f"ndcg@{NDCG_AT}"] = dcg / ideal
    return metrics


def recall50(scores: np.ndarray, relevant: np.ndarray) -> float:
    """Mean recall@50, ties by position: cheaper than ranking_metrics, used only to choose weights on validation."""
    top = np.argpartition(-scores, 50, axis=1)[:, :50]
    return float((np.take_along_axis(relevant, top, axis=1).sum(axis=1) / relevant.sum(axis=1)).mean())


def random_floor(n_candidates: int) -> dict[str, float]:
    """Expected recall@M of a random ranking: M / candidates, whatever the user."""
    return {f"recall@{m}": min(m / n_candidates, 1.0) for m in CUTOFFS}


@dataclass
class FoldResult:
    """One fold: per method, the mean of each metric over the fold's users."""

    fold: int
    users: int
    candidates: int
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    blend_weights: dict[str, float] = field(default_factory=dict)
    svm_sample: dict[str, dict[str, float]] = field(default_factory=dict)
    seconds: float = 0.0
    fine: dict[str, dict[str, float]] = field(default_factory=dict)  # fine.py: nDCG@10, tau among hard candidates
    fine_users: int = 0  # users with a save among their hard candidates (of `users`)


def means(metrics: dict[str, np.ndarray], rows: np.ndarray | slice = slice(None)) -> dict[str, float]:
    """Each metric's mean over the users (or the given rows of them)."""
    return {name: float(np.mean(values[rows])) for name, values in metrics.items()}


def summarise(per_fold: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, list[float]]]:
    """method → metric → [mean, std] over folds (std 0 for a single fold)."""
    summary = {}
    for method in per_fold[0]:
        summary[method] = {
            metric: [float(np.mean(values)), float(np.std(values))]
            for metric in per_fold[0][method]
            for values in [[fold[method][metric] for fold in per_fold]]
        }
    return summary


def sample_users(users: np.ndarray, size: int | None, seed: int = 0) -> np.ndarray:
    """A seeded sample of `size` of these users (all of them when size is None or not smaller), in id order;
    every simulation draws it the same way, so tf-idf and dense runs see the same people."""
    if size and size < len(users):
        return np.sort(np.random.default_rng(seed).choice(users, size=size, replace=False))
    return users
