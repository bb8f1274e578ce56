"""The hybrid representation: dense and tf-idf cosines averaged (the weight chosen on validation)."""

from __future__ import annotations

from collections.abc import Sequence

from recommender.features.base import HybridRows
from recommender.features.dense import DenseRepresentation
from recommender.features.tfidf import TfidfRepresentation


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
