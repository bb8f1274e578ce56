"""Each daily paper shown once: which arXiv papers a list, a sync or a digest has shown to a library, and when.

One SQLite file beside sync's history (seen.sqlite in the data folder, 0600). A paper first shown on an
earlier day is left out of later lists, syncs and digests (unless `--include-seen`); on the day it was first
shown it stays, so running a list twice in a day gives the same list. Only daily corpora count (arXiv ids):
a conference corpus is a fixed list the user works through, and sync's own memory keeps its rules.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from recommender.streams import is_stream_id
from zotero_bridge.errors import BridgeError
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


class SeenMemory:
    """Open (creating it 0600, never through a link) the seen memory."""

    def __init__(self, path: Path | None = None) -> None:
        from recommender.store import private_dir

        self.path = Path(path) if path else seen_path()
        private_dir(self.path.parent)
        if self.path.is_symlink():
            raise BridgeError(f"{self.path} is a link; zotrec does not write through links (move it away)")
        try:
            handle = os.open(self.path, os.O_CREAT | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                os.fchmod(handle, 0o600)  # 0600 whatever the umask, on the file opened (never through a link)
            finally:
                os.close(handle)
            self.db = sqlite3.connect(self.path, timeout=30)
            self.db.executescript(SCHEMA)
        except (OSError, sqlite3.DatabaseError) as error:
            raise BridgeError(f"{self.path}: zotrec's memory of papers shown cannot be used ({error}); move it "
                              "away to start afresh") from None

    def __enter__(self) -> SeenMemory:
        return self

    def __exit__(self, *_: object) -> None:
        self.db.close()

    def first_days(self, library: str) -> dict[str, str]:
        """corpus id → the day (ISO) it was first shown to `library`."""
        return dict(self.db.execute("SELECT corpus_id, first_day FROM seen WHERE library = ?", (library,)))

    def remember(self, library: str, ids: Iterable[str], day: date, via: str) -> int:
        """Record `ids` as shown on `day` (a paper shown before keeps its first day); returns how many were new."""
        rows = [(library, corpus_id, day.isoformat(), via) for corpus_id in ids if is_daily(corpus_id)]
        with self.db:
            before = self.db.total_changes
            self.db.executemany("INSERT OR IGNORE INTO seen VALUES (?, ?, ?, ?)", rows)
            return self.db.total_changes - before

    def forget(self, library: str | None = None) -> None:
        with self.db:
            self.db.execute("DELETE FROM seen" + (" WHERE library = ?" if library else ""),
                            (library,) if library else ())


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
        day = day or date.today()
        library = library_key(specs, options)
        if include or (corpus is not None and not any(is_daily(paper.id) for paper in corpus)) \
                or not seen_path().is_file():
            return cls(library, day, include=include)
        with SeenMemory() as memory:
            first = memory.first_days(library)
        return cls(library, day, frozenset(key for key, shown in first.items() if shown < day.isoformat()))

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
