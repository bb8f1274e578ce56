"""The representation interface every feature kind implements, and cosine similarity.

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


def cosine(rows: sparse.csr_matrix | np.ndarray, columns: sparse.csr_matrix | np.ndarray) -> np.ndarray:
    """Dense float32 cosine similarities between two sets of unit-length rows."""
    product = rows @ columns.T
    if hasattr(product, "toarray"):  # a scipy sparse result
        product = product.toarray()
    return np.asarray(product, dtype=np.float32)
