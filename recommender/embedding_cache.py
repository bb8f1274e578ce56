"""On-disk cache of text embeddings: (model id, text hash) → float32 vector, in one SQLite file.

SQLite in WAL mode gives what a cache shared by concurrent `zotrec` runs needs: writers wait
for each other (busy timeout) instead of failing, readers never block, and a process killed in
the middle of a write leaves the last committed state (a transaction is all or nothing). Vectors
are raw float32 bytes, never pickles. Any failure of the cache only costs speed: zotrec logs
one warning and computes the embeddings again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

CACHE_DIR_ENV = "ZOTREC_CACHE_DIR"
CACHE_FILE = "embeddings.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    text_hash BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
) WITHOUT ROWID
"""
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


class EmbeddingCache:
    """Vectors by (model id, text hash). Open lazily; every method is safe to call after a failure."""

    def __init__(self, path: str | Path | None = None, *, timeout_s: float = 60.0) -> None:
        self.path = Path(path) if path is not None else cache_dir() / CACHE_FILE
        self.timeout_s = timeout_s
        self._connection: sqlite3.Connection | None = None
        self._broken = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is not None or self._broken:
            return self._connection
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(_SCHEMA)
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

    def lookup(self, model: str, hashes: Sequence[bytes], dimension: int) -> dict[bytes, np.ndarray]:
        """The cached vectors among `hashes`; a row of the wrong size counts as missing."""
        connection = self._connect()
        found: dict[bytes, np.ndarray] = {}
        if connection is None:
            return found
        unique = list(dict.fromkeys(hashes))
        try:
            for start in range(0, len(unique), _LOOKUP_CHUNK):
                chunk = unique[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT text_hash, vector FROM vectors WHERE model = ? AND text_hash IN ({marks})",
                    [model, *chunk],
                )
                for key, blob in rows:
                    if len(blob) == 4 * dimension:
                        found[bytes(key)] = np.frombuffer(blob, dtype="<f4")
        except sqlite3.Error as error:
            self._give_up("cannot be read", error)
            return {}
        return found

    def store(self, model: str, vectors: Mapping[bytes, np.ndarray]) -> None:
        """Add vectors in one transaction: all of them are committed, or none."""
        connection = self._connect()
        if connection is None or not vectors:
            return
        rows = [(model, key, np.asarray(vector, dtype="<f4").tobytes()) for key, vector in vectors.items()]
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(
                    "INSERT OR REPLACE INTO vectors (model, text_hash, vector) VALUES (?, ?, ?)", rows
                )
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
        if model is None:
            return connection.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        return connection.execute("SELECT COUNT(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0]

    def close(self) -> None:
        """Close the connection (the file and its WAL stay consistent either way)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
