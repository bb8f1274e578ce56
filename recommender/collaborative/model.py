"""ALS on who-saved-what (`fit_als`, `confidence`, `ALSSettings`: shared by the dense model), the tf-idf
rows of the text, and the retired tf-idf collaborative model's class and file format.

`zotrec train` no longer makes the tf-idf model (evaluation/tfidf_peer.py trains it as a peer); its
class stays here while reading-list still reads such files.
"""

from __future__ import annotations

import json
import logging
import os
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy import sparse

from recommender.errors import InputError
from recommender.features.tfidf import TfidfRepresentation

log = logging.getLogger(__name__)

MODEL_FORMAT = "zotrec-collaborative-1"
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
            raise ValueError(f"unknown weighting '{self.weighting}' (choose from {', '.join(WEIGHTINGS)})")


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


class TextFeatures:
    """The hashed tf-idf of features.py with the idf of the training items kept, so rows are reproducible."""

    def __init__(self, n_features: int, ngram_range: tuple[int, int], idf: np.ndarray | None = None) -> None:
        self.representation = TfidfRepresentation(n_features=n_features, ngram_range=tuple(ngram_range))
        if idf is not None:
            self._set_idf(idf)

    def fit(self, texts: Sequence[str]) -> TextFeatures:
        self.representation.fit(texts)
        return self

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        return self.representation.transform(texts)

    @property
    def idf(self) -> np.ndarray:
        return self.representation._idf.idf_

    def _set_idf(self, idf: np.ndarray) -> None:
        transformer = self.representation._idf
        transformer.idf_ = np.asarray(idf, dtype=np.float64)
        transformer.n_features_in_ = len(idf)


@dataclass
class CollaborativeModel:
    """What scoring new papers needs: the text map, the fold-in terms, and how the model was made.

    Attributes
    ----------
    map_columns, map_weights, map_intercept : the ridge text → factor map
        (evaluation/tfidf_peer.py fit_text_map).
    item_gram : (factors, factors) Σ over training items of v vᵀ, for the ALS fold-in.
    fold_in_confidence : the typical confidence of a saved item, used when folding a user in.
    idf : the training items' idf, one value per hashed feature.
    blend_weight : weight of the collaborative score in the hybrid (set by hybrid.choose_blend_weight).
    provenance : data name, source, counts, training seconds; written into the file as JSON.
    training_user_factors, training_item_factors : the ALS factors, kept in memory for evaluation
        only (not saved: a Zotero user is folded in from text instead).
    """

    settings: ALSSettings
    map_columns: np.ndarray
    map_weights: np.ndarray
    map_intercept: np.ndarray
    item_gram: np.ndarray
    fold_in_confidence: float
    idf: np.ndarray
    blend_weight: float = 0.5
    provenance: dict = field(default_factory=dict)
    training_user_factors: np.ndarray | None = field(default=None, repr=False, compare=False)
    training_item_factors: np.ndarray | None = field(default=None, repr=False, compare=False)
    _features: TextFeatures | None = field(default=None, repr=False, compare=False)

    @property
    def features(self) -> TextFeatures:
        if self._features is None:
            self._features = TextFeatures(self.settings.n_features, self.settings.ngram_range, self.idf)
        return self._features

    def item_factors_for_rows(self, rows: sparse.csr_matrix) -> np.ndarray:
        """Predicted item factors for tf-idf rows made by `self.features`."""
        return np.asarray(rows[:, self.map_columns] @ self.map_weights) + self.map_intercept

    def item_factors(self, texts: Sequence[str]) -> np.ndarray:
        """Predicted item factors of any texts (new papers, a user's library items)."""
        return self.item_factors_for_rows(self.features.transform(list(texts)))

    def user_vector(self, library_factors: np.ndarray) -> np.ndarray:
        """ALS fold-in: the user vector that best explains saving these items and no others."""
        extra = self.fold_in_confidence - 1.0
        system = self.item_gram + extra * library_factors.T @ library_factors
        system += self.settings.regularization * np.eye(len(system), dtype=system.dtype)
        return np.linalg.solve(system, self.fold_in_confidence * library_factors.sum(axis=0))

    def scores(self, library_texts: Sequence[str], corpus_texts: Sequence[str]) -> np.ndarray:
        """Collaborative score of each corpus text for the user whose items have these texts."""
        user = self.user_vector(self.item_factors(library_texts))
        return self.item_factors(corpus_texts) @ user

    def save(self, path: str | Path) -> None:
        """Write an .npz (no pickle); the temporary file is renamed so a crash leaves no half model."""
        path = Path(path)
        seen = np.flatnonzero(self.idf != self.idf.max())
        arrays = {
            "format": np.array(MODEL_FORMAT),
            "settings": np.array(json.dumps(asdict(self.settings))),
            "provenance": np.array(json.dumps(self.provenance)),
            "map_columns": self.map_columns.astype(np.int64),
            "map_weights": self.map_weights,
            "map_intercept": self.map_intercept,
            "item_gram": self.item_gram,
            "fold_in_confidence": np.array(self.fold_in_confidence),
            "blend_weight": np.array(self.blend_weight),
            "idf_columns": seen.astype(np.int64),
            "idf_values": self.idf[seen],
            "idf_unseen": np.array(self.idf.max()),
        }
        save_npz_atomic(path, arrays)

    @classmethod
    def load(cls, path: str | Path) -> CollaborativeModel:
        """Read a model written by `save`; anything else (or a damaged one) is a clear one-line error."""
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                if not hasattr(data, "files") or "format" not in data or str(data["format"]) != MODEL_FORMAT:
                    raise InputError(f"not a zotrec model (expected format {MODEL_FORMAT})", path=path)
                stored = json.loads(str(data["settings"]))
                provenance = json.loads(str(data["provenance"]))
                if not isinstance(stored, dict) or not isinstance(provenance, dict):
                    raise TypeError("settings and provenance must be JSON objects")
                settings = ALSSettings(**stored)
                arrays = {name: np.asarray(data[name]) for name in (
                    "map_columns", "map_weights", "map_intercept", "item_gram", "idf_columns", "idf_values")}
                _check_shapes(settings, arrays)
                idf = np.full(int(settings.n_features), float(data["idf_unseen"]))
                idf[arrays["idf_columns"]] = arrays["idf_values"]
                return cls(
                    settings=settings,
                    map_columns=arrays["map_columns"],
                    map_weights=arrays["map_weights"],
                    map_intercept=arrays["map_intercept"],
                    item_gram=arrays["item_gram"],
                    fold_in_confidence=float(data["fold_in_confidence"]),
                    idf=idf,
                    blend_weight=float(data["blend_weight"]),
                    provenance=provenance,
                )
        except (OSError, ValueError, KeyError, TypeError, IndexError, OverflowError, EOFError, MemoryError,
                zipfile.BadZipFile) as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise InputError(f"cannot read the model ({first})", path=path) from None


def _check_shapes(settings: ALSSettings, arrays: dict[str, np.ndarray]) -> None:
    """A damaged or hand-made model fails here, in one line, not later inside scoring."""
    factors, features = int(settings.factors), int(settings.n_features)
    if not 0 < features <= 1 << 26 or factors <= 0:
        raise ValueError(f"implausible settings (n_features {features}, factors {factors})")
    numeric = {name: a for name, a in arrays.items() if np.issubdtype(a.dtype, np.number)}
    if len(numeric) != len(arrays):
        raise ValueError("arrays of the wrong type")
    columns, weights = arrays["map_columns"], arrays["map_weights"]
    checks = [
        columns.ndim == 1 and np.issubdtype(columns.dtype, np.integer),
        weights.shape == (len(columns), factors),
        arrays["map_intercept"].shape == (factors,),
        arrays["item_gram"].shape == (factors, factors),
        arrays["idf_columns"].ndim == 1 and np.issubdtype(arrays["idf_columns"].dtype, np.integer),
        arrays["idf_values"].shape == arrays["idf_columns"].shape,
        all(a.size == 0 or (a.min() >= 0 and a.max() < features) for a in (columns, arrays["idf_columns"])),
    ]
    if not all(checks):
        raise ValueError("arrays of the wrong shape")


def save_npz_atomic(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """A model file appears whole or not at all: written beside the target, then renamed over it."""
    temporary = path.with_name(f".{path.name}.tmp{os.getpid()}.npz")
    np.savez_compressed(temporary, **arrays)
    temporary.replace(path)
