"""The tf-idf collaborative model, kept as a peer of the evaluation only: implicit ALS on who-saved-what and
a ridge map from tf-idf rows to item factors (zotrec's model before the dense one, retired from `zotrec train`).

A new paper's factor is predicted from its tf-idf row; a user's vector is folded in (ALS closed form)
from the predicted factors of their own items. zotrec no longer scores with such a model: `--model`
refuses its files in one line.
"""

from __future__ import annotations

import json
import logging
import time
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy import sparse

from recommender.collaborative.card import model_json
from recommender.collaborative.model import ALSSettings, confidence, fit_als
from recommender.errors import InputError
from recommender.features.tfidf import TfidfRepresentation
from recommender.store import write_npz

log = logging.getLogger(__name__)


def fit_text_map(rows: sparse.csr_matrix, targets: np.ndarray, regularization: float) -> tuple:
    """Ridge from tf-idf rows to item factors, on the columns that occur (others would weigh 0).

    Returns (columns, weights of shape (columns, factors), intercept of shape (factors,)).
    """
    from sklearn.linear_model import Ridge

    columns = np.unique(rows.indices)
    ridge = Ridge(alpha=regularization, fit_intercept=True, solver="sparse_cg", tol=1e-4)
    ridge.fit(rows[:, columns], targets)
    return columns, ridge.coef_.T.astype(np.float32), ridge.intercept_.astype(np.float32)


def train_collaborative(
    interactions: sparse.csr_matrix, texts: Sequence[str], settings: ALSSettings | None = None
) -> CollaborativeModel:
    """ALS on the interactions, then the text map fitted on the items that have saves."""
    settings = settings or ALSSettings()
    started = time.perf_counter()
    user_factors, item_factors = fit_als(interactions, settings)
    features = TfidfRepresentation(settings.n_features, settings.ngram_range)
    saved = np.flatnonzero(np.asarray(interactions.getnnz(axis=0)) > 0)
    rows = features.fit([texts[i] for i in saved]).transform(list(texts))
    columns, weights, intercept = fit_text_map(rows[saved], item_factors[saved], settings.map_regularization)
    weighted = confidence(interactions, settings)
    model = CollaborativeModel(
        settings=settings,
        map_columns=columns,
        map_weights=weights,
        map_intercept=intercept,
        item_gram=(item_factors[saved].T @ item_factors[saved]).astype(np.float64),
        fold_in_confidence=1.0 + float(np.median(weighted.data)) if weighted.nnz else 1.0 + settings.alpha,
        idf=features.idf.copy(),
        provenance={"users": int(interactions.shape[0]), "items": int(interactions.shape[1]),
                    "saves": int(interactions.nnz)},
    )
    model._features = features
    model.training_user_factors, model.training_item_factors = user_factors, item_factors
    model.provenance["seconds"] = round(time.perf_counter() - started, 2)
    log.debug("trained in %.1f s", model.provenance["seconds"])
    return model


MODEL_FORMAT = "zotrec-collaborative-1"


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
    _features: TfidfRepresentation | None = field(default=None, repr=False, compare=False)

    @property
    def features(self) -> TfidfRepresentation:
        if self._features is None:
            self._features = TfidfRepresentation(self.settings.n_features, self.settings.ngram_range, self.idf)
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
        write_npz(path, arrays, compressed=True)

    @classmethod
    def load(cls, path: str | Path) -> CollaborativeModel:
        """Read a model written by `save`; anything else (or a damaged one) is a clear one-line error."""
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                if not hasattr(data, "files") or "format" not in data or str(data["format"]) != MODEL_FORMAT:
                    raise InputError(f"not a zotrec model (expected format {MODEL_FORMAT})", path=path)
                stored = model_json(str(data["settings"]), "settings")  # depth-bounded, an object (card.py)
                provenance = model_json(str(data["provenance"]), "provenance")
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


