"""Word uni- and bigram tf-idf features, fitted on the corpus alone (the Representation over LexicalIndex)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from recommender.features.lexical import N_FEATURES, NGRAMS, LexicalIndex

if TYPE_CHECKING:  # scipy is a slow import that dense features never need
    from scipy import sparse


class TfidfRepresentation:
    """Word n-gram tf-idf with sublinear tf and English stop words (recommender.features.lexical).

    Hashing (rather than a fitted vocabulary) keeps words that appear only in the library:
    they get the highest idf and still count in the library item's length, so a short
    overlap is not inflated to a high cosine. `idf` restores a fitted one (a saved model's).
    """

    name = "tfidf"

    def __init__(self, n_features: int = N_FEATURES, ngram_range: tuple[int, int] = NGRAMS,
                 idf: np.ndarray | None = None) -> None:
        self.n_features = int(n_features)
        self.ngram_range = tuple(int(n) for n in ngram_range)
        self.index = None if idf is None else LexicalIndex(idf, ngram_range=self.ngram_range)

    def fit(self, corpus_texts: Sequence[str]) -> TfidfRepresentation:
        self.index = LexicalIndex.fit(corpus_texts, n_features=self.n_features, ngram_range=self.ngram_range)
        return self

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        if self.index is None:
            raise ValueError("the tf-idf representation is not fitted: call fit(corpus_texts) first")
        return self.index.transform(texts)

    @property
    def idf(self) -> np.ndarray:
        """One idf per hash bucket (what a collaborative model saves)."""
        if self.index is None:
            raise ValueError("the tf-idf representation is not fitted: call fit(corpus_texts) first")
        return self.index.idf
