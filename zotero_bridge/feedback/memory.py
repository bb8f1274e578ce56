"""zotrec's memory of what it recommended to each library, and what became of it.

One SQLite file in the user data folder (history.sqlite, mode 0600). A library is named as Zotero names it,
`user:<id>` or `group:<id>`, whichever source read it (Web API, zotero.sqlite, local API), so a fate seen in
the desktop database counts for the recommendations the Web API wrote. A run's rows and the fates read
in it are stored in one transaction: a killed run leaves the previous state.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zotero_bridge.errors import BridgeError, full_disk_in_one_line, is_disk_full

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, library TEXT NOT NULL, at TEXT NOT NULL, collection TEXT NOT NULL,
    collection_key TEXT, library_version INTEGER, steering TEXT);
CREATE TABLE IF NOT EXISTS shown (
    run_id INTEGER NOT NULL, corpus_id TEXT NOT NULL, title TEXT NOT NULL, rank INTEGER, score REAL,
    item_key TEXT, action TEXT NOT NULL, PRIMARY KEY (run_id, corpus_id));
CREATE TABLE IF NOT EXISTS papers (
    library TEXT NOT NULL, corpus_id TEXT NOT NULL, title TEXT NOT NULL, item_key TEXT NOT NULL,
    collection_key TEXT NOT NULL, fingerprint TEXT NOT NULL, status TEXT NOT NULL,
    fate TEXT NOT NULL DEFAULT 'untouched', why TEXT NOT NULL DEFAULT '', untouched_runs INTEGER NOT NULL DEFAULT 0,
    child_seen INTEGER NOT NULL DEFAULT 0, first_run INTEGER NOT NULL, last_run INTEGER NOT NULL,
    PRIMARY KEY (library, corpus_id));
CREATE TABLE IF NOT EXISTS group_state (library TEXT PRIMARY KEY, version INTEGER NOT NULL, me INTEGER, name TEXT);
CREATE TABLE IF NOT EXISTS group_members (
    library TEXT NOT NULL, item_key TEXT NOT NULL, user_id INTEGER NOT NULL, PRIMARY KEY (library, item_key));
CREATE TABLE IF NOT EXISTS ratings (
    library TEXT NOT NULL, corpus_id TEXT NOT NULL, title TEXT NOT NULL, rating TEXT NOT NULL, at TEXT NOT NULL,
    PRIMARY KEY (library, corpus_id));
"""
LOCK_WAIT_SECONDS = 30.0  # how long a memory file another zotrec run holds is waited for before saying so
HISTORY_AFRESH = "move it away to start afresh (zotrec then forgets what you kept and dismissed)"
IN_COLLECTION, RETIRED = "in", "retired"  # retired: zotrec took it out itself (fell out of the top N)
TRASHED = "trashed"  # zotrec took it out and moved it to Zotero's trash (created by zotrec, never touched)


@dataclass(frozen=True)
class Remembered:
    """One paper zotrec created in a library, and its last known fate."""

    corpus_id: str
    title: str
    item_key: str
    collection_key: str
    fingerprint: str
    status: str = IN_COLLECTION
    fate: str = "untouched"
    why: str = ""
    untouched_runs: int = 0
    child_seen: bool = False


@dataclass(frozen=True)
class ShownPaper:
    """One line of a run: a paper zotrec planned for the collection (action add/link/keep/remove)."""

    corpus_id: str
    title: str
    rank: int | None
    score: float | None
    item_key: str
    action: str


def check_whole(db: sqlite3.Connection) -> None:
    """sqlite3.DatabaseError unless every page of the file reads (a damaged page otherwise surfaces later, in
    the middle of a run, as "database disk image is malformed"); a memory file is small, the check quick."""
    found = db.execute("PRAGMA quick_check(1)").fetchone()
    if not found or found[0] != "ok":
        raise sqlite3.DatabaseError(f"damaged pages: {found[0] if found else 'no answer'}")


def is_locked(error: Exception) -> bool:
    """SQLite's answer when another connection holds the file (SQLITE_BUSY / SQLITE_LOCKED)."""
    return isinstance(error, sqlite3.OperationalError) and ("locked" in str(error) or "busy" in str(error))


class MemoryLocked(BridgeError):
    """A memory file another zotrec run still held after LOCK_WAIT_SECONDS."""


class MemoryDamaged(BridgeError):
    """A memory file SQLite cannot read (damaged pages, not a database)."""


def unusable(path: Path, error: Exception, what: str, afresh: str) -> BridgeError:
    """One line for a memory file SQLite could not use: a lock another zotrec run holds is said as a lock
    (waited for LOCK_WAIT_SECONDS first), never answered with "move it away"; anything else is damage, and
    `afresh` says how to start again."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    if is_locked(error):
        return MemoryLocked(f"{path}: {what} is in use by another zotrec run (still locked after "
                            f"{LOCK_WAIT_SECONDS:g} s); nothing was changed, run again when it has finished")
    return MemoryDamaged(f"{path}: {what} is damaged ({text}); {afresh}")


def memory_path(data_dir: Path | None = None) -> Path:
    from recommender.store import data_dir as default_data_dir  # $ZOTREC_DATA_DIR, else the user data folder

    return (Path(data_dir) if data_dir else default_data_dir()) / "history.sqlite"


class Memory:
    """Open (creating it 0600) the history file at `path`; `read_only` for a caller that only reads it
    (reading-list, `zotrec history`): then nothing is made or written, so a read-only data folder still reads."""

    def __init__(self, path: Path | None = None, *, read_only: bool = False) -> None:
        self.path = Path(path) if path else memory_path()
        if read_only:
            self._open_to_read()
            return
        from recommender.store import prepare_private_file, private_dir

        new = not self.path.exists() and not self.path.is_symlink()
        try:
            with self._room("nothing was written to it"):
                private_dir(self.path.parent)  # 0700 whatever the umask
                prepare_private_file(self.path, "history", replace_link=False)  # never through a link
                self.db = sqlite3.connect(self.path, timeout=LOCK_WAIT_SECONDS)
                try:
                    self.db.executescript(SCHEMA)
                    _add_steering_column(self.db)
                    check_whole(self.db)
                except sqlite3.DatabaseError as error:
                    self.db.close()
                    if is_disk_full(error):
                        raise
                    raise unusable(self.path, error, "zotrec's history", HISTORY_AFRESH) from None
        except BridgeError:
            if new and self.path.is_file() and self.path.stat().st_size == 0:
                self.path.unlink()  # no empty history left behind
            raise

    def _open_to_read(self) -> None:
        """The file opened read-only (tables an older history lacks stand in empty, as TEMP tables); no file
        yet reads as an empty history, kept in memory."""
        if self.path.is_symlink():
            raise BridgeError(f"{self.path}: zotrec's history is a link; refusing to follow it (move it away)")
        try:
            if not self.path.is_file():
                self.db = sqlite3.connect(":memory:")
                self.db.executescript(SCHEMA)
                return
            self.db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=LOCK_WAIT_SECONDS)
            check_whole(self.db)
            have = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            for statement in SCHEMA.split(";"):
                name = statement.split("EXISTS", 1)[-1].split("(", 1)[0].strip()
                if name and name not in have:
                    self.db.execute(statement.replace("CREATE TABLE", "CREATE TEMP TABLE"))
        except sqlite3.DatabaseError as error:
            raise unusable(self.path, error, "zotrec's history", HISTORY_AFRESH) from None

    @contextlib.contextmanager
    def _room(self, kept: str) -> Iterator[None]:
        """A full disk is one line naming the file (the history is not damaged by it), and so is a lock another
        run held past LOCK_WAIT_SECONDS."""
        try:
            with full_disk_in_one_line(self.path, f"zotrec's history is unharmed ({kept})"):
                yield
        except sqlite3.OperationalError as error:
            if not is_locked(error):
                raise
            raise unusable(self.path, error, "zotrec's history", "") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def papers(self, library: str) -> dict[str, Remembered]:
        """corpus id → what zotrec remembers of the paper it created in `library`."""
        rows = self.db.execute(
            "SELECT corpus_id, title, item_key, collection_key, fingerprint, status, fate, why, untouched_runs, "
            "child_seen FROM papers WHERE library = ?", (library,))
        return {row[0]: Remembered(*row[:8], int(row[8]), bool(row[9])) for row in rows}

    def record_run(self, library: str, collection: str, collection_key: str | None, library_version: int | None,
                   shown: Sequence[ShownPaper], created: Iterable[Remembered], updated: Iterable[Remembered],
                   steering: Mapping[str, Any] | None = None) -> int:
        """Store one written run: its lines, the papers it created, every paper's fate as read now, and
        how the run was steered (Steering.as_dict: prefer, avoid, recent_half_life; None: not steered)."""
        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        steered = json.dumps(dict(steering), ensure_ascii=False) if steering else None
        with self._room("it keeps what it held before this run"), self.db:
            run = self.db.execute("INSERT INTO runs (library, at, collection, collection_key, library_version, "
                                  "steering) VALUES (?, ?, ?, ?, ?, ?)",
                                  (library, at, collection, collection_key, library_version, steered)).lastrowid
            self.db.executemany("INSERT OR REPLACE INTO shown VALUES (?, ?, ?, ?, ?, ?, ?)",
                                [(run, s.corpus_id, s.title, s.rank, s.score, s.item_key, s.action) for s in shown])
            for paper in created:
                self.db.execute("INSERT OR REPLACE INTO papers (library, corpus_id, title, item_key, collection_key, "
                                "fingerprint, status, first_run, last_run) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                (library, paper.corpus_id, paper.title, paper.item_key, paper.collection_key,
                                 paper.fingerprint, paper.status, run, run))
            for paper in updated:
                self.db.execute("UPDATE papers SET status = ?, fate = ?, why = ?, untouched_runs = ?, child_seen = ?, "
                                "last_run = ? WHERE library = ? AND corpus_id = ?",
                                (paper.status, paper.fate, paper.why, paper.untouched_runs, int(paper.child_seen),
                                 run, library, paper.corpus_id))
        return int(run)

    def runs(self, library: str | None = None) -> list[tuple]:
        """(run id, library, when, collection, papers shown) for every run, newest first."""
        where, args = ("WHERE r.library = ?", (library,)) if library else ("", ())
        return self.db.execute(
            f"SELECT r.id, r.library, r.at, r.collection, COUNT(s.corpus_id) FROM runs r "
            f"LEFT JOIN shown s ON s.run_id = r.id {where} GROUP BY r.id ORDER BY r.id DESC", args).fetchall()

    def steering(self, run_id: int) -> dict[str, Any] | None:
        """How run `run_id` was steered (prefer, avoid, recent_half_life), None when it was not."""
        try:
            row = self.db.execute("SELECT steering FROM runs WHERE id = ?", (run_id,)).fetchone()
        except sqlite3.OperationalError:  # a read-only history from before the column
            return None
        if not row or not row[0]:
            return None
        try:
            found = json.loads(row[0])
        except ValueError:
            return None  # a hand-edited history: the run is shown without its steering
        return found if isinstance(found, dict) else None

    def shown(self, run_id: int) -> list[ShownPaper]:
        rows = self.db.execute("SELECT corpus_id, title, rank, score, item_key, action FROM shown WHERE run_id = ? "
                               "ORDER BY rank IS NULL, rank", (run_id,))
        return [ShownPaper(*row) for row in rows]

    def libraries(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT DISTINCT library FROM runs ORDER BY library")]

    # ---- who saved what in a group library (the group signal) -------------------------------------------
    def group_state(self, library: str) -> tuple[int, int | None, str]:
        """(the library version the member list matches, 0 if none; this key's user id; the group's name)."""
        row = self.db.execute("SELECT version, me, name FROM group_state WHERE library = ?", (library,)).fetchone()
        return (int(row[0]), row[1], row[2] or "") if row else (0, None, "")

    def group_members(self, library: str) -> dict[str, int]:
        """item key → the member who created it."""
        rows = self.db.execute("SELECT item_key, user_id FROM group_members WHERE library = ?", (library,))
        return {key: int(user) for key, user in rows}

    def store_group(self, library: str, version: int, me: int | None, name: str, created: dict[str, int],
                    live: set[str]) -> None:
        with self._room("it keeps the group's members as read before"), self.db:
            self.db.executemany("INSERT OR REPLACE INTO group_members VALUES (?, ?, ?)",
                                [(library, key, user) for key, user in created.items()])
            gone = [(library, key) for key in self.group_members(library) if key not in live]
            self.db.executemany("DELETE FROM group_members WHERE library = ? AND item_key = ?", gone)
            self.db.execute("INSERT OR REPLACE INTO group_state VALUES (?, ?, ?, ?)", (library, version, me, name))

    def forget(self, library: str | None = None) -> int:
        """Forget one library (or all): its runs and fates. Returns how many papers were forgotten."""
        where, args = ("WHERE library = ?", (library,)) if library else ("", ())
        with self._room("nothing was forgotten"), self.db:
            count = self.db.execute(f"SELECT COUNT(*) FROM papers {where}", args).fetchone()[0]
            self.db.execute(f"DELETE FROM shown WHERE run_id IN (SELECT id FROM runs {where})", args)
            self.db.execute(f"DELETE FROM runs {where}", args)
            self.db.execute(f"DELETE FROM papers {where}", args)
            self.db.execute(f"DELETE FROM group_members {where}", args)
            self.db.execute(f"DELETE FROM group_state {where}", args)
            self.db.execute(f"DELETE FROM ratings {where}", args)  # the page's explicit ratings (ratings.py)
        return int(count)


def _add_steering_column(db: sqlite3.Connection) -> None:
    """A history written before runs kept their steering gets the column (empty for its old runs)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    if "steering" not in columns:
        try:
            with db:
                db.execute("ALTER TABLE runs ADD COLUMN steering TEXT")
        except sqlite3.OperationalError as error:
            if "readonly" not in str(error):  # a read-only history is read as it is (its runs unsteered)
                raise
