"""The rules every stream row obeys, whatever its source: a trusted date, bounded texts, versions that only go
forward, and the merge of one fetch's rows into the stored corpus (docs/streams.md has the row keys).

Time is data, not trust: a row dated after now + a day, or before 1991, is kept with a clamped date and a
warning, so no answer can move the window or stop the paging; the window itself counts from today.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

EARLIEST = datetime(1991, 1, 1, tzinfo=UTC)  # arXiv began in August 1991: no stream paper is older
FUTURE_SLACK = timedelta(days=1)  # a server's clock a little ahead of ours (time zones) is no lie
MAX_TITLE = 1_000  # characters; the longest real titles are about 400
MAX_ABSTRACT = 20_000  # arXiv caps abstracts at 1,920; PubMed's structured ones can reach ~10,000
MAX_AUTHORS = 5_000  # names; large collaborations list about 3,000
MAX_NAME = 200  # characters of one author's name
_EPOCH = datetime.fromtimestamp(0, UTC)


@dataclass
class RowNotes:
    """What the rules changed in one fetch's rows: (row id, what was done) for dates clamped and texts cut."""

    clamped: list[tuple[str, str]] = field(default_factory=list)
    cut: list[tuple[str, str]] = field(default_factory=list)


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 date or time (a row's `updated`) → an aware datetime (UTC when it names no zone), or None."""
    try:
        when = datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def row_time(row: dict[str, Any]) -> datetime:
    """When a row's version was last updated (`updated`), the epoch if unreadable (so it leaves the window)."""
    return parse_time(row.get("updated")) or _EPOCH


def version_of(row: dict[str, Any]) -> int:
    """A row's version (`version`; `arxiv_version` in corpora stored before the stream design), 1 if none."""
    value = row.get("version", row.get("arxiv_version"))
    try:
        return max(1, int(value))
    except (TypeError, ValueError, OverflowError):
        return 1


def upgrade(row: dict[str, Any]) -> dict[str, Any]:
    """A row stored before the stream design: its `arxiv_version` becomes `version` (a number)."""
    if "arxiv_version" in row:
        row.setdefault("version", row["arxiv_version"])
        del row["arxiv_version"]
    row["version"] = version_of(row)
    return row


def trusted(when: datetime, now: datetime) -> tuple[datetime, str]:
    """`when` kept inside [1991, now + a day]: (the date to use, why it was clamped or "")."""
    if when > now + FUTURE_SLACK:
        return now, f"dated {_day(when)}, in the future; counted as today"
    if when < EARLIEST:
        return EARLIEST, f"dated {_day(when)}, before 1991; counted as 1991-01-01"
    return when, ""


def _day(when: datetime) -> str:
    """A date as said in a warning; a parser's stand-in for a year a datetime cannot hold says so."""
    return "after the year 9999" if when.year == 9999 else "before the year 1" if when.year == 1 else \
        when.date().isoformat()


def checked_row(row: dict[str, Any], now: datetime, notes: RowNotes) -> dict[str, Any]:
    """One stream row as it may be stored: its dates trusted, its version a number, its texts `rendered`."""
    key = str(row.get("id"))
    for name in ("updated", "published"):
        when = parse_time(row.get(name))
        if when is None:
            continue
        kept, why = trusted(when, now)
        if why:
            row[name] = kept.isoformat(timespec="seconds")
            if name == "updated":
                notes.clamped.append((key, why))
            elif isinstance(row.get("year"), int):
                row["year"] = kept.year
    upgrade(row)
    return rendered(row, notes)


def rendered(row: dict[str, Any], notes: RowNotes) -> dict[str, Any]:
    """A row's title, abstract and authors within their caps (cut with a note), then as they will be shown
    (HTML, LaTeX and TeX accents rendered once, when stored, not on every load); every fetch stores through it."""
    from recommender.text import clean_text

    key = str(row.get("id"))
    title = _cut(str(row.get("title") or ""), MAX_TITLE, key, "title", notes)
    row["title"] = clean_text(title) or title
    if isinstance(row.get("abstract"), str):
        row["abstract"] = clean_text(_cut(row["abstract"], MAX_ABSTRACT, key, "abstract", notes)) or None
    authors = row.get("authors") or []
    if isinstance(authors, list):
        if len(authors) > MAX_AUTHORS:
            notes.cut.append((key, f"{len(authors):,} authors cut to the first {MAX_AUTHORS:,}"))
            authors = authors[:MAX_AUTHORS]
        names = (clean_text(_cut(str(name), MAX_NAME, key, "author name", notes)) for name in authors)
        row["authors"] = [name for name in names if name]
    return row


def _cut(text: str, cap: int, key: str, what: str, notes: RowNotes) -> str:
    if len(text) <= cap:
        return text
    notes.cut.append((key, f"a {what} of {len(text):,} characters cut to {cap:,}"))
    head = text[:cap]
    space = head.rfind(" ", cap - 200)
    return (head[:space] if space > 0 else head).rstrip() + "…"


@dataclass
class MergeCounts:
    """What one merge did: ids new and with a new version, rows kept as stored, rows read more than once,
    rows of other subjects and rows older than the window left out (the oldest of them), rows that expired."""

    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    repeated: int = 0
    other: int = 0
    too_old: int = 0
    oldest_left_out: datetime | None = None
    expired: int = 0
    changed: bool = False


def merge(stored: dict[str, dict[str, Any]], rows: Iterable[dict[str, Any]], window_start: datetime,
          wanted: Callable[[dict[str, Any]], bool], counts: MergeCounts) -> None:
    """Fold `rows` into `stored` (one row per version-less id; the highest version wins, in whatever order the
    rows come, and a stored row is replaced only by a higher version), then drop the stored rows that left the
    window; nothing leaves for any other reason."""
    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        key = str(row["id"])
        if key in best:
            counts.repeated += 1  # paging a changing result set repeats entries; a cross-list may too
            if version_of(row) <= version_of(best[key]):
                continue
        best[key] = row
    for key, row in best.items():
        if not wanted(row):
            counts.other += 1
            continue
        when = row_time(row)
        if when < window_start:
            counts.too_old += 1
            counts.oldest_left_out = min(when, counts.oldest_left_out or when)
            continue
        old = stored.get(key)
        if old is None:
            counts.new.append(key)
        elif version_of(row) > version_of(old):
            counts.updated.append(key)
        else:
            counts.unchanged += 1
            continue
        stored[key] = row
        counts.changed = True
    gone = [key for key, row in stored.items() if row_time(row) < window_start]
    for key in gone:
        del stored[key]
    counts.expired = len(gone)
    counts.changed = counts.changed or bool(gone)


def flat(value: Any) -> str:
    """Titles and abstracts break lines mid-sentence; one space between words (str.split's whitespace is the
    regex \\s's, and splitting is quicker than a substitution)."""
    return " ".join(str(value or "").split())


MARKUP_PER_ENTRY = 200  # '<' of one entry, on average: an arXiv entry has ~60, a 3,000-author one 12,000
MARKUP_BASE = 10_000


def check_markup(body: bytes, where: str, entries: int) -> None:
    """Bound an XML answer's parsing work before it is parsed (a parser spends ~25 µs a tag: 60 MB of empty
    tags would take six minutes): at most MARKUP_PER_ENTRY tags a requested entry; over it, ValueError."""
    allowed = MARKUP_BASE + MARKUP_PER_ENTRY * max(1, entries)
    tags = body.count(b"<")
    if tags > allowed:
        raise ValueError(f"{where}: the answer holds {tags:,} tags for at most {entries:,} entries (zotrec's limit "
                         f"is {allowed:,}, so that reading it stays quick); refused")
