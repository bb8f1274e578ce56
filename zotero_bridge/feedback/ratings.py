"""Explicit ratings from the triage page (`zotrec serve`): what the user said of a paper where they read it.

Kept in the memory's own file (history.sqlite, the `ratings` table of memory.py's schema), one row per library
and paper, the latest verdict winning, written in one transaction each. A rating is a fate the user gave by hand:
`learn.feedback_for` turns them into the recommender's lists beside the fates read from Zotero.

- **more** (More like this): an explicit positive; the paper leaves the list and lifts its like;
- **not** (Not for me): an explicit dismissal; the paper never comes back and its like leans down;
- **saved** (Save): the paper is a Zotero item now (zotero_bridge/sync/save.py); kept, like an adopted paper;
- **later** (Later): out of today's page, no verdict (it may come back on another day).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

log = logging.getLogger(__name__)

MORE, NOT, SAVED, LATER = "more", "not", "saved", "later"
RATINGS = (MORE, NOT, SAVED, LATER)
NOT_FOR_ME = "marked not for me"  # learn.how_dismissed's word for a 'not' rating: "less like 'X', which you …"


@dataclass(frozen=True)
class Rating:
    """One verdict: `rating` one of RATINGS, `at` ISO UTC seconds."""

    corpus_id: str
    title: str
    rating: str
    at: str

    def day(self, zone) -> date:
        """The user's calendar day the rating was given on (`zone`: days.zone()), not UTC's: "Later" at 23:30
        in Berlin is put off until Berlin's tomorrow."""
        return datetime.strptime(self.at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).astimezone(zone).date()


def files_identity(specs: Sequence[str]) -> str:
    """The memory's name for a library read from export files (no Zotero identity): the files, resolved."""
    return "files:" + "|".join(sorted(str(Path(spec).expanduser().resolve()) for spec in specs))


def record_rating(memory, library: str, corpus_id: str, title: str, rating: str) -> Rating:
    """Store `rating` for one paper (replacing an earlier one) in one transaction; returns what was stored."""
    if rating not in RATINGS:
        raise ValueError(f"unknown rating {rating!r} (one of {', '.join(RATINGS)})")
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with memory._room("it keeps the ratings it held before"), memory.db:
        memory.db.execute("INSERT OR REPLACE INTO ratings (library, corpus_id, title, rating, at) "
                          "VALUES (?, ?, ?, ?, ?)", (library, corpus_id, title, rating, at))
    return Rating(corpus_id, title, rating, at)


def read_ratings(memory, library: str) -> dict[str, Rating]:
    """corpus id → the latest rating of `library` (none in a read-only history from before ratings)."""
    try:
        rows = memory.db.execute("SELECT corpus_id, title, rating, at FROM ratings WHERE library = ?", (library,))
        return {row[0]: Rating(*row) for row in rows if row[2] in RATINGS}
    except sqlite3.OperationalError:
        return {}


def rated_libraries(memory) -> list[str]:
    """Every library with a rating (a library read from files has ratings and no runs)."""
    try:
        return [row[0] for row in memory.db.execute("SELECT DISTINCT library FROM ratings ORDER BY library")]
    except sqlite3.OperationalError:
        return []


WORDS = {MORE: "more like this", NOT: "not for me", SAVED: "saved", LATER: "later"}


def ratings_if_any(library: str) -> dict[str, Rating]:
    """The ratings kept for `library`, read only (reading a list writes nothing, creates no history, and a
    history it cannot read is one warning: the list is made without the ratings)."""
    from urllib.parse import quote

    from zotero_bridge.feedback.memory import memory_path

    path = memory_path()
    if not path.is_file() or path.is_symlink():
        return {}
    try:
        db = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT corpus_id, title, rating, at FROM ratings WHERE library = ?",
                              (library,)).fetchall()
        finally:
            db.close()
    except sqlite3.Error as error:
        if "no such table" not in str(error):  # a history from before ratings has none
            log.warning("%s: the page's ratings cannot be read (%s); the list is made without them", path, error)
        return {}
    return {row[0]: Rating(*row) for row in rows if row[2] in RATINGS}


def later_today(ratings: Mapping[str, Rating], now: datetime | None = None) -> frozenset[str]:
    """Papers put off today (the user's calendar day, feedback/days.py): left out of today's page, back on
    another day."""
    from zotero_bridge.feedback import days

    zone = days.zone()
    today = (now or days.utc_now()).astimezone(zone).date()
    return frozenset(cid for cid, r in ratings.items() if r.rating == LATER and _day(r, zone) == today)


def _day(rating: Rating, zone) -> date | None:
    try:
        return rating.day(zone)
    except ValueError:  # a hand-edited history's timestamp: no day, so not put off today
        return None
