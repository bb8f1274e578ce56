"""ALS on who-saved-what (`fit_als`, `confidence`, `ALSSettings`), shared by the dense model and the
evaluation's tf-idf peer (whose text map's rows are recommender.features.tfidf's).
"""

from __future__ import annotations

from recommender.errors import SettingError
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy costs 0.4 s to import; a run that only loads a model never needs it
    from scipy import sparse

log = logging.getLogger(__name__)

WEIGHTINGS = ("binary", "bm25", "log")


@dataclass
class ALSSettings:
    """ALS and text-map settings (defaults chosen on citeulike-a fold-0 validation, docs/evaluation.md).

    weighting : how a save becomes a confidence: "binary" (1 + alpha), "bm25" (implicit's
        bm25_weight, which discounts very popular items and very heavy users, times alpha), or
        "log" (1 + alpha·log(1 + r), identical to binary for 0/1 data).
    map_regularization : the ridge penalty of the text → item-factor map.
    ngram_range : word n-grams of the tf-idf features ((1, 1) for bag-of-words data).
    """

    factors: int = 128
    regularization: float = 0.05
    alpha: float = 10.0
    iterations: int = 15
    weighting: str = "bm25"
    map_regularization: float = 1.0
    n_features: int = 1 << 20
    ngram_range: tuple[int, int] = (1, 2)
    random_state: int = 0

    def __post_init__(self) -> None:
        self.ngram_range = tuple(int(n) for n in self.ngram_range)
        if self.weighting not in WEIGHTINGS:
            raise SettingError(f"unknown weighting '{self.weighting}' (choose from {', '.join(WEIGHTINGS)})")


def confidence(interactions: sparse.csr_matrix, settings: ALSSettings) -> sparse.csr_matrix:
    """The user × item confidence matrix ALS is fitted on (implicit adds the 1 itself)."""
    matrix = interactions.tocsr().astype(np.float32)
    if settings.weighting == "bm25":
        from implicit.nearest_neighbours import bm25_weight

        matrix = bm25_weight(matrix, K1=100, B=0.8).tocsr().astype(np.float32)
    elif settings.weighting == "log":
        matrix.data = np.log1p(matrix.data)
    matrix.data *= settings.alpha
    return matrix


def fit_als(interactions: sparse.csr_matrix, settings: ALSSettings) -> tuple[np.ndarray, np.ndarray]:
    """User and item factors of implicit's CPU ALS; items with no saves get zero rows."""
    from implicit.cpu.als import AlternatingLeastSquares
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, "blas"):  # implicit parallelises itself; a BLAS pool on top thrashes
        model = AlternatingLeastSquares(
            factors=settings.factors,
            regularization=settings.regularization,
            alpha=1.0,
            iterations=settings.iterations,
            random_state=settings.random_state,
        )
        model.fit(confidence(interactions, settings), show_progress=False)
    return np.asarray(model.user_factors), np.asarray(model.item_factors)
