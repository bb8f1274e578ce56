"""A user's profile as an aggregation of per-item similarities, plus the items behind each score.

Scoring keeps only values: each paper's K best similarities (a partial sort, no index tracking),
in column chunks sized by a memory budget. Which library items explain a score (the reasons) is
worked out afterwards, only for the papers that are shown. Every similarity is computed so that it is
bit for bit the value the original 2,048-row chunking gave (BLAS rounds a one-column product
differently from a wider one), so scores and reasons never change with the budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from recommender.features.base import cosine

DEFAULT_AGGREGATION = "top5"
AGGREGATIONS = ("max", "mean", "top3", "top5", "top10")
REASONS_KEPT = 3
CHUNK_BUDGET_MB = 32  # the similarity block of one chunk (papers × library rows, float32)
_CHUNK_ROWS = 2048  # the reference chunking: `mean` sums per chunk of this size; one-column rule below
_SPARSE_CHUNK_ITEMS = 4096  # library items per sparse product (tf-idf titles: ~600k shared-word pairs)
_REASON_PAPERS = 512  # papers per block when reasons are worked out for many papers (`-n 0`)
# OpenBLAS rounds a product of few rows, or of few columns, differently from a large one (it picks
# another kernel). Measured here: 256 rows against 64 or more columns, or 32 rows against 256 or more,
# give the large product's bits (tests/test_aggregation_exact.py checks it); smaller products are avoided.
_SAME_BITS_COLUMNS = 64
_SAME_BITS_ROWS = ((256, 256), (64, 32))  # (columns at least, rows needed)


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
    raise ValueError(f"unknown aggregation '{name}' (use max, mean or topK such as top3)")


def kept(aggregation: str, n_items: int) -> int:
    """How many best similarities per paper are kept: K, and at least the reasons shown."""
    return min(max(parse_aggregation(aggregation)[1], REASONS_KEPT), n_items)


def _pieces(start: int, n_items: int, width: int) -> list[tuple[int, int]]:
    """Column ranges covering [start, n_items), each inside one reference chunk, `width` wide at most."""
    pieces = []
    while start < n_items:
        stop = min(start + width, (start // _CHUNK_ROWS + 1) * _CHUNK_ROWS, n_items)
        pieces.append((start, stop))
        start = stop
    return pieces


def _block(corpus_rows, library_rows, start: int, stop: int, n_items: int) -> np.ndarray:
    """cosine(corpus_rows, library_rows[start:stop]) with the reference chunking's bits.

    OpenBLAS rounds a product with few columns differently (another kernel): a narrow piece is
    computed inside a product of at least _SAME_BITS_COLUMNS columns of its reference chunk, or
    over the whole reference chunk when that is narrower.
    """
    chunk_start = start // _CHUNK_ROWS * _CHUNK_ROWS
    chunk_stop = min(chunk_start + _CHUNK_ROWS, n_items)
    if chunk_stop - chunk_start <= _SAME_BITS_COLUMNS:
        first, last = chunk_start, chunk_stop
    else:
        first = max(chunk_start, min(start, stop - _SAME_BITS_COLUMNS))
        last = max(stop, min(chunk_stop, first + _SAME_BITS_COLUMNS))
    sims = cosine(corpus_rows, library_rows[first:last])
    return sims if (first, last) == (start, stop) else np.ascontiguousarray(sims[:, start - first : stop - first])


def _chunk_width(n_papers: int, budget_mb: float) -> int:
    return max(_SAME_BITS_COLUMNS, int(budget_mb * 2**20) // (4 * max(n_papers, 1)))


def top_values(library_rows, corpus_rows, aggregation: str = DEFAULT_AGGREGATION, *,
               budget_mb: float = CHUNK_BUDGET_MB, previous: TopValues | None = None) -> TopValues:
    """Each paper's best similarities to the library rows (and their sum for `mean`).

    With `previous` (the values for the first `previous.n_items` rows of `library_rows`), only the
    rows after those are scored and merged in: the result is exactly that of a full run.
    """
    kind, _ = parse_aggregation(aggregation)
    n_items, n_papers = library_rows.shape[0], corpus_rows.shape[0]
    keep = kept(aggregation, n_items)
    start, best, total = 0, None, None
    if previous is not None and previous.best.shape[1] == keep and kind != "mean":
        start, best = previous.n_items, previous.best
    if kind == "mean":  # the float32 sums depend on the chunk: keep the reference chunks
        total = np.zeros(n_papers, dtype=np.float64)
        pieces = [(s, min(s + _CHUNK_ROWS, n_items)) for s in range(0, n_items, _CHUNK_ROWS)]
    else:
        pieces = _pieces(start, n_items, _chunk_width(n_papers, budget_mb))
    for first, stop in pieces:
        sims = _block(corpus_rows, library_rows, first, stop, n_items)  # (papers, columns), C order
        if total is not None:
            total += sims.sum(axis=1)
            continue  # a mean needs no best values; its reasons are found afterwards
        if sims.shape[1] > keep:
            sims.partition(sims.shape[1] - keep, axis=1)
            sims = sims[:, -keep:]
        if best is not None:
            sims = np.concatenate([best, sims], axis=1)
            sims.partition(sims.shape[1] - keep, axis=1)
            sims = sims[:, -keep:]
        best = np.ascontiguousarray(sims)
    if best is None:
        best = np.zeros((n_papers, 0), dtype=np.float32)
    best = np.ascontiguousarray(np.sort(best, axis=1)[:, ::-1])
    return TopValues(best=best, total=total, n_items=n_items)


def sparse_top_values(library_rows, corpus_rows, aggregation: str = DEFAULT_AGGREGATION) -> TopValues:
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
    both = np.concatenate([previous.best, new.best], axis=1)
    keep = kept(aggregation, n_items)
    best = np.ascontiguousarray(np.sort(both, axis=1)[:, ::-1][:, :keep])
    return TopValues(best=best, total=None, n_items=n_items)


def reasons_for(library_rows, corpus_rows, papers: np.ndarray, aggregation: str = DEFAULT_AGGREGATION
                ) -> tuple[np.ndarray, np.ndarray]:
    """(library rows, similarities) of the best-matching items of the chosen papers, best first.

    Ties between equal similarities are broken exactly as the original full aggregation broke them:
    the same chunks, the same partial sort, on the chosen papers' rows only.
    """
    papers = np.asarray(papers, dtype=np.int64)
    n_items = library_rows.shape[0]
    shown = min(REASONS_KEPT, n_items)
    rows = np.zeros((len(papers), shown), dtype=np.int64)
    sims = np.zeros((len(papers), shown), dtype=np.float64)
    for first in range(0, len(papers), _REASON_PAPERS):
        block = papers[first : first + _REASON_PAPERS]
        found_rows, found_sims = _replay(library_rows, corpus_rows, block, kept(aggregation, n_items))
        rows[first : first + len(block)] = found_rows[:, :shown]
        sims[first : first + len(block)] = found_sims[:, :shown]
    return rows, sims


def _rows_needed(columns: int) -> int | None:
    """How many corpus rows a product with this many library columns needs to round like the whole
    corpus's; None: only the whole corpus will do."""
    return next((rows for least, rows in _SAME_BITS_ROWS if columns >= least), None)


def _selection(corpus_rows, papers: np.ndarray, rows: int | None):
    """The chosen papers' rows, padded with other papers to `rows`; None for the whole corpus."""
    n_papers = corpus_rows.shape[0]
    if rows is None or n_papers <= 2 * max(rows, len(papers)):
        return None
    padding = np.setdiff1d(np.arange(rows + len(papers)), papers)[: max(0, rows - len(papers))]
    return corpus_rows[np.concatenate([papers, padding])]


def _replay(library_rows, corpus_rows, papers: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    n_items = library_rows.shape[0]
    selections = {}
    best_sims = np.full((len(papers), keep), -np.inf, dtype=np.float32)
    best_rows = np.zeros((len(papers), keep), dtype=np.int64)
    for start in range(0, n_items, _CHUNK_ROWS):
        chunk = library_rows[start : min(start + _CHUNK_ROWS, n_items)]
        needed = _rows_needed(chunk.shape[0])
        if needed not in selections:
            selections[needed] = _selection(corpus_rows, papers, needed)
        selected = selections[needed]
        if selected is None:
            sims = cosine(corpus_rows, chunk)[papers]
        else:
            sims = cosine(selected, chunk)[: len(papers)]
        candidates = np.concatenate([best_sims, sims], axis=1)
        top = np.argpartition(-candidates, keep - 1, axis=1)[:, :keep]
        earlier = np.take_along_axis(best_rows, np.minimum(top, keep - 1), axis=1)
        best_rows = np.where(top < keep, earlier, start + top - keep)
        best_sims = np.take_along_axis(candidates, top, axis=1)
    order = np.argsort(-best_sims, axis=1, kind="stable")
    return np.take_along_axis(best_rows, order, axis=1), np.take_along_axis(best_sims, order, axis=1).astype(
        np.float64)


def aggregate(library_rows, corpus_rows, aggregation: str = DEFAULT_AGGREGATION, *,
              budget_mb: float = CHUNK_BUDGET_MB) -> ProfileScores:
    """Score every corpus row against the library rows, with the reasons of every paper.

    `topK` is the mean of the K highest similarities (fewer when the library is smaller):
    one close paper counts, but several close papers count more than one.
    """
    values = top_values(library_rows, corpus_rows, aggregation, budget_mb=budget_mb)
    rows, sims = reasons_for(library_rows, corpus_rows, np.arange(corpus_rows.shape[0]), aggregation)
    return ProfileScores(scores=values.scores(aggregation), reason_rows=rows, reason_similarities=sims)
