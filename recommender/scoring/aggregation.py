"""A user's profile as an aggregation of per-item similarities, plus the items behind each score.

Scoring keeps only values: each paper's K best similarities (a partial sort, no index tracking),
in column chunks sized by a memory budget. Which library items explain a score (the reasons) is
worked out afterwards, only for the papers that are shown.
"""

from __future__ import annotations

from recommender.errors import SettingError
import re
from dataclasses import dataclass

import numpy as np

from recommender.features.base import cosine

TOP5 = "top5"  # the topK inside the fused scoring (fusion.LEARNED_BASE), these functions' default
AGGREGATIONS = ("max", "mean", "top3", "top5", "top10")
REASONS_KEPT = 3
CHUNK_BUDGET_MB = 32  # the similarity block of one chunk (papers × library rows, float32)
_SPARSE_CHUNK_ITEMS = 4096  # library items per sparse product (tf-idf titles: ~600k shared-word pairs)
_REASON_PAPERS = 512  # papers per block when reasons are worked out for many papers (`-n 0`)


@dataclass
class ProfileScores:
    """Per corpus paper: the aggregated score and the best-matching library rows (best first)."""

    scores: np.ndarray  # (papers,)
    reason_rows: np.ndarray  # (papers, k) library row indices
    reason_similarities: np.ndarray  # (papers, k)


@dataclass
class TopValues:
    """Per corpus paper: the `keep` highest similarities (descending, float32) and, for `mean`, their sum.

    This is all a score needs, and all an incremental re-run keeps: new items only merge into it.
    """

    best: np.ndarray  # (papers, keep) float32, each row descending
    total: np.ndarray | None  # (papers,) float64 sum of all similarities (mean only)
    n_items: int

    def scores(self, aggregation: str) -> np.ndarray:
        kind, k = parse_aggregation(aggregation)
        if kind == "mean":
            return (self.total / self.n_items).astype(np.float64)
        return self.best[:, : min(k, self.n_items)].mean(axis=1).astype(np.float64)


def parse_aggregation(name: str) -> tuple[str, int]:
    """'max' → ('top', 1); 'mean' → ('mean', 0); 'top5' → ('top', 5)."""
    if name == "max":
        return "top", 1
    if name == "mean":
        return "mean", 0
    match = re.fullmatch(r"top(\d+)", name)
    if match and int(match.group(1)) > 0:
        return "top", int(match.group(1))
    raise SettingError(f"unknown aggregation '{name}' (use max, mean or topK such as top3)")


def kept(aggregation: str, n_items: int) -> int:
    """How many best similarities per paper are kept: K, and at least the reasons shown."""
    return min(max(parse_aggregation(aggregation)[1], REASONS_KEPT), n_items)


def _chunk_width(n_papers: int, budget_mb: float, bytes_per_pair: int = 4) -> int:
    """Library columns per chunk: a (papers × columns) block within the budget."""
    return max(1, int(budget_mb * 2**20) // (bytes_per_pair * max(n_papers, 1)))


def _keep_largest(values: np.ndarray, keep: int) -> np.ndarray:
    """The `keep` largest values of each row, in no particular order (a partial sort, in place)."""
    if values.shape[1] <= keep:
        return values
    values.partition(values.shape[1] - keep, axis=1)
    return values[:, -keep:]


def top_values(library_rows, corpus_rows, aggregation: str = TOP5, *,
               budget_mb: float = CHUNK_BUDGET_MB, previous: TopValues | None = None) -> TopValues:
    """Each paper's best similarities to the library rows (and their sum for `mean`).

    With `previous` (the values for the first `previous.n_items` rows of `library_rows`), only the
    rows after those are scored and merged in: the K best of all are among each part's K best.
    """
    kind, _ = parse_aggregation(aggregation)
    n_items, n_papers = library_rows.shape[0], corpus_rows.shape[0]
    keep = kept(aggregation, n_items)
    start, best = 0, np.zeros((n_papers, 0), dtype=np.float32)
    total = np.zeros(n_papers, dtype=np.float64) if kind == "mean" else None
    if previous is not None and previous.best.shape[1] == keep and kind != "mean":
        start, best = previous.n_items, previous.best
    width = _chunk_width(n_papers, budget_mb)
    for first in range(start, n_items, width):
        sims = cosine(corpus_rows, library_rows[first : first + width])  # (papers, columns)
        if total is not None:
            total += sims.sum(axis=1)  # a mean needs no best values; its reasons are found afterwards
        else:
            best = _keep_largest(np.concatenate([best, _keep_largest(sims, keep)], axis=1), keep)
        del sims  # freed before the next block is made
    best = np.ascontiguousarray(np.sort(best, axis=1)[:, ::-1])
    return TopValues(best=best, total=total, n_items=n_items)


def block_values(similarities: np.ndarray, aggregation: str = TOP5) -> TopValues:
    """top_values from a precomputed (library items × papers) similarity block, as the evaluation's splits
    hold them: the same values kept the same way, so a score made from them is `scores`' own."""
    kind, _ = parse_aggregation(aggregation)
    n_items = similarities.shape[0]
    sims = np.array(similarities.T, dtype=np.float32)  # (papers, items), a copy partitioned in place
    if kind == "mean":
        total = np.zeros(sims.shape[0], dtype=np.float64)
        total += sims.sum(axis=1)
        return TopValues(best=np.zeros((sims.shape[0], 0), dtype=np.float32), total=total, n_items=n_items)
    best = np.ascontiguousarray(np.sort(_keep_largest(sims, kept(aggregation, n_items)), axis=1)[:, ::-1])
    return TopValues(best=best, total=None, n_items=n_items)


def sparse_top_values(library_rows, corpus_rows, aggregation: str = TOP5) -> TopValues:
    """top_values for non-negative sparse rows (tf-idf), from one sparse product: only the pairs that
    share a word are ever materialised, and one integer sort ranks each paper's similarities.

    The values are top_values' bit for bit: scipy accumulates each similarity in the same order
    whatever the column chunk, and the ranking sort works on the float32 bit patterns, whose integer
    order is the float order for non-negative values. `mean` and negative entries go to top_values.
    """
    kind, _ = parse_aggregation(aggregation)
    n_items, n_papers = library_rows.shape[0], corpus_rows.shape[0]
    if kind == "mean" or not n_items or min(library_rows.data.min(initial=0), corpus_rows.data.min(initial=0)) < 0:
        return top_values(library_rows, corpus_rows, aggregation)
    if n_items > _SPARSE_CHUNK_ITEMS:  # bounded memory: blocks of items, merged exactly
        values = None
        for start in range(0, n_items, _SPARSE_CHUNK_ITEMS):
            block = sparse_top_values(library_rows[start : start + _SPARSE_CHUNK_ITEMS], corpus_rows, aggregation)
            values = block if values is None else merge_top_values(values, block, aggregation)
        return values
    keep = kept(aggregation, n_items)
    sims = (corpus_rows @ library_rows.T).tocsr()  # (papers, items), no duplicate entries
    lengths = np.diff(sims.indptr)
    paper = np.repeat(np.arange(n_papers, dtype=np.int64), lengths)
    bits = np.asarray(sims.data, dtype=np.float32).view(np.int32).astype(np.int64)
    keys = np.sort((paper << 31) | (0x7FFFFFFF - bits))  # by paper, then by similarity, descending
    place = np.arange(len(keys)) - np.repeat(sims.indptr[:-1].astype(np.int64), lengths)
    chosen = place < keep
    best = np.zeros((n_papers, keep), dtype=np.float32)  # fewer than `keep` shared words: zeros, as dense
    values = (0x7FFFFFFF - (keys[chosen] & 0x7FFFFFFF)).astype(np.int32).view(np.float32)
    best[keys[chosen] >> 31, place[chosen]] = values
    return TopValues(best=best, total=None, n_items=n_items)


def merge_top_values(previous: TopValues, new: TopValues | None, aggregation: str) -> TopValues:
    """The values of previous.n_items + new.n_items items from each part's own (top-K values only):
    the K best of the union are among each part's K best, so the result is a full run's."""
    if new is None or not new.n_items:
        return previous
    n_items = previous.n_items + new.n_items
    if previous.total is not None and new.total is not None:  # `mean`: the sums add up
        return TopValues(best=previous.best[:, :0], total=previous.total + new.total, n_items=n_items)
    both = np.concatenate([previous.best, new.best], axis=1)
    keep = kept(aggregation, n_items)
    best = np.ascontiguousarray(np.sort(both, axis=1)[:, ::-1][:, :keep])
    return TopValues(best=best, total=None, n_items=n_items)


def reasons_for(library_rows, corpus_rows, papers: np.ndarray, aggregation: str = TOP5, *,
                budget_mb: float = CHUNK_BUDGET_MB) -> tuple[np.ndarray, np.ndarray]:
    """(library rows, similarities) of the best-matching items of the chosen papers, best first (the
    earlier row first among equal similarities; which of the items tied with the last one shown is
    named is not defined). Only the chosen papers' similarities are computed.

    The reasons are the same under every aggregation; `aggregation` is accepted for the callers.
    """
    papers = np.asarray(papers, dtype=np.int64)
    shown = min(REASONS_KEPT, library_rows.shape[0])
    rows = np.zeros((len(papers), shown), dtype=np.int64)
    sims = np.zeros((len(papers), shown), dtype=np.float64)
    for first in range(0, len(papers), _REASON_PAPERS):
        block = slice(first, first + _REASON_PAPERS)
        rows[block], sims[block] = _best_rows(library_rows, corpus_rows[papers[block]], shown, budget_mb)
    return rows, sims


def _best_rows(library_rows, paper_rows, shown: int, budget_mb: float) -> tuple[np.ndarray, np.ndarray]:
    """Each paper row's `shown` most similar library rows and their similarities, best first."""
    best_rows = np.zeros((paper_rows.shape[0], 0), dtype=np.int64)
    best_sims = np.zeros((paper_rows.shape[0], 0), dtype=np.float32)
    width = _chunk_width(paper_rows.shape[0], budget_mb, 12)  # float32 similarities, argpartition's int64 indices
    for first in range(0, library_rows.shape[0], width):
        sims = cosine(paper_rows, library_rows[first : first + width])
        columns = _largest(sims, shown)
        best_rows = np.concatenate([best_rows, first + columns], axis=1)
        best_sims = np.concatenate([best_sims, np.take_along_axis(sims, columns, axis=1)], axis=1)
        del sims, columns  # freed before the next block is made
        chosen = _largest(best_sims, shown)
        best_rows = np.take_along_axis(best_rows, chosen, axis=1)
        best_sims = np.take_along_axis(best_sims, chosen, axis=1)
    order = np.lexsort((best_rows, -best_sims), axis=1)  # by similarity, descending, then by row
    best_sims = np.take_along_axis(best_sims, order, axis=1).astype(np.float64)
    return np.take_along_axis(best_rows, order, axis=1), best_sims


def _largest(values: np.ndarray, keep: int) -> np.ndarray:
    """The column indices of each row's `keep` largest values, in no particular order."""
    if values.shape[1] <= keep:
        return np.broadcast_to(np.arange(values.shape[1]), values.shape)
    return np.argpartition(values, values.shape[1] - keep, axis=1)[:, -keep:]


def aggregate(library_rows, corpus_rows, aggregation: str = TOP5, *,
              budget_mb: float = CHUNK_BUDGET_MB) -> ProfileScores:
    """Score every corpus row against the library rows, with the reasons of every paper.

    `topK` is the mean of the K highest similarities (fewer when the library is smaller):
    one close paper counts, but several close papers count more than one.
    """
    values = top_values(library_rows, corpus_rows, aggregation, budget_mb=budget_mb)
    rows, sims = reasons_for(library_rows, corpus_rows, np.arange(corpus_rows.shape[0]), budget_mb=budget_mb)
    return ProfileScores(scores=values.scores(aggregation), reason_rows=rows, reason_similarities=sims)
