"""Each daily paper shown once: which arXiv papers a list, a sync or a digest has shown to a library, and when.

One SQLite file beside sync's history (seen.sqlite in the data folder, 0600). A paper first shown on an
earlier day is left out of later lists, syncs and digests (unless `--include-seen`); on the day it was first
shown it stays, so running a list twice in a day gives the same list. Days are the user's calendar days in
the recorded zone (feedback/days.py); a first day after today (a clock once set ahead) counts as earlier.
Only daily corpora count (arXiv ids): a conference corpus is a fixed list the user works through, and sync's
own memory keeps its rules.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from recommender.streams import is_stream_id
from recommender.words import plural
from zotero_bridge.errors import BridgeError
from zotero_bridge.feedback import memory as history
from zotero_bridge.feedback.memory import MemoryDamaged, check_whole, is_locked, unusable
from zotero_bridge.sources.feeds import FEED_ID_PREFIX

SCHEMA = """
CREATE TABLE IF NOT EXISTS seen (
    library TEXT NOT NULL, corpus_id TEXT NOT NULL, first_day TEXT NOT NULL, via TEXT NOT NULL,
    PRIMARY KEY (library, corpus_id));
"""


def is_daily(corpus_id: str) -> bool:
    """A paper of a daily corpus (shown once: a stream's, recommender/corpus/stream.py, or an item of the
    feeds followed in Zotero, zotero_bridge/sources/feeds.py), as opposed to a conference's fixed list."""
    return is_stream_id(corpus_id) or corpus_id.startswith(FEED_ID_PREFIX)


def library_key(specs: Sequence[str], options=None) -> str:
    """The library's name in the seen memory. For now the sources as given (files by absolute path, a
    Zotero API source with its library id); the per-library identity of sync's memory replaces it."""
    parts = []
    for spec in specs:
        if spec.startswith("zotero:web") and getattr(options, "library_id", None):
            parts.append(f"{getattr(options, 'library_type', '') or 'user'}:{options.library_id}")  # as sync names it
        elif spec.startswith("zotero:"):
            parts.append(spec)
        else:
            parts.append(str(Path(spec).expanduser().resolve()) if spec != "-" else "-")
    return "|".join(sorted(parts))


def seen_path() -> Path:
    from recommender.store import data_dir

    return data_dir() / "seen.sqlite"


WHAT = "zotrec's memory of papers shown"
AFRESH = "`zotrec history --reset-seen` starts it afresh (papers shown before may then be shown once more)"


class SeenMemory:
    """Open (creating it 0600, never through a link) the seen memory; `read_only` opens an existing one only
    to read it, so a read-only data folder still lists. A lock is waited for, then said as a lock; damaged
    pages are found at the open (one line), never in the middle of a run."""

    def __init__(self, path: Path | None = None, *, read_only: bool = False) -> None:
        from recommender.store import private_dir

        self.path = Path(path) if path else seen_path()
        if self.path.is_symlink():
            raise BridgeError(f"{self.path} is a link; zotrec does not write through links (move it away)")
        if not read_only:
            private_dir(self.path.parent)  # another user's folder is its own one line (NotPrivate)
        try:
            if read_only:
                self.db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                          timeout=history.LOCK_WAIT_SECONDS)
            else:
                handle = os.open(self.path, os.O_CREAT | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
                try:
                    os.fchmod(handle, 0o600)  # 0600 whatever the umask, on the file opened (never through a link)
                finally:
                    os.close(handle)
                self.db = sqlite3.connect(self.path, timeout=history.LOCK_WAIT_SECONDS)
                self.db.executescript(SCHEMA)
            check_whole(self.db)
        except (OSError, sqlite3.DatabaseError) as error:
            if isinstance(error, OSError) and not isinstance(error, sqlite3.Error):
                raise BridgeError(f"{self.path}: {WHAT} cannot be used ({error.strerror or error})") from None
            raise unusable(self.path, error, WHAT, AFRESH) from None

    def __enter__(self) -> SeenMemory:
        return self

    def __exit__(self, *_: object) -> None:
        self.db.close()

    def first_days(self, library: str) -> dict[str, str]:
        """corpus id → the day (ISO) it was first shown to `library` (none from a file without the table yet)."""
        try:
            return dict(self.db.execute("SELECT corpus_id, first_day FROM seen WHERE library = ?", (library,)))
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                return {}
            raise unusable(self.path, error, WHAT, AFRESH) from None

    def remember(self, library: str, ids: Iterable[str], day: date, via: str) -> int:
        """Record `ids` as shown on `day` (a paper shown before keeps its first day); returns how many were new."""
        rows = [(library, corpus_id, day.isoformat(), via) for corpus_id in ids if is_daily(corpus_id)]
        with self._written(), self.db:
            before = self.db.total_changes
            self.db.executemany("INSERT OR IGNORE INTO seen VALUES (?, ?, ?, ?)", rows)
            return self.db.total_changes - before

    def forget(self, library: str | None = None) -> None:
        with self._written(), self.db:
            self.db.execute("DELETE FROM seen" + (" WHERE library = ?" if library else ""),
                            (library,) if library else ())

    @contextlib.contextmanager
    def _written(self) -> Iterator[None]:
        """A write another run held past the wait is one line naming the lock (nothing was changed)."""
        try:
            yield
        except sqlite3.OperationalError as error:
            if not is_locked(error):
                raise
            raise unusable(self.path, error, WHAT, AFRESH) from None


def reset_seen(path: Path | None = None) -> str:
    """Start the seen memory afresh, for every library: a sound file forgets its papers, a damaged one is moved
    aside (`seen.sqlite.damaged`, kept for a look) so that the next list makes a new one. A lock is an error."""
    path = Path(path) if path else seen_path()
    if not path.is_file() or path.is_symlink():
        return f"No memory of papers shown at {path}; nothing to reset."
    try:
        with SeenMemory(path) as memory:
            count = memory.db.execute("SELECT COUNT(*) FROM seen").fetchone()[0]
            memory.forget()
        return f"Forgot {plural(count, 'paper')} shown before ({path})."
    except MemoryDamaged:
        aside = path.with_name(path.name + ".damaged")
        for suffix in ("", "-journal", "-wal", "-shm"):
            if Path(f"{path}{suffix}").exists():
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
        return f"Moved the damaged {path.name} to {aside}; the next list starts a new memory of papers shown."


def earlier(first_days: dict[str, str], day: date) -> set[str]:
    """The papers first shown on another day than `day`: before it, or after it (a clock that was ahead)."""
    return {key for key, shown in first_days.items() if shown != day.isoformat()}


@dataclass
class SeenFilter:
    """One run's view of what the library was shown before today: rank `widened(n)` papers, `apply` leaves
    the earlier-shown ones out and keeps `n`; `remember` records what the run showed."""

    library: str
    day: date
    hidden: frozenset[str] = field(default_factory=frozenset)
    left_out: int = 0
    include: bool = False

    @classmethod
    def for_run(cls, specs: Sequence[str], options=None, *, include: bool = False, day: date | None = None,
                corpus: Sequence | None = None) -> SeenFilter:
        """The filter of one run; for a `corpus` without daily papers (or before anything was shown) no file is
        opened at all, so a conference list never needs the data folder."""
        from zotero_bridge.feedback.days import today

        day = day or today()
        library = library_key(specs, options)
        # a stat before a look at every paper
        if include or not seen_path().is_file() \
                or (corpus is not None and not any(is_daily(paper.id) for paper in corpus)):
            return cls(library, day, include=include)
        with SeenMemory(read_only=True) as memory:  # reading needs no write access
            first = memory.first_days(library)
        return cls(library, day, frozenset(earlier(first, day)))

    def widened(self, top_n: int) -> int:
        """How many to rank so that `top_n` remain once the seen ones are left out (0: every paper)."""
        return top_n + len(self.hidden) if top_n else 0

    def apply(self, recs: Sequence, top_n: int) -> list:
        """The ranked `recs` without the papers shown before today, `top_n` of them (0: all); `left_out` counts
        the seen papers that ranked among them."""
        kept, self.left_out = [], 0
        for rec in recs:
            if top_n and len(kept) == top_n:
                break
            if rec.paper.id in self.hidden:
                self.left_out += 1
            else:
                kept.append(rec)
        return kept

    def remember(self, recs: Sequence, via: str) -> None:
        """Record what the run showed (daily papers only; nothing is opened for a conference list). The list is
        out already: a memory that cannot be written is one warning, not a failed run."""
        ids = [rec.paper.id for rec in recs if is_daily(rec.paper.id)]
        if not ids:
            return
        try:
            with SeenMemory() as memory:
                memory.remember(self.library, ids, self.day, via)
        except (BridgeError, OSError, sqlite3.Error) as error:
            import logging

            logging.getLogger(__name__).warning("%s; these papers may be shown again tomorrow", error)
