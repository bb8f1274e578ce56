"""The incremental re-run: a library's rows and each paper's running top-K, kept between runs.

A re-run after adding a few items to a library scores only the new items against the corpus and
merges them into the kept top-K values (recommender.scoring.aggregation.top_values(previous=…));
the result is exactly a full run's. An item removed, edited or moved means a full recompute of the
values, though the rows of unchanged texts still come from here in one read instead of one cache
lookup per text. One file per (corpus, model, aggregation, library): `.npz` (plain `.npy` arrays in
a zip, read with allow_pickle=False), written to a temporary file and renamed into place (concurrent
runs: the last one wins, each file whole), private to the user (it holds library data).
"""

from __future__ import annotations

import hashlib
import logging
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from recommender.scoring.aggregation import TopValues, kept, parse_aggregation, top_values
from recommender.scoring.prepared import write_private_npz

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
KEEP_STATES = 16  # libraries kept (the least recently used beyond these are removed)


def state_dir() -> Path:
    from recommender.features.cache import cache_dir

    return cache_dir() / "libraries"


class IncrementalScorer:
    """Rows and top-K values of one library against one prepared corpus, reusing the last run's."""

    def __init__(self, folder: Path, context: str) -> None:
        self.folder, self.context = folder, context
        self.reused_items = 0  # how many items' values came from the last run (for the log and tests)
        self._run = None  # this run's (path, hashes, rows, content best, the last run's state): saved by finish()
        self._signals: dict[str, np.ndarray] = {}  # other signals' top-K values this run (e.g. the lexical one)
        self._changed = False

    def _path(self, hashes: Sequence[bytes]) -> Path:
        # Named by the context and the library's first text: a library keeps its file while it grows.
        name = hashlib.sha256(self.context.encode() + (hashes[0] if hashes else b"")).hexdigest()[:32]
        return self.folder / f"{name}.npz"

    def score(self, texts: Sequence[str], representation, corpus_rows: np.ndarray, aggregation: str, *,
              budget_mb: float | None = None, release=None) -> tuple[np.ndarray, TopValues]:
        """(library rows, top-K values) for these texts, as a full run would give them; `release` is
        called once the rows are there (to free an encoder before scoring)."""
        from recommender.features.cache import text_hash

        hashes = [text_hash(text) for text in texts]
        path = self._path(hashes)
        old = _load(path)
        rows = self._rows(texts, hashes, representation, old)
        if release is not None:
            release()
        previous = None
        if old is not None and parse_aggregation(aggregation)[0] != "mean":
            old_hashes, _, best, n_old, _ = old
            prefix = n_old <= len(hashes) and old_hashes == hashes[:n_old]
            if prefix and best.shape == (corpus_rows.shape[0], kept(aggregation, n_old)):
                previous = TopValues(best=best, total=None, n_items=n_old)
        kwargs = {} if budget_mb is None else {"budget_mb": budget_mb}
        values = top_values(rows, corpus_rows, aggregation, previous=previous, **kwargs)
        self.reused_items = previous.n_items if previous is not None else 0
        self._run, self._signals = (path, hashes, rows, values.best, old), {}
        self._changed = previous is None or previous.n_items != len(hashes)
        return rows, values

    def signal_values(self, name: str, n_papers: int, keep_for, compute) -> TopValues:
        """Another signal's top-K values for this run's texts (after `score`): `compute(previous)` gets the
        last run's values of this signal when the texts only grew (it scores the new ones and merges
        them), else None (it scores all). `keep_for(n_items)`: the values' width for n items."""
        previous = None
        if self._run is not None:
            _, hashes, _, _, old = self._run
            if old is not None and name in old[4]:
                old_hashes, n_old, best = old[0], old[3], old[4][name]
                if n_old <= len(hashes) and old_hashes == hashes[:n_old] and best.shape == (n_papers, keep_for(n_old)):
                    previous = TopValues(best=best, total=None, n_items=n_old)
        values = compute(previous)
        if self._run is not None:
            self._signals[name] = values.best
            self._changed = self._changed or previous is None or previous.n_items != values.n_items
        return values

    def finish(self) -> None:
        """Keep this run's state for the next run (when anything changed)."""
        if self._run is None or not self._changed:
            return
        path, hashes, rows, best, _ = self._run
        _save(path, hashes, rows, best, self._signals)
        _prune(self.folder)
        self._run, self._changed = None, False

    @staticmethod
    def _rows(texts, hashes, representation, old) -> np.ndarray:
        known = {} if old is None else {key: index for index, key in enumerate(old[0])}
        missing = [index for index, key in enumerate(hashes) if key not in known]
        if not missing and old is not None and len(hashes) == len(old[0]) and old[0] == list(hashes):
            return old[1]
        dimension = old[1].shape[1] if old is not None else None
        fresh = representation.transform([texts[index] for index in missing]) if missing else None
        if dimension is None:
            dimension = fresh.shape[1]
        rows = np.empty((len(texts), dimension), dtype=np.float32)
        if old is not None:
            present = [index for index, key in enumerate(hashes) if key in known]
            rows[present] = old[1][[known[hashes[index]] for index in present]]
        if missing:
            rows[missing] = fresh
        return rows


_SIGNAL = "signal_"  # prefix of other signals' top-K values in the file


def _load(path: Path):
    """(hashes, rows, best, n_items, {signal: best}) of the last run, or None when absent or not readable."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["format_version"]) != FORMAT_VERSION:
                return None
            hashes = [bytes(row) for row in data["hashes"]]
            rows, best = data["rows"], data["best"]
            signals = {name[len(_SIGNAL):]: data[name] for name in data.files if name.startswith(_SIGNAL)}
        if rows.dtype != np.float32 or best.dtype != np.float32 or rows.shape[0] != len(hashes) or any(
                values.dtype != np.float32 or values.ndim != 2 for values in signals.values()):
            raise ValueError("arrays of the wrong type or size")
        os.utime(path)
        return hashes, rows, best, len(hashes), signals
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
        log.warning("incremental state %s is damaged (%s): this run scores the whole library", path, error)
        return None


def _save(path: Path, hashes: Sequence[bytes], rows: np.ndarray, best: np.ndarray,
          signals: dict[str, np.ndarray] | None = None) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_private_npz(path, {
            "format_version": np.array(FORMAT_VERSION),
            "hashes": np.frombuffer(b"".join(hashes), dtype=np.uint8).reshape(len(hashes), 16),
            "rows": np.ascontiguousarray(rows, dtype=np.float32), "best": best,
            **{_SIGNAL + name: values for name, values in (signals or {}).items()}})
    except OSError as error:
        # the embedding cache has already warned about an unusable cache folder
        log.info("incremental state %s cannot be written (%s): the next run scores the whole library",
                 path, error)


def _prune(folder: Path) -> None:
    try:
        states = sorted(folder.glob("*.npz"), key=lambda path: path.stat().st_mtime, reverse=True)
        for stale in states[KEEP_STATES:]:
            stale.unlink(missing_ok=True)
    except OSError:
        pass
