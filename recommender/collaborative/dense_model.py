"""The collaborative part on dense sentence embeddings: a map from embeddings to ALS item factors.

The map is the nearest training items' factors (kNN, the shipped kind: int8 vectors and float16
factors, a few MB) or a ridge regression; a model trained on CiteULike ships inside the package
(recommender/data/collaborative-dense.npz). New papers get their factor from the map; a user is
folded in (ALS closed form) from the predicted factors of their own items. The file is an
.npz without pickles and records which encoder made the embeddings it was trained on: a model is
refused for vectors of another encoder.
"""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from recommender.collaborative.card import ModelCard, arrays_content, file_content, model_json
from recommender.collaborative.model import ALSSettings, confidence, fit_als
from recommender.errors import FormatError, InputError
from recommender.store import write_npz

if TYPE_CHECKING:  # scipy costs 0.4 s to import; loading and applying a model never needs it
    from scipy import sparse

DENSE_MODEL_FORMAT = "zotrec-collaborative-dense-1"
SHIPPED_MODEL = Path(__file__).resolve().parents[1] / "data" / "collaborative-dense.npz"
MAPS = ("knn", "ridge")
NEIGHBOURS = 20  # chosen on citeulike-a fold-0 validation (docs/evaluation.md): 20 > 50 > 100
TEMPERATURE = 0.05
_CHUNK = 64  # rows per similarity block: small blocks keep a cold run's peak low; the result is the same bits


def knn_factors(vectors: np.ndarray, neighbour_vectors: np.ndarray, neighbour_factors: np.ndarray,
                k: int = NEIGHBOURS, temperature: float = TEMPERATURE, self_rows: np.ndarray | None = None) -> np.ndarray:
    """Each row's factor as the softmax(cosine / temperature)-weighted mean of its k nearest training
    items' ALS factors. `self_rows[i]` (when given) is row i's own index among the neighbours, left out."""
    k = min(k, len(neighbour_vectors) - (self_rows is not None))
    out = np.zeros((len(vectors), neighbour_factors.shape[1]), dtype=np.float32)
    for start in range(0, len(vectors), _CHUNK):
        sims = np.asarray(vectors[start : start + _CHUNK], dtype=np.float32) @ neighbour_vectors.T
        if self_rows is not None:
            sims[np.arange(len(sims)), self_rows[start : start + _CHUNK]] = -np.inf
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        near = np.take_along_axis(sims, top, axis=1)
        weights = np.exp((near - near.max(axis=1, keepdims=True)) / temperature)
        weights /= weights.sum(axis=1, keepdims=True)
        out[start : start + len(sims)] = np.einsum("nk,nkf->nf", weights, neighbour_factors[top])
    return out


def fit_dense_map(vectors: np.ndarray, targets: np.ndarray, regularization: float) -> tuple[np.ndarray, np.ndarray]:
    """Ridge with intercept, closed form: (weights (dim, factors), intercept (factors,))."""
    x = np.asarray(vectors, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64)
    x_mean, y_mean = x.mean(axis=0), y.mean(axis=0)
    xc = x - x_mean
    gram = xc.T @ xc + regularization * np.eye(x.shape[1])
    weights = np.linalg.solve(gram, xc.T @ (y - y_mean))
    return weights.astype(np.float32), (y_mean - x_mean @ weights).astype(np.float32)


@dataclass
class DenseCollaborativeModel:
    """What scoring needs: the dense → factor map, the fold-in terms, the provenance (with the fusion weights).

    encoder_id : the embedding model's id (recommender.features.dense.MODEL_ID) the map was fitted on.
    map_kind : "knn" (a new paper's factor is the weighted mean of its nearest training items'
        factors; stored as int8 vectors and float16 factors) or "ridge" (a linear map).
    """

    settings: ALSSettings
    item_gram: np.ndarray
    fold_in_confidence: float
    encoder_id: str
    map_kind: str = "knn"
    map_weights: np.ndarray | None = None  # ridge: (dim, factors)
    map_intercept: np.ndarray | None = None
    neighbour_vectors: np.ndarray | None = None  # knn: the training items' embeddings
    neighbour_factors: np.ndarray | None = None  # knn: their ALS factors
    provenance: dict = field(default_factory=dict)
    training_user_factors: np.ndarray | None = field(default=None, repr=False, compare=False)
    training_item_factors: np.ndarray | None = field(default=None, repr=False, compare=False)
    _representation: object | None = field(default=None, repr=False, compare=False)
    _source: Path | None = field(default=None, repr=False, compare=False)  # knn arrays not read yet
    _content: str | None = field(default=None, repr=False, compare=False)  # a loaded file's digest (card.py)

    @property
    def card(self) -> ModelCard:
        """What scoring reads from this model (card.py): weights, β, encoder, and its content's digest."""
        if self._content is None:  # trained in this process: the arrays the predicted factors come from
            self._content = arrays_content(self.map_weights, self.map_intercept, self.neighbour_vectors,
                                           self.neighbour_factors, self.item_gram, np.array(self.map_kind))
        return ModelCard.read(self.provenance, self.encoder_id, self._content, self._source)

    def _load_neighbours(self) -> None:
        """Read a loaded kNN model's training vectors and factors, the first time they are needed:
        a run whose papers' factors are all cached never decodes them."""
        if self._source is None:
            return
        try:
            with np.load(self._source, allow_pickle=False) as data:
                vectors, factors = model_array(data, "neighbour_vectors", 2), model_array(data, "neighbour_factors", 2)
                if len(vectors) != len(factors) or len(vectors) == 0 or factors.shape[1] != len(self.item_gram):
                    raise ValueError(f"field 'neighbour_factors' is {_shape(factors)}; with neighbour_vectors "
                                     f"{_shape(vectors)} and item_gram {_shape(self.item_gram)} it should be "
                                     f"{len(vectors)} × {len(self.item_gram)}")
                vectors = vectors.astype(np.float32) / 127
                vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
                self.neighbour_vectors, self.neighbour_factors = vectors, factors.astype(np.float32)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
            raise InputError(f"cannot read the model ({error})", path=self._source) from None
        self._source = None

    def factors_for_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """Predicted item factors of embedding rows."""
        if self.map_kind == "knn":
            self._load_neighbours()
        expected = (self.neighbour_vectors if self.map_kind == "knn" else self.map_weights.T).shape[1]
        if np.ndim(vectors) != 2 or np.shape(vectors)[1] != expected:
            field = "neighbour_vectors" if self.map_kind == "knn" else "map_weights"
            raise InputError(f"the model's '{field}' holds {expected}-dimensional embeddings but its encoder "
                             f"({self.encoder_id}) gives {np.shape(vectors)[-1]}-dimensional ones; train the model "
                             "again with this encoder")
        if self.map_kind == "knn":
            return knn_factors(vectors, self.neighbour_vectors, self.neighbour_factors)
        return np.asarray(vectors, dtype=np.float32) @ self.map_weights + self.map_intercept

    def item_factors(self, texts: Sequence[str]) -> np.ndarray:
        """Predicted item factors of texts, embedded by the encoder the model was trained on.

        Both steps are cached on disk (the embedding cache, under this model's own id), so a corpus
        scored before costs one lookup instead of a nearest-neighbour search over the training items.
        """
        from recommender.features.cache import text_hash

        if self._representation is None:
            from recommender.features import make_encoder_representation

            self._representation = make_encoder_representation(self.encoder_id)
        texts = list(texts)
        cache = self._representation.cache  # the encoder's embedding cache (features/dense.py)
        keys = [text_hash(text) for text in texts]
        dimension = len(self.item_gram)
        found = cache.lookup(self.cache_id, keys, dimension) if cache else {}
        todo = [i for i, key in enumerate(keys) if key not in found]
        if todo:
            found.update(self._bundled_factors([keys[i] for i in todo], dimension))
            todo = [i for i in todo if keys[i] not in found]
        if todo:
            fresh = self.factors_for_vectors(self._representation.transform([texts[i] for i in todo]))
            new = {keys[i]: row for i, row in zip(todo, fresh)}
            if cache:
                cache.store(self.cache_id, new)
            found.update(new)
        if not texts:
            return np.zeros((0, dimension), dtype=np.float32)
        return np.vstack([found[key] for key in keys]).astype(np.float32, copy=False)

    def _bundled_factors(self, keys: list[bytes], dimension: int) -> dict[bytes, np.ndarray]:
        """The shipped factors of the bundled corpus texts among `keys`, when this is the model they were made
        with (recommender/features/bundled.py); the bundled list's first run then maps only the library."""
        from recommender.features.bundled import shipped_factors
        from recommender.features.dense import MODEL_ID, ONNX_SHA256

        bundle = shipped_factors(ONNX_SHA256) if self.encoder_id == MODEL_ID else None
        if bundle is None:
            return {}
        rows = np.zeros((len(keys), dimension), dtype=np.float32)
        hit = bundle.fill(self.cache_id, keys, rows)
        return {key: rows[position] for position, key in enumerate(keys) if hit[position]}

    @property
    def cache_id(self) -> str:
        """The embedding cache's model id for this model's predicted factors: its content's digest (card.py),
        so another model never shares them, whatever its provenance says."""
        return f"{self.encoder_id}/factors/{self.map_kind}/{self.card.content[:16]}"

    def user_vector(self, library_factors: np.ndarray) -> np.ndarray:
        """ALS fold-in: the user vector that best explains saving these items and no others."""
        extra = self.fold_in_confidence - 1.0
        system = self.item_gram + extra * library_factors.T @ library_factors
        system = system + self.settings.regularization * np.eye(len(system))
        return np.linalg.solve(system, self.fold_in_confidence * library_factors.sum(axis=0))

    def scores(self, library_texts: Sequence[str], corpus_texts: Sequence[str]) -> np.ndarray:
        """Collaborative score of each corpus text for the user whose items have these texts."""
        return self.item_factors(corpus_texts) @ self.user_vector(self.item_factors(library_texts))

    def save(self, path: str | Path) -> None:
        """Write an .npz (no pickle; int8 vectors and float16 factors/weights); atomic rename."""
        path = Path(path)
        arrays = {
            "format": np.array(DENSE_MODEL_FORMAT),
            "settings": np.array(json.dumps(asdict(self.settings))),
            "provenance": np.array(json.dumps(self.provenance)),
            "encoder_id": np.array(self.encoder_id),
            "map_kind": np.array(self.map_kind),
            "item_gram": self.item_gram.astype(np.float32),
            "fold_in_confidence": np.array(self.fold_in_confidence),
        }
        if self.map_kind == "knn":
            self._load_neighbours()
            arrays["neighbour_vectors"] = np.round(np.clip(self.neighbour_vectors, -1, 1) * 127).astype(np.int8)
            arrays["neighbour_factors"] = self.neighbour_factors.astype(np.float16)
        else:
            arrays["map_weights"] = self.map_weights.astype(np.float16)
            arrays["map_intercept"] = self.map_intercept.astype(np.float32)
        write_npz(path, arrays, compressed=True)

    @classmethod
    def load(cls, path: str | Path) -> DenseCollaborativeModel:
        """Read a model written by `save`; anything else is a clear one-line error."""
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                found = _text(data, "format") if "format" in data else None
                if found != DENSE_MODEL_FORMAT:
                    raise FormatError(f"not a dense zotrec model (expected format {DENSE_MODEL_FORMAT})", path=path,
                                      found=found)
                kind = _text(data, "map_kind")
                if kind not in MAPS:
                    raise InputError(f"unknown map kind '{kind}' (expected {', '.join(MAPS)})", path=path)
                knn = kind == "knn"
                if knn and not {"neighbour_vectors", "neighbour_factors"} <= set(data.files):
                    raise KeyError("neighbour_vectors")
                gram = model_array(data, "item_gram", 2)
                if gram.shape[0] != gram.shape[1] or not gram.size:
                    raise ValueError(f"field 'item_gram' is {_shape(gram)}, not a square matrix")
                weights = intercept = None
                if not knn:
                    weights, intercept = model_array(data, "map_weights", 2), model_array(data, "map_intercept", 1)
                    if weights.shape[1] != len(gram) or intercept.shape != (len(gram),):
                        raise ValueError(f"fields 'map_weights' {_shape(weights)} and 'map_intercept' "
                                         f"{_shape(intercept)} do not match item_gram {_shape(gram)}")
                model = cls(
                    settings=ALSSettings(**model_json(_text(data, "settings"), "settings")),
                    map_kind=kind,
                    map_weights=None if knn else weights.astype(np.float32),
                    map_intercept=None if knn else intercept.astype(np.float32),
                    neighbour_vectors=None,  # read on first use (_load_neighbours)
                    neighbour_factors=None,
                    item_gram=gram.astype(np.float64),
                    fold_in_confidence=float(model_array(data, "fold_in_confidence", 0)),
                    encoder_id=_text(data, "encoder_id"),
                    provenance=model_json(_text(data, "provenance"), "provenance"),
                    _source=Path(path) if knn else None,
                    _content=file_content(Path(path)),
                )
                model.card  # noqa: B018 (read once here: a damaged provenance is the load's one-line error)
                return model
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as error:
            raise InputError(f"cannot read the model ({error})", path=path) from None


MAX_MODEL_ARRAY_BYTES = 2 << 30  # one array of a model file (the shipped one's largest is a few MB)


def model_array(data, name: str, ndim: int) -> np.ndarray:
    """One numeric array of a model file, its declared size checked before it is read (a header claiming
    200000 × 200000 is refused, not allocated) and its number of dimensions and dtype checked after."""
    from recommender.store import npz_array

    value = npz_array(data, name, MAX_MODEL_ARRAY_BYTES)
    if value.ndim != ndim or value.dtype.kind not in "iuf":
        raise ValueError(f"field '{name}' is a {_shape(value)} {value.dtype} array, expected {ndim} "
                         "dimension(s) of numbers")
    if not np.isfinite(value).all():
        raise ValueError(f"field '{name}' holds NaN or infinite values")
    return value


def _shape(array: np.ndarray) -> str:
    return " × ".join(map(str, array.shape)) or "scalar"


def _text(data, name: str) -> str:
    """A text field of a model file (a 0-d string array); anything else is a damaged file."""
    from recommender.store import npz_array

    value = npz_array(data, name, 1 << 20)
    if value.ndim != 0 or value.dtype.kind != "U":
        raise ValueError(f"field '{name}' is not a text")
    return str(value)


def train_dense_collaborative(
    interactions: sparse.csr_matrix, vectors: np.ndarray, encoder_id: str, settings: ALSSettings | None = None,
    map_kind: str = "knn",
) -> DenseCollaborativeModel:
    """ALS on the saves, then the map (kNN or ridge) from the items that have saves."""
    settings = settings or ALSSettings()
    started = time.perf_counter()
    user_factors, item_factors = fit_als(interactions, settings)
    saved = np.flatnonzero(np.asarray(interactions.getnnz(axis=0)) > 0)
    weights = intercept = None
    if map_kind == "ridge":
        weights, intercept = fit_dense_map(vectors[saved], item_factors[saved], settings.map_regularization)
    weighted = confidence(interactions, settings)
    model = DenseCollaborativeModel(
        settings=settings,
        map_kind=map_kind,
        map_weights=weights,
        map_intercept=intercept,
        neighbour_vectors=np.asarray(vectors[saved], dtype=np.float32) if map_kind == "knn" else None,
        neighbour_factors=np.asarray(item_factors[saved], dtype=np.float32) if map_kind == "knn" else None,
        item_gram=(item_factors[saved].T @ item_factors[saved]).astype(np.float64),
        fold_in_confidence=1.0 + float(np.median(weighted.data)) if weighted.nnz else 1.0 + settings.alpha,
        encoder_id=encoder_id,
        provenance={"users": int(interactions.shape[0]), "items": int(interactions.shape[1]),
                    "saves": int(interactions.nnz), "encoder": encoder_id, "map": map_kind},
    )
    model.training_user_factors, model.training_item_factors = user_factors, item_factors
    model.provenance["seconds"] = round(time.perf_counter() - started, 2)
    return model


def dataset_vectors(data, representation) -> np.ndarray:
    """Unit embedding rows for a dataset's items.

    Texts with word order (citeulike-a titles) are embedded as they are. Bags of words
    (citeulike-t: no titles, only word counts) are embedded word by word, once per vocabulary word,
    and an item is the tf-idf weighted mean of its words' vectors (sublinear tf, idf over items).
    """
    if data.word_order_kept:
        return np.asarray(representation.transform(data.texts), dtype=np.float32)
    from scipy import sparse

    vocabulary: dict[str, int] = {}
    rows, columns, counts = [], [], []
    for item, text in enumerate(data.texts):
        words, count = np.unique(text.split(), return_counts=True)
        rows.extend([item] * len(words))
        columns.extend(vocabulary.setdefault(word, len(vocabulary)) for word in words)
        counts.extend(count)
    bags = sparse.csr_matrix((np.asarray(counts, dtype=np.float32), (rows, columns)),
                             shape=(len(data.texts), len(vocabulary)))
    idf = np.log((1 + bags.shape[0]) / (1 + bags.getnnz(axis=0))) + 1.0
    bags.data = 1.0 + np.log(bags.data)
    weights = bags @ sparse.diags(idf.astype(np.float32))
    word_vectors = np.asarray(representation.transform(list(vocabulary)), dtype=np.float32)
    vectors = np.asarray(weights @ word_vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)
