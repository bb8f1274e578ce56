"""Stream corpora: a source's new papers of the last days (`arxiv:cs.LG`, `feed:URL`, `pubmed:QUERY`, …), stored.

A stream is one `StreamSource` adapter (docs/streams.md says how to write one): it names its stored corpus,
lists the service's records page by page through a `Lister` (newest first where the API can), and turns an
answer, live or saved (`--from FILE`), into corpus rows. `fetch_stream` owns the rest, the same for every
source: the window (counted from today, never from an answer's dates), the merge (one row per version-less
id, versions only forward, stream_rows.py), the pause between requests that no Retry-After shortens, the page
guard, the counts, and the stored corpus, rewritten only when something changed and never losing a row
except by the window. recommender/streams.py maps a corpus name's prefix to its adapter; a stream row's id
starts with that prefix and a colon, which is how seen-once memory and the rolling collection know a stream
paper.
"""

from __future__ import annotations

import logging
import math
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

from recommender.bounded_http import Limits
from recommender.corpus.http import NOT_MODIFIED, FetchError, FetchSettings, FetchStats, Http
from recommender.corpus.store import not_saved, read_stored, save_corpus, stored_path
from recommender.corpus.stream_pages import KeptPages
from recommender.corpus.stream_rows import (MergeCounts, RowNotes, check_markup, checked_row, merge, row_time,
                                             trusted, upgrade)
from recommender.errors import InputError, RecommenderError
from recommender.items import Skipped
from recommender.retry import Retry

log = logging.getLogger(__name__)

DEFAULT_DAYS = 7
MAX_DAYS = 90
PAGE_SLACK = 5  # pages a listing may ask beyond what its records fill (empty pages asked again, a first search)


class AnswerError(ValueError):
    """An answer that is no answer of the service: its own error message (`complete` True: not retried), or a
    body that is not the format at all or cut short (`complete` False: asked again, like a dropped connection)."""

    def __init__(self, message: str, *, complete: bool = True) -> None:
        super().__init__(message)
        self.complete = complete


def parse_xml_feed(body: bytes, where: str, entries: int, what: str) -> Any:
    """feedparser's reading of an RSS or Atom answer, its markup bounded first (stream_rows.check_markup); an
    answer feedparser cannot start on (an encoding name such as "utf\\0-8") is one AnswerError: not `what`."""
    import feedparser

    try:
        check_markup(bytes(body), where, entries)
    except ValueError as error:
        raise AnswerError(str(error)) from None
    try:
        return feedparser.parse(bytes(body))
    except (ValueError, LookupError) as error:
        raise AnswerError(f"{where}: not {what} ({str(error)[:160]})") from None


@dataclass
class StreamPage:
    """One answer: its rows (one per record, in the answer's order), the result set's size if the service says
    it, the records that could not be read, and the service's cursor to the next page if it pages by cursor."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    total: int | None = None
    start: int | None = None
    skipped: list[Skipped] = field(default_factory=list)
    cursor: str | None = None
    not_modified: bool = False  # the server answered a conditional GET with 304: nothing new, no rows


class StreamSource(ABC):
    """One stream corpus (`arxiv:cs.LG,stat.ML`): its service's terms and how to read its records.

    Subclasses set the class attributes, build themselves from a corpus name (`from_name`), and implement
    `parse` (one answer's bytes → a StreamPage) and `listing` (the live pages, through the Lister)."""

    prefix: ClassVar[str]  # 'arxiv': names are 'arxiv:…', row ids 'arxiv:…'
    service: ClassVar[str]  # 'arXiv', for messages
    api: ClassVar[str]  # the live endpoint; `--from URL` replaces it
    pause_s: ClassVar[float]  # the service's terms: seconds between two requests (a retry waits as long)
    pause_env: ClassVar[str] = ""  # an environment variable that may set another pause (a mirror, a test double)
    page_size: ClassVar[int] = 500  # records a page asks by default
    max_page_size: ClassVar[int] = 2_000  # the most the service serves in one page (a larger ask is lowered)
    max_records: ClassVar[int] = 30_000  # what one window's listing can hold: bounds the pages it may take
    newest_first: ClassVar[bool] = True  # the listing comes newest update first: paging stops at the window
    overlap: ClassVar[timedelta] = timedelta(days=3)  # re-read before the newest stored update (late announcements)
    same_site: ClassVar[bool] = True  # redirects stay on the service's site (a feed may move: False)
    keeps_pages: ClassVar[bool] = False  # `parse` reads only the bytes and `where`: its pages are kept (answer_key)

    name: str  # the stored corpus: a file name (recommender/corpus/store.py check_name)
    label: str  # 'arXiv cs.LG, stat.ML'

    @classmethod
    @abstractmethod
    def from_name(cls, name: str) -> StreamSource:
        """The adapter for `name` (its prefix is this class's); a malformed name is one InputError line."""

    @abstractmethod
    def parse(self, body: bytes, where: str) -> StreamPage:
        """One answer (live or a saved file) → its rows; raises AnswerError (see there)."""

    @abstractmethod
    def listing(self, lister: Lister, url: str, since: datetime) -> Iterator[StreamPage]:
        """The live pages, each asked through `lister`; ends at the result set's end. `since` is where
        fetch_stream stops reading a newest-first listing (an API that filters by date asks from there)."""

    def answer_key(self, body: bytes) -> bytes:
        """What of an answer its page depends on (default: its bytes); equal to a kept one's: not parsed again."""
        return body

    def wanted(self, row: dict[str, Any]) -> bool:
        """Whether a row belongs to this corpus (a saved answer may hold other subjects: left out, counted)."""
        return True

    def cross_listed(self, row: dict[str, Any]) -> bool:
        """Whether a row is listed under more than one of this corpus's subjects (kept once, counted)."""
        return False

    def provenance(self) -> dict[str, Any]:
        """What the stored corpus's header records of this stream (its categories, query, feed URL…)."""
        return {}

    def pause(self) -> float:
        """pause_s, or the environment's pause_env when it is a number of seconds, 0 or more (a local mirror or
        a test double may allow less); anything else is one warning and pause_s."""
        raw = os.environ.get(self.pause_env, "").strip() if self.pause_env else ""
        try:
            seconds = float(raw) if raw else self.pause_s
        except ValueError:
            seconds = math.nan
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
        log.warning("%s=%r is not a number of seconds; pausing %.0f s", self.pause_env, raw[:40], self.pause_s)
        return self.pause_s


class NoPapersYet(FetchError):
    """A stream's first fetch found nothing in its window, so no stored corpus exists yet (a quiet niche
    query, a new subject): `daily` goes on with its other corpora."""


@dataclass
class StreamReport(MergeCounts):
    """What a stream fetch read and changed (the merge's counts, stream_rows.MergeCounts, and the fetch's own);
    `changed` is False when nothing was written."""

    path: Path = Path()
    label: str = ""
    papers: int = 0
    read: int = 0
    cross_listed: int = 0
    pages: int = 0
    days: int = DEFAULT_DAYS
    window_start: datetime | None = None
    stats: FetchStats = field(default_factory=FetchStats)
    seconds: float = 0.0
    skipped: list[Skipped] = field(default_factory=list)
    notes: RowNotes = field(default_factory=RowNotes)


class Lister:
    """What an adapter's listing asks through: the pause before every request after the first, the bounded,
    retried read (a JSON answer depth-checked, an XML one not), and the page guard: no more pages than the
    most records a window can hold fill, so a server that reports a huge result set and sends one record a
    page is stopped. A stop is one FetchError and keeps the stored corpus."""

    def __init__(self, source: StreamSource, http: Http, report: StreamReport, now: datetime,
                 memory: dict[str, Any], pause: float, kept: KeptPages | None = None) -> None:
        self.source, self.http, self.report, self.now, self.pause = source, http, report, now, pause
        self.kept = kept  # the last fetch's parsed pages (stream_pages.py), None: every page is parsed
        self.page_size = max(1, min(http.page_size, source.max_page_size))
        self.max_pages = math.ceil(source.max_records / self.page_size) + PAGE_SLACK
        self.memory = memory  # what the adapter keeps from one fetch to the next (a feed's ETag), stored with it
        self._asked = 0

    def get(self, url: str, params: dict[str, Any] | None = None, *, headers: dict[str, str] | None = None,
            is_json: bool = False) -> StreamPage:
        """One page of the listing, parsed by the adapter's `parse`. `is_json`: the answer is JSON, so its depth is
        bounded as it streams (then `json.loads` in `parse` is safe); otherwise it is XML or text and is not
        depth-checked. `headers` go with the request (If-None-Match…): a 304 is a page with `not_modified`."""
        where = f"{url} " + " ".join(f"{k}={v}" for k, v in (params or {}).items() if k in ("start", "cursor"))
        self._before()
        page = self.http.get_bytes(url, params, headers=headers, is_json=is_json,
                                   check=lambda body: _parsed(self.source, body, where.strip(), self.kept))
        return StreamPage(not_modified=True) if page is NOT_MODIFIED else page

    @property
    def response_headers(self) -> Any:
        """The headers of the last page's answer (ETag, Last-Modified), case-insensitive."""
        return self.http.last_headers

    def get_json(self, url: str, params: dict[str, Any] | None = None) -> Any:
        """A JSON answer that is not a page of records (a search that precedes the pages: PubMed's esearch),
        paused and counted against the page guard like a page."""
        self._before()
        return self.http.get_json(url, params)

    def _before(self) -> None:
        if self._asked:
            self.http.settings.sleep(self.pause)
        self._asked += 1
        if self._asked > self.max_pages:
            raise FetchError(f"{self.source.service} kept sending pages past {self.max_pages:,} (more than "
                             f"{self.source.max_records:,} records would fill); zotrec stopped paging and kept "
                             "the stored corpus")


def _parsed(source: StreamSource, body: bytes, where: str, kept: KeptPages | None = None) -> StreamPage:
    try:
        return kept.parse(body, where, source.parse) if kept is not None else source.parse(body, where)
    except AnswerError as error:
        if not error.complete:
            raise Retry(str(error).removeprefix(f"{where}: ")) from None
        raise FetchError(str(error)) from None


def checked_page(page: StreamPage, now: datetime, notes: RowNotes) -> StreamPage:
    page.rows = [checked_row(row, now, notes) for row in page.rows]
    return page


def fetch_stream(source: StreamSource, sources: Sequence[str] = (), settings: FetchSettings | None = None, *,
                 days: int = DEFAULT_DAYS, now: datetime | None = None) -> StreamReport:
    """Bring the stored corpus of `source` up to date: the window's records from its service, or from `sources`
    (saved answers, or an API URL instead of the service's), merged into what is stored (module docstring)."""
    if not 1 <= days <= MAX_DAYS:
        raise InputError(f"--days must be from 1 to {MAX_DAYS}")
    started = time.perf_counter()
    pause = source.pause()
    settings = settings or FetchSettings(page_size=source.page_size)
    bounds = replace(settings.bounds or Limits(), same_site=source.same_site)
    settings = replace(settings, concurrency=1, backoff=max(settings.backoff, pause), min_wait=pause, bounds=bounds)
    now = now or datetime.now(UTC)
    report = StreamReport(path=stored_path(source.name), label=source.label, days=days,
                          window_start=now - timedelta(days=days))
    stored, header = _stored_rows(source, now, report)
    memory = dict(((header or {}).get("stream") or {}).get("memory") or {})
    remembered = dict(memory)
    urls = [s for s in sources if s.startswith(("http://", "https://"))] or ([] if sources else [source.api])
    files = [s for s in sources if not s.startswith(("http://", "https://"))]
    pages = [checked_page(_file_page(source, path), now, report.notes) for path in files]
    newest = max((row_time(row) for row in stored.values()), default=None)
    stop_at = max(report.window_start, newest - source.overlap) if newest else report.window_start
    if urls:
        kept = KeptPages(source.name, source.answer_key, StreamPage) if source.keeps_pages else None
        with Http(settings, report.stats) as http:
            http.start_progress(source.label, None)
            for url in urls:
                pages += _live_pages(source, Lister(source, http, report, now, memory, pause, kept), url, stop_at)
        if kept is not None:
            kept.save()
    rows = [row for page in pages for row in page.rows]
    report.read = len(rows)
    report.skipped = [skipped for page in pages for skipped in page.skipped]
    report.cross_listed = len({str(row["id"]) for row in rows if source.cross_listed(row)})
    before = dict(stored)
    merge(stored, rows, report.window_start, source.wanted, report)
    if before and not stored:
        _keep_stale(source, before, stored, report, now)
    report.papers = len(stored)
    report.seconds = time.perf_counter() - started
    report.changed = report.changed or memory != remembered
    if report.changed:
        _save(source, stored, report, urls + files, memory)
    elif header is None:
        raise NoPapersYet(f"{source.service} gave no papers in {source.label} for the last {days} days"
                         + "".join(f"; {line}" for line in left_out_lines(report)) + "; nothing was saved")
    return report


def _keep_stale(source: StreamSource, before: dict[str, dict[str, Any]], stored: dict[str, dict[str, Any]],
                report: StreamReport, now: datetime) -> None:
    """Every stored paper would leave at once while the service gave none in the window: that is a clock set
    ahead (or a source gone quiet), not a day's news, so the stored corpus stays as it is and the user is told."""
    newest = max(row_time(row) for row in before.values())
    stored.update(before)
    report.expired = 0
    report.changed = bool(report.notes.clamped)
    log.warning(f"{source.label}: no paper of the {report.days}-day window counted from today ({now.date()}) came, "
                f"and every stored one is older (the newest is of {newest.date()}); the stored corpus is kept as "
                f"it is. If this computer's clock is right, `zotrec corpus remove {source.name}` clears it.")


def _live_pages(source: StreamSource, lister: Lister, url: str, stop_at: datetime) -> list[StreamPage]:
    """The listing's pages until the adapter ends it or, newest first, a page ends past `stop_at`: its last
    row with a date not clamped (stream_rows.trusted) is older, so one stray entry dated far off in the middle
    of a page, or a date from the future, does not end the paging early."""
    pages: list[StreamPage] = []
    for page in source.listing(lister, url, stop_at):  # a generator: leaving the loop ends it
        pages.append(checked_page(page, lister.now, lister.report.notes))
        lister.report.pages += 1
        lister.http.advance(len(page.rows))
        clamped = {key for key, _ in lister.report.notes.clamped}
        tail = next((row_time(row) for row in reversed(page.rows) if str(row["id"]) not in clamped), None)
        if source.newest_first and tail is not None and tail < stop_at:
            break
    return pages


def _stored_rows(source: StreamSource, now: datetime,
                 report: StreamReport) -> tuple[dict[str, dict[str, Any]], dict | None]:
    """The stored rows by id, their dates trusted (a future date written by an older zotrec is clamped, and the
    corpus rewritten); an unreadable stored corpus is said and fetched afresh."""
    path = stored_path(source.name)
    if not path.is_file():
        return {}, None
    try:
        stored = read_stored(path)
    except RecommenderError as error:
        log.warning("%s; fetching the window afresh", error)
        return {}, None
    rows = {}
    for row in stored.papers:
        if isinstance(row, dict) and row.get("id"):
            upgrade(row)
            when = row_time(row)
            kept, why = trusted(when, now)
            if why:
                row["updated"] = kept.isoformat(timespec="seconds")
                report.notes.clamped.append((str(row["id"]), "stored " + why))
                report.changed = True
            rows[str(row["id"])] = row
    return rows, stored.header


def _file_page(source: StreamSource, path: str) -> StreamPage:
    from recommender.formats.textfile import read_input_bytes

    try:
        return source.parse(read_input_bytes(path), path)
    except AnswerError as error:
        raise InputError(str(error).removeprefix(f"{path}: "), path=path) from None


def _save(source: StreamSource, stored: dict[str, dict[str, Any]], report: StreamReport,
          locations: list[str], memory: dict[str, Any]) -> None:
    rows = sorted(stored.values(), key=lambda r: (str(r.get("updated")), str(r["id"])), reverse=True)
    window = report.window_start.isoformat(timespec="seconds") if report.window_start else None
    provenance = {"fetched_at": datetime.now(UTC).isoformat(timespec="seconds"), "venue": source.label,
                  "stream": {"kind": source.prefix, "days": report.days, "window_start": window, "memory": memory},
                  source.prefix: source.provenance(),
                  "sources": [{"kind": source.prefix, "location": s} for s in locations],
                  "counts": {"papers": len(rows), "new": len(report.new), "updated": len(report.updated),
                             "expired": report.expired}}
    try:
        report.path = save_corpus(source.name, rows, provenance, allow_shrink=True)  # the window shrinks it
    except OSError as error:  # a full or read-only disk: the stored corpus stays whole (written atomically)
        raise FetchError(not_saved(error, source.name)) from None


def summary(report: StreamReport) -> str:
    """One line: what a stream fetch added, replaced and dropped, or that nothing was new."""
    from recommender.words import plural

    cost = f"({plural(report.stats.requests, 'request')}, {report.seconds:.1f} s)"
    if not report.changed:
        return (f"Nothing new in {report.label}: {plural(report.papers, 'paper')} of the last {report.days} days "
                f"stored {cost}.")
    parts = [f"{len(report.new):,} new", f"{plural(len(report.updated), 'new version')}"]
    if report.cross_listed:
        parts.append(f"{report.cross_listed:,} cross-listed (kept once)")
    if report.expired:
        parts.append(f"{report.expired:,} older than {report.days} days dropped")
    return f"Saved {plural(report.papers, 'paper')} of {report.label} to {report.path}: {', '.join(parts)} {cost}."


def left_out_lines(report: StreamReport) -> list[str]:
    """What a fetch read and did not keep, and what it changed, one line each (warnings)."""
    from recommender.words import plural

    lines = []
    if report.too_old:
        today = report.window_start + timedelta(days=report.days) if report.window_start else datetime.now(UTC)
        span = (today - report.oldest_left_out).days + 1 if report.oldest_left_out else MAX_DAYS + 1
        keep = f"--days {span} keeps them" if span <= MAX_DAYS else f"a window is at most {MAX_DAYS} days"
        lines.append(f"{plural(report.too_old, 'entry', 'entries')} older than the {report.days}-day window "
                     f"(counted from today) {'was' if report.too_old == 1 else 'were'} left out ({keep})")
    if report.other:
        lines.append(f"{plural(report.other, 'entry', 'entries')} of other subjects than {report.label} "
                     f"{'was' if report.other == 1 else 'were'} left out")
    for what, notes in (("dated wrong", report.notes.clamped), ("cut to length", report.notes.cut)):
        if notes:
            (key, why), *_ = notes
            entries = len({key for key, _ in notes})
            lines.append(f"{plural(entries, 'entry', 'entries')} {what}; first: {key}: {why}")
    if report.skipped:
        first = report.skipped[0]
        lines.append(f"{plural(len(report.skipped), 'entry', 'entries')} skipped; first: {first.where}: "
                     f"{first.reason[:200]}")
    return lines
