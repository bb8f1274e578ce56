"""A user's profile as an aggregation of per-item similarities, plus the items behind each score."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .features import cosine

DEFAULT_AGGREGATION = "top5"
AGGREGATIONS = ("max", "mean", "top3", "top5", "top10")
REASONS_KEPT = 3
_CHUNK_ROWS = 1024


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
    best_sims = np.full((keep, n_papers), -np.inf, dtype=np.float32)
    best_rows = np.zeros((keep, n_papers), dtype=np.int64)
    total = np.zeros(n_papers, dtype=np.float64)
    for start in range(0, n_items, _CHUNK_ROWS):
        sims = cosine(library_rows[start : start + _CHUNK_ROWS], corpus_rows)
        total += sims.sum(axis=0)
        rows = np.arange(start, start + sims.shape[0])[:, None].repeat(n_papers, axis=1)
        all_sims = np.vstack([best_sims, sims])
        all_rows = np.vstack([best_rows, rows])
        top = np.argpartition(-all_sims, keep - 1, axis=0)[:keep] if all_sims.shape[0] > keep else None
        if top is not None:
            best_sims = np.take_along_axis(all_sims, top, axis=0)
            best_rows = np.take_along_axis(all_rows, top, axis=0)
        else:
            best_sims, best_rows = all_sims, all_rows
    order = np.argsort(-best_sims, axis=0, kind="stable")
    best_sims = np.take_along_axis(best_sims, order, axis=0)
    best_rows = np.take_along_axis(best_rows, order, axis=0)
    if kind == "mean":
        scores = total / n_items
    else:
        scores = best_sims[: min(k, n_items)].mean(axis=0)
    shown = min(REASONS_KEPT, n_items)
    return ProfileScores(
        scores=scores.astype(np.float64),
        reason_rows=best_rows[:shown].T,
        reason_similarities=best_sims[:shown].T.astype(np.float64),
    )
