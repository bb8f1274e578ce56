"""A user's profile as an aggregation of per-item similarities, plus the items behind each score."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from recommender.features.base import cosine

DEFAULT_AGGREGATION = "top5"
AGGREGATIONS = ("max", "mean", "top3", "top5", "top10")
REASONS_KEPT = 3
_CHUNK_ROWS = 2048


@dataclass
class ProfileScores:
    """Per corpus paper: the aggregated score and the best-matching library rows (best first)."""

    scores: np.ndarray  # (papers,)
    reason_rows: np.ndarray  # (papers, k) library row indices
    reason_similarities: np.ndarray  # (papers, k)


def parse_aggregation(name: str) -> tuple[str, int]:
    """'max' → ('top', 1); 'mean' → ('mean', 0); 'top5' → ('top', 5)."""
    if name == "max":
        return "top", 1
    if name == "mean":
        return "mean", 0
    match = re.fullmatch(r"top(\d+)", name)
    if match and int(match.group(1)) > 0:
        return "top", int(match.group(1))
    raise ValueError(f"unknown aggregation '{name}' (use max, mean or topK such as top3)")


def aggregate(library_rows, corpus_rows, aggregation: str = DEFAULT_AGGREGATION) -> ProfileScores:
    """Score every corpus row against the library rows, in chunks so memory stays bounded.

    `topK` is the mean of the K highest similarities (fewer when the library is smaller):
    one close paper counts, but several close papers count more than one.
    """
    kind, k = parse_aggregation(aggregation)
    n_items = library_rows.shape[0]
    n_papers = corpus_rows.shape[0]
    keep = min(max(k, REASONS_KEPT), n_items)
    # Paper-major layout: each paper's candidates are one contiguous row, which makes the
    # partial sort along that row several times faster than across rows.
    best_sims = np.full((n_papers, keep), -np.inf, dtype=np.float32)
    best_rows = np.zeros((n_papers, keep), dtype=np.int64)
    total = np.zeros(n_papers, dtype=np.float64)
    for start in range(0, n_items, _CHUNK_ROWS):
        sims = cosine(corpus_rows, library_rows[start : start + _CHUNK_ROWS])  # (papers, chunk)
        total += sims.sum(axis=1)
        candidates = np.concatenate([best_sims, sims], axis=1)
        top = np.argpartition(-candidates, keep - 1, axis=1)[:, :keep]
        earlier = np.take_along_axis(best_rows, np.minimum(top, keep - 1), axis=1)
        best_rows = np.where(top < keep, earlier, start + top - keep)
        best_sims = np.take_along_axis(candidates, top, axis=1)
    order = np.argsort(-best_sims, axis=1, kind="stable")
    best_sims = np.take_along_axis(best_sims, order, axis=1)
    best_rows = np.take_along_axis(best_rows, order, axis=1)
    if kind == "mean":
        scores = total / n_items
    else:
        scores = best_sims[:, : min(k, n_items)].mean(axis=1)
    shown = min(REASONS_KEPT, n_items)
    return ProfileScores(
        scores=scores.astype(np.float64),
        reason_rows=best_rows[:, :shown],
        reason_similarities=best_sims[:, :shown].astype(np.float64),
    )
