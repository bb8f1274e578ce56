"""The incremental local copy of one Zotero Web API library: SQLite in the user cache dir, keyed by version.

It holds the top-level items (trashed ones flagged, so a paper the user threw away is not re-created), the
collections, the library version they match, and zotrec's record of what it wrote into which collection
(the item version right after our write: if the version moved since, the user touched the item).
Data and version are stored in one transaction, so a killed run leaves the previous consistent state.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from zotero_bridge.errors import full_disk_in_one_line, is_disk_full

log = logging.getLogger(__name__)

SCHEMA_VERSION = "1"
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (key TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS collections (key TEXT PRIMARY KEY, version INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS written (
    collection_key TEXT NOT NULL, item_key TEXT NOT NULL, corpus_id TEXT NOT NULL,
    version INTEGER NOT NULL, created INTEGER NOT NULL, PRIMARY KEY (collection_key, item_key));
CREATE TABLE IF NOT EXISTS pending (
    item_key TEXT PRIMARY KEY, collection_key TEXT NOT NULL, corpus_id TEXT NOT NULL, sent TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS leaving (item_key TEXT PRIMARY KEY, collection_key TEXT NOT NULL);
"""


@dataclass(frozen=True)
class WrittenRecord:
    """zotrec put `item_key` into `collection_key` (created it if `created`); `version` right after."""

    collection_key: str
    item_key: str
    corpus_id: str
    version: int
    created: bool


def cache_path(endpoint: str, library_type: str, library_id: str, cache_dir: Path | None = None) -> Path:
    """One file per endpoint and library, e.g. ~/.cache/zotrec/zotero-web/user-123-1a2b3c4d.sqlite."""
    from recommender.store import cache_dir as default_cache_dir  # $ZOTREC_CACHE_DIR, else the user's

    folder = Path(cache_dir) if cache_dir else default_cache_dir() / "zotero-web"
    digest = hashlib.sha256(endpoint.rstrip("/").encode()).hexdigest()[:8]
    return folder / f"{library_type}-{library_id}-{digest}.sqlite"


class WebCache:
    """Open (or rebuild, if unreadable or from another zotrec version) the cache file at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        from recommender.store import private_dir

        with self._room("the Zotero cache was left as it was"):
            private_dir(self.path.parent)  # 0700 whatever the umask
            try:
                self._open()
            except sqlite3.DatabaseError as error:
                self._close_quietly()
                if is_disk_full(error):  # not damaged: kept for when there is room again
                    raise
                log.warning("The Zotero cache %s could not be read (%s); reading the library again.",
                            self.path, error)
                self.path.unlink(missing_ok=True)
                self._open()

    def _open(self) -> None:
        from recommender.store import prepare_private_file

        # a copy of the user's library: the user's own 0600 file (SQLite gives its journal the same mode); a link
        # there is replaced, never followed or chmod-ed through; another user's file is refused
        prepare_private_file(self.path, "Zotero cache", replace_link=True)
        self.db = sqlite3.connect(self.path)
        self.db.executescript(_TABLES)
        if self._meta("schema") not in (None, SCHEMA_VERSION):
            self.db.executescript("DELETE FROM items; DELETE FROM collections; DELETE FROM meta;")
        with self.db:
            self._set_meta("schema", SCHEMA_VERSION)

    def close(self) -> None:
        self.db.close()

    def _close_quietly(self) -> None:
        if (db := getattr(self, "db", None)) is not None:
            db.close()

    def _room(self, kept: str):
        return full_disk_in_one_line(self.path, kept)

    def _kept(self) -> str:
        return f"the Zotero cache keeps the library as of version {self.library_version}"

    def _meta(self, name: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, name: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", (name, value))

    @property
    def library_version(self) -> int:
        """The library version the cached objects match; 0 means nothing is cached yet."""
        return int(self._meta("library_version") or 0)

    def items(self) -> dict[str, dict]:
        return {key: json.loads(data) for key, data in self.db.execute("SELECT key, data FROM items ORDER BY rowid")}

    def collections(self) -> dict[str, dict]:
        rows = self.db.execute("SELECT key, data FROM collections ORDER BY rowid")
        return {key: json.loads(data) for key, data in rows}

    def replace_all(self, items: Iterable[dict], collections: Iterable[dict], version: int) -> None:
        """A full read: forget everything cached (not the written records) and store this state."""
        with self._room(self._kept()), self.db:
            self.db.execute("DELETE FROM items")
            self.db.execute("DELETE FROM collections")
            self._store(items, collections, (), (), version)

    def apply_changes(self, items: Iterable[dict], collections: Iterable[dict], deleted_items: Iterable[str],
                      deleted_collections: Iterable[str], version: int) -> None:
        """An incremental read: upsert what changed, drop what was deleted, move the version, atomically."""
        with self._room(self._kept()), self.db:
            self._store(items, collections, deleted_items, deleted_collections, version)

    def _store(self, items, collections, deleted_items, deleted_collections, version: int) -> None:
        self.db.executemany("INSERT OR REPLACE INTO items (key, version, data) VALUES (?, ?, ?)",
                            [(d["key"], int(d.get("version") or 0), json.dumps(d)) for d in items])
        self.db.executemany("INSERT OR REPLACE INTO collections (key, version, data) VALUES (?, ?, ?)",
                            [(d["key"], int(d.get("version") or 0), json.dumps(d)) for d in collections])
        self.db.executemany("DELETE FROM items WHERE key = ?", [(key,) for key in deleted_items])
        self.db.executemany("DELETE FROM collections WHERE key = ?", [(key,) for key in deleted_collections])
        self._set_meta("library_version", str(int(version)))

    # ---- what zotrec wrote ----------------------------------------------------------------------------
    def written(self, collection_key: str) -> dict[str, WrittenRecord]:
        rows = self.db.execute("SELECT collection_key, item_key, corpus_id, version, created FROM written "
                               "WHERE collection_key = ?", (collection_key,))
        return {row[1]: WrittenRecord(row[0], row[1], row[2], int(row[3]), bool(row[4])) for row in rows}

    def record_written(self, records: Iterable[WrittenRecord]) -> None:
        with self._room("the items are in Zotero; the cache keeps its earlier record of them"), self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO written (collection_key, item_key, corpus_id, version, created) "
                "VALUES (?, ?, ?, ?, ?)",
                [(r.collection_key, r.item_key, r.corpus_id, r.version, int(r.created)) for r in records])

    def forget_written(self, collection_key: str, item_keys: Iterable[str]) -> None:
        with self._room("the cache keeps its earlier record"), self.db:
            self.db.executemany("DELETE FROM written WHERE collection_key = ? AND item_key = ?",
                                [(collection_key, key) for key in item_keys])

    # ---- what zotrec sent and has not yet remembered (a run killed before the answer leaves these) ------
    def record_pending(self, collection_key: str, papers: Iterable[tuple[str, dict]]) -> None:
        """Before sending new papers: (corpus id, the JSON sent) of each."""
        with self._room("nothing was sent to Zotero"), self.db:
            self.db.executemany("INSERT OR REPLACE INTO pending (item_key, collection_key, corpus_id, sent) "
                                "VALUES (?, ?, ?, ?)",
                                [(o["key"], collection_key, corpus_id, json.dumps(o)) for corpus_id, o in papers])

    def pending(self) -> dict[str, tuple[str, str, dict]]:
        """item key → (collection key, corpus id, the JSON sent)."""
        rows = self.db.execute("SELECT item_key, collection_key, corpus_id, sent FROM pending ORDER BY rowid")
        return {key: (collection, corpus_id, json.loads(sent)) for key, collection, corpus_id, sent in rows}

    def forget_pending(self, item_keys: Iterable[str]) -> None:
        with self._room("the cache keeps its list of papers sent"), self.db:
            self.db.executemany("DELETE FROM pending WHERE item_key = ?", [(key,) for key in item_keys])

    # ---- papers zotrec is taking out of its collection (a run killed before it remembered leaves these) --
    def record_leaving(self, collection_key: str, item_keys: Iterable[str]) -> None:
        """Before sending a plan's removals: the next run knows zotrec took them out, not the user."""
        with self._room("nothing was sent to Zotero"), self.db:
            self.db.executemany("INSERT OR REPLACE INTO leaving (item_key, collection_key) VALUES (?, ?)",
                                [(key, collection_key) for key in item_keys])

    def leaving(self) -> dict[str, str]:
        """item key → the collection zotrec was taking it out of."""
        return dict(self.db.execute("SELECT item_key, collection_key FROM leaving"))

    def forget_leaving(self) -> None:
        with self._room("the cache keeps its list of papers taken out"), self.db:
            self.db.execute("DELETE FROM leaving")
