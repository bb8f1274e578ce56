"""The fused score's lexical signal at run time: tf-idf rows equal to TfidfRepresentation's
(scikit-learn's HashingVectorizer + TfidfTransformer), without importing scikit-learn.

Importing scikit-learn costs 0.6-0.9 s of CPU (it pulls in scipy.stats), more than the whole content
score of a 10,000-item library. The same analyzer (lower case, accents stripped, `\\w\\w+` tokens,
English stop words, uni- and bigrams), MurmurHash3 (mmh3, the hash scikit-learn uses) and the same
float32 arithmetic give the same rows, array for array (tests/test_lexical.py checks it on real
titles and abstracts). The corpus side (idf, corpus rows, the stop words, which come from
scikit-learn once) is stored in the prepared-corpus cache, so a warm run never fits anything.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

N_FEATURES = 1 << 20  # TfidfRepresentation's defaults
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_INT_MIN = -(1 << 31)


def sklearn_stop_words() -> list[str]:
    """scikit-learn's English stop words (imported only when a corpus side is built)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS)


def _strip_accents(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def analyze(text: str, stop_words: frozenset[str]) -> list[str]:
    """The analyzer of HashingVectorizer(stop_words="english", ngram_range=(1, 2), strip_accents="unicode")."""
    tokens = [word for word in _TOKEN.findall(_strip_accents(text.lower())) if word not in stop_words]
    return tokens + [f"{a} {b}" for a, b in pairwise(tokens)]


def _bucket(token: str, hash32) -> int:
    value = hash32(token, 0, True)
    if value == _INT_MIN:  # scikit-learn's rule for abs(-2**31)
        return (2147483647 - (N_FEATURES - 1)) % N_FEATURES
    return abs(value) % N_FEATURES


def hashed_counts(texts: Sequence[str], stop_words: frozenset[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counts float32, bucket indices int32, indptr int32) per text, indices sorted within a row, as
    HashingVectorizer(norm=None, alternate_sign=False) after sum_duplicates."""
    import mmh3

    hash32, cache = mmh3.hash, {}
    buckets, lengths = [], np.zeros(len(texts), dtype=np.int64)
    for row, text in enumerate(texts):
        tokens = analyze(text, stop_words)
        lengths[row] = len(tokens)
        for token in tokens:
            bucket = cache.get(token)
            if bucket is None:
                bucket = cache[token] = _bucket(token, hash32)
            buckets.append(bucket)
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    keys, counts = np.unique(rows * N_FEATURES + np.asarray(buckets, dtype=np.int64), return_counts=True)
    indptr = np.zeros(len(texts) + 1, dtype=np.int32)
    np.cumsum(np.bincount(keys // N_FEATURES, minlength=len(texts)), out=indptr[1:])
    return counts.astype(np.float32), (keys % N_FEATURES).astype(np.int32), indptr


def _row_norms(squares: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Per-row sums of float32 squares, added one by one in float64 as scikit-learn's l2 loop adds
    them (numpy's own sums are pairwise: other roundings)."""
    lengths, starts = np.diff(indptr), indptr[:-1]
    total = np.zeros(len(lengths), dtype=np.float64)
    for position in range(int(lengths.max(initial=0))):
        rows = np.flatnonzero(lengths > position)
        total[rows] += squares[starts[rows] + position]
    return np.sqrt(total)


class LexicalIndex:
    """idf over 2**20 hash buckets (sublinear tf, smooth idf, l2 rows), fitted on corpus texts."""

    def __init__(self, idf: np.ndarray, stop_words: Sequence[str]) -> None:
        self.idf = np.asarray(idf, dtype=np.float32)
        self.stop_words = frozenset(stop_words)

    @classmethod
    def fit(cls, corpus_texts: Sequence[str], stop_words: Sequence[str] | None = None) -> LexicalIndex:
        stop_words = sklearn_stop_words() if stop_words is None else stop_words
        _, indices, _ = hashed_counts(corpus_texts, frozenset(stop_words))
        df = np.bincount(indices, minlength=N_FEATURES).astype(np.float32) + np.float32(1.0)
        idf = np.full_like(df, len(corpus_texts) + 1, dtype=np.float32) / df
        np.log(idf, out=idf)
        idf += np.float32(1.0)
        return cls(idf, stop_words)

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """Unit-length tf-idf rows (float32 CSR), as TfidfRepresentation.transform gives them."""
        from scipy import sparse

        counts, indices, indptr = hashed_counts(texts, self.stop_words)
        np.log(counts, out=counts)
        counts += np.float32(1.0)
        counts *= self.idf[indices]
        norms = _row_norms(counts * counts, indptr)
        per_entry = np.repeat(norms, np.diff(indptr))
        nonzero = per_entry != 0.0
        counts[nonzero] = (counts[nonzero].astype(np.float64) / per_entry[nonzero]).astype(np.float32)
        return sparse.csr_matrix((counts, indices, indptr), shape=(len(texts), N_FEATURES))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The idf of the buckets the corpus uses (the rest share one value), for np.savez."""
        default = self.idf.max()  # the idf of a bucket no corpus text uses
        used = np.flatnonzero(self.idf != default).astype(np.int32)
        return {"idf_buckets": used, "idf_values": self.idf[used], "idf_default": np.array(default)}

    @classmethod
    def from_arrays(cls, arrays, stop_words: Sequence[str]) -> LexicalIndex:
        idf = np.full(N_FEATURES, arrays["idf_default"], dtype=np.float32)
        idf[arrays["idf_buckets"]] = arrays["idf_values"]
        return cls(idf, stop_words)
