"""Texts the dense encoder cannot read (recommender/scripts.py): a library item and a corpus paper of which
either is unread are compared by their tf-idf rows (character pairs for CJK) put on the dense scale, so the
content topK, the reasons and the match mean for them what they mean for two English texts.

A Chinese title's MiniLM row is mostly [UNK]: its cosine to any other Chinese title is about 0.5 whatever the
topic, and its cosine to an English one is noise too (docs/evaluation.md, "Non-English libraries"). The tf-idf
cosine is mapped linearly from the tf-idf match calibration's end points onto the dense ones (match.py): a
tf-idf similarity and its dense stand-in give the same match. Pairs of read texts keep their dense cosine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recommender.features.base import cosine
from recommender.scoring.aggregation import REASONS_KEPT, TopValues, block_values, merge_top_values, top_values
from recommender.scoring.match import CALIBRATIONS
from recommender.scoring.recency import scaled_rows

_BLOCK = 512  # unread items, or papers, per block of similarities (items × papers float32)


def unread_mask(texts) -> np.ndarray:
    """Bool per text: the encoder cannot read it (most of its letters in a script it spells letter by letter)."""
    from recommender.scripts import unread_script

    return np.fromiter((unread_script(text) is not None for text in texts), dtype=bool, count=len(texts))


def on_dense_scale(similarities) -> np.ndarray:
    """tf-idf cosines as the dense cosines of the same match (clipped to [0, 1]), float32."""
    lexical, dense = CALIBRATIONS["tfidf"], CALIBRATIONS["dense"]
    slope = (dense.same_topic - dense.off_topic) / (lexical.same_topic - lexical.off_topic)
    mapped = dense.off_topic + (np.asarray(similarities, dtype=np.float64) - lexical.off_topic) * slope
    return np.clip(mapped, 0.0, 1.0).astype(np.float32)


@dataclass(frozen=True)
class Unread:
    """Which library items (`items`) and corpus papers (`papers`) are unread, with every item's and paper's
    tf-idf rows (scipy CSR): what the mixed similarities are made of."""

    items: np.ndarray
    papers: np.ndarray
    lexical_rows: object
    corpus_lexical: object

    def _lexical(self, items, papers) -> np.ndarray:
        """(items × papers) tf-idf cosines on the dense scale for these item and paper indices."""
        return on_dense_scale((self.lexical_rows[items] @ self.corpus_lexical[papers].T).toarray())

    def similarities(self, rows: np.ndarray, corpus_rows: np.ndarray, papers: np.ndarray) -> np.ndarray:
        """(items × papers) similarities for these paper indices: dense where both texts are read, else tf-idf."""
        papers = np.asarray(papers, dtype=np.int64)
        sims = cosine(rows, corpus_rows[papers])
        every = np.arange(len(self.items))
        unread_items, unread_papers = np.flatnonzero(self.items), np.flatnonzero(self.papers[papers])
        if len(unread_items):
            sims[unread_items] = self._lexical(unread_items, papers)
        if len(unread_papers):
            sims[:, unread_papers] = self._lexical(every, papers[unread_papers])
        return sims

    def values(self, rows: np.ndarray, corpus_rows: np.ndarray, aggregation: str,
               weights: np.ndarray | None = None) -> TopValues:
        """The content topK's values over every paper from the mixed similarities (`weights`: each item's
        recency weight, scaling its similarities): read items' dense top-K merged with unread items' blocks,
        then the unread papers' values made again from their tf-idf similarities to every item."""
        read = ~self.items
        scale = np.ones(len(self.items), dtype=np.float32) if weights is None else np.asarray(weights, np.float32)
        parts = []
        if read.any():
            parts.append(top_values(scaled_rows(rows[read], scale[read]) if weights is not None else rows[read],
                                    corpus_rows, aggregation))
        every_paper = np.arange(len(self.papers))
        unread_items = np.flatnonzero(self.items)
        for first in range(0, len(unread_items), _BLOCK):
            block = unread_items[first:first + _BLOCK]
            parts.append(block_values(self._lexical(block, every_paper) * scale[block, None], aggregation))
        values = parts[0]
        for part in parts[1:]:
            values = merge_top_values(values, part, aggregation)
        unread_papers = np.flatnonzero(self.papers)
        if len(unread_papers):
            again = block_values(self._lexical(np.arange(len(self.items)), unread_papers) * scale[:, None], aggregation)
            values.best[unread_papers] = again.best
            if values.total is not None:
                values.total[unread_papers] = again.total
        return values

    def reasons(self, rows: np.ndarray, corpus_rows: np.ndarray, papers: np.ndarray,
                weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """aggregation.reasons_for's (library rows, similarities) of the chosen papers from the mixed
        similarities, each item's times its `weights` entry when given (evidence.py): the best REASONS_KEPT
        items, best first, the earlier item first among equals."""
        papers = np.asarray(papers, dtype=np.int64)
        shown = min(REASONS_KEPT, len(self.items))
        best_rows = np.zeros((len(papers), shown), dtype=np.int64)
        best_sims = np.zeros((len(papers), shown), dtype=np.float64)
        for first in range(0, len(papers), _BLOCK):
            sims = self.similarities(rows, corpus_rows, papers[first:first + _BLOCK]).T  # (papers, items)
            if weights is not None:
                sims = sims * np.asarray(weights, dtype=sims.dtype)
            order = np.lexsort((np.broadcast_to(np.arange(sims.shape[1]), sims.shape), -sims), axis=1)[:, :shown]
            best_rows[first:first + _BLOCK] = order
            best_sims[first:first + _BLOCK] = np.take_along_axis(sims, order, axis=1)
        return best_rows, best_sims
