"""On-disk cache of text embeddings: (model id, text hash) → float32 vector, in one SQLite file.

SQLite in WAL mode gives what a cache shared by concurrent `zotrec` runs needs: writers wait
for each other (busy timeout) instead of failing, readers never block, and a process killed in
the middle of a write leaves the last committed state (a transaction is all or nothing). Each model
has its own rowid table keyed by 64 bits of the text hash (the other 64 bits are checked on
read): lookups by integer key are several times faster than by a composite text/blob key.
Vectors are raw float32 bytes, never pickles. Any failure of the cache only costs speed: a damaged
file is rebuilt (one notice); a folder that cannot be written (read-only, full) is read as it is and
nothing new is stored (one notice per run, recommender/store/).
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import sqlite3
import stat
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from recommender.store import cache_dir, notices, private_dir

log = logging.getLogger(__name__)

CACHE_FILE = "embeddings.sqlite3"
_DAMAGED = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_MODELS = "CREATE TABLE IF NOT EXISTS models (model TEXT PRIMARY KEY, table_name TEXT NOT NULL)"
_VECTORS = 'CREATE TABLE IF NOT EXISTS "{}" (key INTEGER PRIMARY KEY, rest BLOB NOT NULL, vector BLOB NOT NULL)'
_LOOKUP_CHUNK = 500  # below SQLite's limit on bound parameters


def text_hash(text: str) -> bytes:
    """128 bits of SHA-256 of the exact text: a changed title or abstract is a new key."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def _code(error: Exception) -> int:
    """SQLite's primary result code of an error (0 for an OSError)."""
    return getattr(error, "sqlite_errorcode", 0) & 0xFF


def _files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _private_file(path: Path) -> None:
    """The cache file (made if missing) and its -wal and -shm, the user's alone (library texts' hashes
    and vectors are library data): links there are removed, never followed; an unreadable file is
    replaced, a read-only one is a PermissionError."""
    for name in _files(path):
        if name.is_symlink():
            log.warning("%s was a link, not a file: it is replaced", name)
            name.unlink()
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
    except PermissionError as error:
        if os.access(path, os.R_OK):
            raise  # a read-only cache file: read as it is
        notices.damaged("embedding cache", path, error)
        path.unlink()
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW, 0o600)
    os.close(descriptor)
    for name in _files(path):
        try:
            descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            continue
        try:
            mode = stat.S_IMODE(os.fstat(descriptor).st_mode)
            if mode & 0o077:
                os.fchmod(descriptor, mode & 0o700)
        finally:
            os.close(descriptor)


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
        self._broken = False  # no cache at all this run
        self._read_only = False  # this run reads the cache but stores nothing
        self._rebuilt = False
        self._tables: set[str] = set()

    def __getstate__(self) -> dict:
        """Pickles without the connection (Dask workers): each process opens its own."""
        return {**self.__dict__, "_connection": None}

    def _connect(self) -> sqlite3.Connection | None:
        if self._connection is not None or self._broken:
            return self._connection
        try:
            self._connection = self._open()
        except (OSError, sqlite3.Error) as error:
            if _code(error) in _DAMAGED and not self._rebuilt:
                notices.damaged("embedding cache", self.path, error)
                self._rebuild()
                return self._connect()
            notices.unwritable(self.path.parent, error)
            self._read_only = True
            self._connection = self._open_read_only()
            self._broken = self._connection is None
        return self._connection

    def _open(self) -> sqlite3.Connection:
        """The cache, opened for reading and writing; OSError or sqlite3.Error when it cannot be."""
        folder = self.path.parent
        if notices.is_unwritable(folder):
            raise PermissionError(errno.EACCES, "not writable in this run")
        private_dir(folder)
        if not os.access(folder, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        _private_file(self.path)
        deadline = time.monotonic() + self.timeout_s
        while True:
            connection = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.execute(_MODELS)
                return connection
            except sqlite3.Error as error:
                connection.close()
                # Switching a new file to WAL does not wait on the busy timeout: when another run
                # is doing the same at that moment, SQLite answers "locked" at once. Try again.
                if _code(error) not in _BUSY or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _open_read_only(self) -> sqlite3.Connection | None:
        """The cache as it is, in a folder this run cannot write to (nobody can change it meanwhile)."""
        if not self.path.is_file() or self.path.is_symlink():
            return None
        # with what a killed run left in its -wal and -shm, else the file alone
        for options in ("mode=ro", "mode=ro&immutable=1"):
            try:
                connection = sqlite3.connect(f"{self.path.absolute().as_uri()}?{options}", uri=True,
                                             isolation_level=None)
            except sqlite3.Error:
                continue
            try:
                connection.execute("SELECT COUNT(*) FROM models").fetchone()
                return connection
            except sqlite3.Error:
                connection.close()
        return None

    def _rebuild(self) -> None:
        """Remove a damaged cache file (and its -wal and -shm): the next connection starts afresh."""
        self._rebuilt = True
        self.close()
        self._tables.clear()
        try:
            for path in _files(self.path):
                path.unlink(missing_ok=True)
        except OSError as error:
            notices.unwritable(self.path.parent, error)
            self._broken = True

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
            found[:] = False
            if _code(error) in _DAMAGED and not self._rebuilt:
                notices.damaged("embedding cache", self.path, error)
                self._rebuild()
            else:
                log.warning("embedding cache %s cannot be read (%s): embeddings are computed without it",
                            self.path, error)
                self._broken = True
                self.close()
        return found

    def store(self, model: str, vectors: Mapping[bytes, np.ndarray]) -> None:
        """Add vectors in one transaction: all of them are committed, or none."""
        connection = self._connect()
        if connection is None or self._read_only or not vectors:
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
        except sqlite3.Error as error:  # a full disk, a folder made read-only meanwhile, a damaged file
            if _code(error) in _DAMAGED and not self._rebuilt:
                notices.damaged("embedding cache", self.path, error)
                self._rebuild()
            else:
                notices.unwritable(self.path.parent, error)
                self._read_only = True

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
