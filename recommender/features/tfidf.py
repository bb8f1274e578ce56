"""Word uni- and bigram tf-idf features (scikit-learn), fitted on the corpus alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.3 s to import; dense features never need it
    from scipy import sparse


class TfidfRepresentation:
    """Word uni- and bigram tf-idf with sublinear tf and English stop words.

    Hashing (rather than a fitted vocabulary) keeps words that appear only in the library:
    they get the highest idf and still count in the library item's length, so a short
    overlap is not inflated to a high cosine.
    """

    name = "tfidf"

    def __init__(self, n_features: int = 1 << 20, ngram_range: tuple[int, int] = (1, 2)) -> None:
        from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer

        self.n_features = n_features
        self.ngram_range = ngram_range
        self._hasher = HashingVectorizer(
            n_features=n_features,
            alternate_sign=False,
            norm=None,
            stop_words="english",
            ngram_range=ngram_range,
            strip_accents="unicode",
            dtype=np.float32,
        )
        self._idf = TfidfTransformer(sublinear_tf=True, norm="l2")

    def fit(self, corpus_texts: Sequence[str]) -> TfidfRepresentation:
        self._idf.fit(self._hasher.transform(corpus_texts))
        return self

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        rows = self._idf.transform(self._hasher.transform(texts))
        return rows.astype(np.float32).tocsr()
