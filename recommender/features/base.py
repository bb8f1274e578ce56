"""The representation interface every feature kind implements, the rows it makes (a dense array, sparse
tf-idf rows, or `HybridRows`: `is_dense`, `dense_part`), and cosine similarity.

Each representation is fitted on the corpus alone, so a user's scores never depend on who else
is scored in the same run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:  # scipy is a slow import that dense features never need
    from scipy import sparse


class Representation(Protocol):
    """A text representation: fit on corpus texts, then map any texts to unit-length rows."""

    name: str

    def fit(self, corpus_texts: Sequence[str]) -> Representation: ...

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix | np.ndarray: ...


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
        lexical = np.asarray(lexical) if isinstance(lexical, np.ndarray) else lexical.toarray()
        semantic = self.dense_rows @ other.dense_rows
        return (self.dense_weight * semantic + (1.0 - self.dense_weight) * lexical).astype(np.float32)


def is_dense(rows) -> bool:
    """Rows of one dense array (MiniLM), as against sparse tf-idf rows or hybrid rows: the one test."""
    return isinstance(rows, np.ndarray)


def dense_part(rows):
    """The dense rows of hybrid rows, else the rows themselves."""
    return rows.dense_rows if isinstance(rows, HybridRows) else rows


def cosine(rows: sparse.csr_matrix | np.ndarray, columns: sparse.csr_matrix | np.ndarray) -> np.ndarray:
    """Dense float32 cosine similarities between two sets of unit-length rows."""
    product = rows @ columns.T
    if not isinstance(product, np.ndarray):  # a scipy sparse result (or a matrix)
        product = product.toarray()
    return np.asarray(product, dtype=np.float32)


def stacked(first, second):
    """`first`'s rows, then `second`'s: two sets of rows of one kind (dense, sparse tf-idf or hybrid)."""
    if isinstance(first, HybridRows):
        return HybridRows(stacked(first.sparse_rows, second.sparse_rows), stacked(first.dense_rows, second.dense_rows),
                          first.dense_weight)
    if is_dense(first):
        return np.vstack([first, second])
    from scipy import sparse

    return sparse.vstack([first, second], format="csr")
