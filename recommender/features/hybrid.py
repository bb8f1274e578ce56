"""The hybrid representation: dense and tf-idf cosines averaged (the weight chosen on validation)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recommender.features.dense import DenseRepresentation
from recommender.features.tfidf import TfidfRepresentation


class HybridRows:
    """tf-idf rows and dense rows side by side; `a @ b.T` is the weighted sum of both cosines.

    Both parts are unit length, so w·cos_dense + (1-w)·cos_tfidf stays in [-1, 1] and the
    profile aggregation (recommender.scoring.aggregation) works on it unchanged.
    """

    def __init__(self, sparse_rows, dense_rows: np.ndarray, dense_weight: float) -> None:
        self.sparse_rows = sparse_rows
        self.dense_rows = dense_rows
        self.dense_weight = dense_weight

    @property
    def shape(self) -> tuple[int, int]:
        return (self.dense_rows.shape[0], self.sparse_rows.shape[1] + self.dense_rows.shape[1])

    def __getitem__(self, index) -> HybridRows:
        return HybridRows(self.sparse_rows[index], self.dense_rows[index], self.dense_weight)

    @property
    def T(self) -> HybridRows:  # noqa: N802 (numpy's name)
        return HybridRows(self.sparse_rows.T, self.dense_rows.T, self.dense_weight)

    def __matmul__(self, other: HybridRows) -> np.ndarray:
        lexical = self.sparse_rows @ other.sparse_rows
        lexical = lexical.toarray() if hasattr(lexical, "toarray") else np.asarray(lexical)
        semantic = self.dense_rows @ other.dense_rows
        return (self.dense_weight * semantic + (1.0 - self.dense_weight) * lexical).astype(np.float32)


class HybridRepresentation:
    """tf-idf for exact terms (names, acronyms) plus MiniLM for meaning; weights measured in
    docs/evaluation-features.md."""

    name = "hybrid"

    def __init__(self, dense_weight: float = 0.5, dense: DenseRepresentation | None = None,
                 tfidf: TfidfRepresentation | None = None) -> None:
        self.dense_weight = dense_weight
        self.dense = dense or DenseRepresentation()
        self.tfidf = tfidf or TfidfRepresentation()

    def fit(self, corpus_texts: Sequence[str]) -> HybridRepresentation:
        self.tfidf.fit(corpus_texts)
        self.dense.fit(corpus_texts)
        return self

    def transform(self, texts: Sequence[str]) -> HybridRows:
        return HybridRows(self.tfidf.transform(texts), self.dense.transform(texts), self.dense_weight)
