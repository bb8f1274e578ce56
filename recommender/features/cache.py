"""On-disk cache of text embeddings: (model id, text hash) → float32 vector, in one SQLite file.

SQLite in WAL mode gives what a cache shared by concurrent `zotrec` runs needs: writers wait
for each other (busy timeout) instead of failing, readers never block, and a process killed in
the middle of a write leaves the last committed state (a transaction is all or nothing). Each model
has its own rowid table keyed by 64 bits of the text hash (the other 64 bits are checked on
read): lookups by integer key are several times faster than by a composite text/blob key.
Vectors are raw float32 bytes, never pickles. Any failure of the cache only costs speed: zotrec logs
one warning and computes the embeddings again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

CACHE_DIR_ENV = "ZOTREC_CACHE_DIR"
CACHE_FILE = "embeddings.sqlite3"
_MODELS = "CREATE TABLE IF NOT EXISTS models (model TEXT PRIMARY KEY, table_name TEXT NOT NULL)"
_VECTORS = 'CREATE TABLE IF NOT EXISTS "{}" (key INTEGER PRIMARY KEY, rest BLOB NOT NULL, vector BLOB NOT NULL)'
_LOOKUP_CHUNK = 500  # below SQLite's limit on bound parameters


def cache_dir() -> Path:
    """`$ZOTREC_CACHE_DIR`, else the user cache directory (e.g. ~/.cache/zotrec on Linux)."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_path

    return user_cache_path("zotrec", appauthor=False)


def text_hash(text: str) -> bytes:
    """128 bits of SHA-256 of the exact text: a changed title or abstract is a new key."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def _split(key: bytes) -> tuple[int, bytes]:
    """A 16-byte text hash → (signed 64-bit row key, the other 8 bytes)."""
    return int.from_bytes(key[:8], "little", signed=True), key[8:]


def _table_name(model: str) -> str:
    return "vectors_" + hashlib.sha256(model.encode("utf-8")).hexdigest()[:16]


class EmbeddingCache:
    """Vectors by (model id, text hash). Open lazily; every method is safe to call after a failure."""

    def __init__(self, path: str | Path | None = None, *, timeout_s: float = 60.0) -> None:
        self.path = Path(path) if path is not None else cache_dir() / CACHE_FILE
        self.timeout_s = timeout_s
        self._connection: sqlite3.Connection | None = None
        self._broken = False
        self._tables: set[str] = set()

    def __getstate__(self) -> dict:
        """Pickles without the connection (Dask workers): each process opens its own."""
        return {**self.__dict__, "_connection": None}

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is not None or self._broken:
            return self._connection
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                # Library texts' hashes and vectors are library data: the file is the user's alone
                # (SQLite gives its -wal and -shm files the same permissions).
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
                connection = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.execute(_MODELS)
                break
            except sqlite3.OperationalError as error:
                # Switching a new file to WAL does not wait on the busy timeout: when another run
                # is doing the same at that moment, SQLite answers "locked" at once. Try again.
                if "locked" not in str(error) or time.monotonic() > deadline:
                    self._give_up("cannot be opened", error)
                    return None
                time.sleep(0.05)
            except (sqlite3.Error, OSError) as error:
                self._give_up("cannot be opened", error)
                return None
        self._connection = connection
        return connection

    def _give_up(self, what: str, error: Exception) -> None:
        log.warning("embedding cache %s %s (%s): embeddings are computed without it; delete the file "
                    "to rebuild it", self.path, what, error)
        self._broken = True
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _table(self, connection: sqlite3.Connection, model: str, create: bool) -> str | None:
        """The model's table name; None when it has none yet and `create` is False."""
        name = _table_name(model)
        if name in self._tables:
            return name
        known = connection.execute("SELECT 1 FROM models WHERE model = ?", (model,)).fetchone()
        if known is None and not create:
            return None
        if known is None:
            connection.execute(_VECTORS.format(name))
            connection.execute("INSERT OR IGNORE INTO models (model, table_name) VALUES (?, ?)", (model, name))
        self._tables.add(name)
        return name

    def lookup(self, model: str, hashes: Sequence[bytes], dimension: int) -> dict[bytes, np.ndarray]:
        """The cached vectors among `hashes`; a row of the wrong size counts as missing."""
        hashes = list(hashes)
        rows = np.zeros((len(hashes), dimension), dtype=np.float32)
        found = self.fill(model, hashes, rows)
        return {key: rows[index] for index, key in enumerate(hashes) if found[index]}

    def fill(self, model: str, hashes: Sequence[bytes], out: np.ndarray) -> np.ndarray:
        """Write the cached vectors of `hashes` into the rows of `out` (n × dimension, float32) as they
        are read, so no second copy of the library's vectors is ever held; returns which rows were found."""
        found = np.zeros(len(hashes), dtype=bool)
        connection = self._connect()
        if connection is None or not len(hashes):
            return found
        positions: dict[int, list[int]] = {}
        for position, key in enumerate(hashes):
            positions.setdefault(_split(key)[0], []).append(position)
        keys, width = list(positions), 4 * out.shape[1]
        try:
            table = self._table(connection, model, create=False)
            for start in range(0, len(keys) if table else 0, _LOOKUP_CHUNK):
                chunk = keys[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(f'SELECT key, rest, vector FROM "{table}" WHERE key IN ({marks})', chunk)
                for key, rest, blob in rows:
                    wanted = [position for position in positions[key] if hashes[position][8:] == rest]
                    if wanted and len(blob) == width:
                        out[wanted] = np.frombuffer(blob, dtype="<f4")
                        found[wanted] = True
        except sqlite3.Error as error:
            self._give_up("cannot be read", error)
            found[:] = False
        return found

    def store(self, model: str, vectors: Mapping[bytes, np.ndarray]) -> None:
        """Add vectors in one transaction: all of them are committed, or none."""
        connection = self._connect()
        if connection is None or not vectors:
            return
        rows = [(*_split(key), np.asarray(vector, dtype="<f4").tobytes()) for key, vector in vectors.items()]
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                table = self._table(connection, model, create=True)
                connection.executemany(f'INSERT OR REPLACE INTO "{table}" (key, rest, vector) VALUES (?, ?, ?)', rows)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        except sqlite3.Error as error:
            self._give_up("cannot be written", error)

    def count(self, model: str | None = None) -> int:
        """How many vectors are cached (for one model, or in all)."""
        connection = self._connect()
        if connection is None:
            return 0
        models = [model] if model else [row[0] for row in connection.execute("SELECT model FROM models")]
        tables = [self._table(connection, name, create=False) for name in models]
        return sum(connection.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables if t)

    def close(self) -> None:
        """Close the connection (the file and its WAL stay consistent either way)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
