"""The incremental re-run: a library's rows and each paper's running top-K, kept between runs.

A re-run after adding a few items to a library scores only the new items against the corpus and
merges them into the kept top-K values (recommender.scoring.aggregation.top_values(previous=…));
the result is exactly a full run's. An item removed, edited or moved means a full recompute of the
values, though the rows of unchanged texts still come from here in one read instead of one cache
lookup per text. Other signals keep what they derive from the library here too: per-item rows
(`item_rows`, e.g. the collaborative model's predicted factors: only new texts are mapped) and whole
values keyed by a digest of every input they depend on (`kept_value`, e.g. the linear model's scores:
an unchanged library skips the fit). One file per (corpus, model, aggregation, library), kept in the
store (recommender/store/: private, written whole, read with allow_pickle=False; concurrent runs: the
last one wins).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from recommender.scoring.aggregation import TopValues, kept, parse_aggregation, top_values
from recommender.scoring.corpus_side import factors_name
from recommender.scoring.recency import scaled_rows
from recommender.store import Store, cache_dir, digest
from recommender.store.files import Damaged

FORMAT_VERSION = 2  # 2: kept by recommender.store as library-<key>.npz
KEEP_STATES = 16  # libraries kept (the least recently used beyond these are removed)


class _Kept(NamedTuple):
    """The last run's state as read from its file."""

    hashes: list[bytes]
    rows: np.ndarray
    best: np.ndarray
    signals: dict[str, np.ndarray]  # other signals' top-K values
    values: dict[str, tuple[bytes, np.ndarray]]  # kept_value: name → (inputs' digest, value)
    items: dict[str, np.ndarray]  # item_rows: name → one row per hash


class _Run(NamedTuple):
    """This run's library (after `score`) and the last run's state."""

    key: str  # the library's file in the store
    texts: list[str]
    hashes: list[bytes]
    rows: np.ndarray
    best: np.ndarray  # the content top-K values
    old: _Kept | None


def state_dir() -> Path:
    return cache_dir() / "libraries"


class IncrementalScorer:
    """Rows and top-K values of one library against one prepared corpus, reusing the last run's."""

    def __init__(self, folder: Path, context: str) -> None:
        self.folder, self.context = folder, context
        self._store = Store(folder, keep=KEEP_STATES, what="incremental state")
        self.reused_items = 0  # how many items' values came from the last run (for the log and tests)
        self.reused_values: list[str] = []  # which kept values this run took from the last one (for tests)
        self._run: _Run | None = None  # this run's texts and values, and the last run's state
        self._signals: dict[str, np.ndarray] = {}  # other signals' top-K values this run (e.g. the lexical one)
        self._values: dict[str, tuple[bytes, np.ndarray]] = {}  # kept_value's this run
        self._items: dict[str, np.ndarray] = {}  # item_rows' this run
        self._changed = False

    def _key(self, hashes: Sequence[bytes]) -> str:
        # Named by the context and the library's first text: a library keeps its file while it grows.
        return digest(FORMAT_VERSION, self.context, hashes[0] if hashes else b"")

    def score(self, texts: Sequence[str], representation, corpus_rows: np.ndarray, aggregation: str, *,
              budget_mb: float | None = None, release=None,
              weights: np.ndarray | None = None) -> tuple[np.ndarray, TopValues]:
        """(library rows, top-K values) for these texts, as a full run would give them; `release` is
        called once the rows are there (to free an encoder before scoring). `weights`: each item's weight
        as evidence (scoring/evidence.py): the values are of the rows times it, and an item is kept under its
        text and weight together, so a change of weight alone is a changed item."""
        from recommender.features.cache import text_hash

        hashes = [text_hash(text) for text in texts]
        if weights is not None:
            hashes = [key if weight == 1.0 else _weighted(key, weight)
                      for key, weight in zip(hashes, weights)]
        key = self._key(hashes)
        old = self._store.load("library", key, parse=_parse)
        rows = _aligned(hashes, old, None if old is None else old.rows, representation.transform, texts)
        if release is not None:
            release()
        previous = None
        if old is not None and parse_aggregation(aggregation)[0] != "mean":
            n_old = len(old.hashes)
            if _grew(old.hashes, hashes) and old.best.shape == (corpus_rows.shape[0], kept(aggregation, n_old)):
                previous = TopValues(best=old.best, total=None, n_items=n_old)
        kwargs = {} if budget_mb is None else {"budget_mb": budget_mb}
        evidence_rows = rows if weights is None else scaled_rows(rows, weights)
        values = top_values(evidence_rows, corpus_rows, aggregation, previous=previous, **kwargs)
        self.reused_items = previous.n_items if previous is not None else 0
        self.reused_values = []
        self._run = _Run(key, list(texts), hashes, rows, values.best, old)
        self._signals, self._values, self._items = {}, {}, {}
        self._changed = previous is None or previous.n_items != len(hashes)
        return rows, values

    def signal_values(self, name: str, n_papers: int, keep_for, compute) -> TopValues:
        """Another signal's top-K values for this run's texts (after `score`): `compute(previous)` gets the
        last run's values of this signal when the texts only grew (it scores the new ones and merges
        them), else None (it scores all). `keep_for(n_items)`: the values' width for n items."""
        previous = None
        if self._run is not None:
            hashes, old = self._run.hashes, self._run.old
            if old is not None and name in old.signals:
                n_old, best = len(old.hashes), old.signals[name]
                if _grew(old.hashes, hashes) and best.shape == (n_papers, keep_for(n_old)):
                    previous = TopValues(best=best, total=None, n_items=n_old)
        values = compute(previous)
        if self._run is not None:
            self._signals[name] = values.best
            self._changed = self._changed or previous is None or previous.n_items != values.n_items
        return values

    def kept_value(self, name: str, inputs: tuple, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """A value derived from this run's texts (after `score`) and `inputs` (everything else it depends
        on: settings, model names, arrays), the last run's when both were the same."""
        import scipy  # a fit's result may change with the numpy and scipy versions

        hashes = b"".join(self._run.hashes) if self._run is not None else b""
        key = digest(hashes, np.__version__, scipy.__version__, inputs).encode()
        old = self._run.old if self._run is not None else None
        if old is not None and name in old.values and old.values[name][0] == key:
            value = old.values[name][1]
            self.reused_values.append(name)
        else:
            value = np.asarray(compute())
            self._changed = self._changed or self._run is not None
        if self._run is not None:
            self._values[name] = (key, value)
        return value

    def item_rows(self, name: str, texts: Sequence[str], compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """One row per text (e.g. a model's predicted factors), `compute(texts)` only for the texts the
        last run did not keep a row of: the rows depend on each text alone (and on what `name` says)."""
        if self._run is None:
            return compute(list(texts))
        hashes, old = self._run.hashes, self._run.old
        if len(texts) != len(self._run.texts) or list(texts) != self._run.texts:  # not this run's library: no reuse
            return compute(list(texts))
        kept_rows = None if old is None else old.items.get(name)
        rows = _aligned(hashes, old, kept_rows, compute, texts)
        if rows is kept_rows:
            self.reused_values.append(name)
        else:
            self._changed = True
        self._items[name] = rows
        return rows

    def item_factors(self, model, texts: Sequence[str]) -> np.ndarray:
        """A collaborative model's `item_factors(texts)`, mapping only the texts new since the last run."""
        name = factors_name(model)
        if name is None:
            return model.item_factors(texts)
        return self.item_rows(name, texts, model.item_factors)

    def finish(self) -> None:
        """Keep this run's state for the next run (when anything changed)."""
        if self._run is None or not self._changed:
            return
        run = self._run
        arrays = _arrays(run.hashes, run.rows, run.best, self._signals, self._values, self._items)
        self._store.save("library", run.key, arrays)
        self._run, self._changed = None, False


def _weighted(key: bytes, weight: float) -> bytes:
    """A text's 16-byte key joined with an evidence weight other than 1 (still 16 bytes)."""
    return hashlib.blake2b(key + np.float32(weight).tobytes(), digest_size=16).digest()


def _grew(old_hashes: list[bytes], hashes: Sequence[bytes]) -> bool:
    """This run's texts are the last run's followed by new ones (or exactly them)."""
    return len(old_hashes) <= len(hashes) and old_hashes == hashes[: len(old_hashes)]


def _aligned(hashes: Sequence[bytes], old: _Kept | None, kept_rows: np.ndarray | None, compute,
             texts: Sequence[str]) -> np.ndarray:
    """Rows for these hashes: the kept rows (aligned with the last run's hashes) where there is one,
    `compute(texts)` for the others; the kept array itself when nothing changed."""
    if kept_rows is None or old is None:
        return compute(list(texts))
    grew = _grew(old.hashes, hashes)
    if grew and len(hashes) == len(old.hashes):
        return kept_rows
    start = len(old.hashes) if grew else 0  # rows before `start` are the kept ones, in their order
    known = {key: index for index, key in enumerate(old.hashes)}
    missing = [index for index in range(start, len(hashes)) if hashes[index] not in known]
    fresh = compute([texts[index] for index in missing]) if missing else None
    rows = np.empty((len(hashes),) + kept_rows.shape[1:], dtype=kept_rows.dtype)
    rows[:start] = kept_rows[:start]
    present = [index for index in range(start, len(hashes)) if hashes[index] in known]
    if present:
        rows[present] = kept_rows[[known[hashes[index]] for index in present]]
    if missing:
        rows[missing] = fresh
    return rows


# Prefixes of the file's other arrays: other signals' top-K values, kept values (and their keys), item rows.
_SIGNAL, _VALUE, _VALUE_KEY, _ITEM = "signal_", "value_", "valuekey_", "item_"


def _parse(data: dict) -> _Kept | None:
    """The last run's state in the stored arrays (None: another format); Damaged for arrays that
    cannot be it."""
    version = data["format_version"]
    if version.shape != () or version.dtype.kind not in "iu" or int(version) != FORMAT_VERSION:
        return None
    if data["hashes"].ndim != 2 or data["hashes"].dtype != np.uint8:
        raise Damaged("hashes of the wrong type")
    hashes = [bytes(row) for row in data["hashes"]]
    rows, best = data["rows"], data["best"]
    named = {prefix: {name[len(prefix):]: data[name] for name in data if name.startswith(prefix)}
             for prefix in (_SIGNAL, _VALUE, _VALUE_KEY, _ITEM)}
    signals, items = named[_SIGNAL], named[_ITEM]
    values = {name: (named[_VALUE_KEY][name].tobytes(), value) for name, value in named[_VALUE].items()
              if name in named[_VALUE_KEY]}
    kept_values = [value for _, value in values.values()]
    if rows.dtype != np.float32 or best.dtype != np.float32 or rows.shape[0] != len(hashes) or any(
            array.dtype != np.float32 or array.ndim != 2 for array in signals.values()) or any(
            array.dtype.kind != "f" for array in [*items.values(), *kept_values]) or any(
            array.ndim != 2 or array.shape[0] != len(hashes) for array in items.values()):
        raise Damaged("arrays of the wrong type or size")
    return _Kept(hashes, rows, best, signals, values, items)


def _arrays(hashes: Sequence[bytes], rows: np.ndarray, best: np.ndarray, signals: dict[str, np.ndarray],
            values: dict[str, tuple[bytes, np.ndarray]], items: dict[str, np.ndarray]) -> dict:
    """This run's state as the arrays of its file."""
    return {"format_version": np.array(FORMAT_VERSION),
            "hashes": np.frombuffer(b"".join(hashes), dtype=np.uint8).reshape(len(hashes), 16),
            "rows": np.ascontiguousarray(rows, dtype=np.float32), "best": best,
            **{_SIGNAL + name: array for name, array in signals.items()},
            **{_VALUE + name: value for name, (_, value) in values.items()},
            **{_VALUE_KEY + name: np.frombuffer(key, dtype=np.uint8) for name, (key, _) in values.items()},
            **{_ITEM + name: array for name, array in items.items()}}
