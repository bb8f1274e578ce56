"""`zotrec corpus fetch arxiv:cs.LG,stat.ML`: the categories' new and updated papers of the last days, stored.

Why the query API (export.arxiv.org/api/query) and not the daily listing feeds or OAI-PMH: it alone answers
"the categories' papers by date, newest first" with paging, so a run can stop where the last run's papers
begin and a missed day is caught up; a listing feed holds only today's announcements, OAI-PMH is for bulk
harvests and answers another XML. Its Atom answer is also what users save, so `--from FILE` reads the same.

One query for all categories (`cat:cs.LG OR cat:stat.ML`, `sortBy=lastUpdatedDate`, descending), page after
page, 3 s apart (arXiv's terms: one request every three seconds, one connection), every body bounded by
`Http.get_bytes`. Paging stops at the window's start or OVERLAP before the newest stored update (papers are
announced a day or a weekend after their date), at the reported total, or at arXiv's 30,000 cap. Each paper is
one row keyed by its version-less id: a cross-listed paper once, a new version replaces its row (new abstract),
a stored row of the same version is kept as it is, and rows last updated before the window leave. A run that
finds nothing new does not rewrite the stored corpus, so everything derived from it stays valid.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from recommender.corpus.arxiv_atom import ArxivAnswerError, AtomPage, parse_answer
from recommender.corpus.http import FetchError, FetchSettings, FetchStats, Http
from recommender.corpus.store import read_stored, save_corpus, stored_path
from recommender.corpus.venues import ArxivSpec
from recommender.errors import InputError, RecommenderError
from recommender.items import Skipped
from recommender.retry import Retry

log = logging.getLogger(__name__)

API = "https://export.arxiv.org/api/query"
PAUSE_ENV = "ZOTREC_ARXIV_PAUSE_S"
PAUSE_S = 3.0  # arXiv's terms of use: at most one request every three seconds
PAGE_SIZE = 500  # arXiv serves at most 2,000 a slice and recommends smaller ones
MAX_RESULTS = 30_000  # arXiv's cap on one result set (more is an HTTP 400)
EMPTY_PAGE_TRIES = 3  # arXiv sometimes answers a page inside the result set with no entries: asked again
OVERLAP = timedelta(days=3)
DEFAULT_DAYS = 7


@dataclass
class ArxivReport:
    """What an arXiv fetch read and changed: entries read, new papers, new versions, papers already stored,
    cross-listed papers (kept once), papers that left the window; `changed` is False when nothing was written."""

    path: Path
    papers: int
    read: int = 0
    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    cross_listed: int = 0
    repeated: int = 0
    expired: int = 0
    pages: int = 0
    changed: bool = False
    stats: FetchStats = field(default_factory=FetchStats)
    seconds: float = 0.0
    skipped: list[Skipped] = field(default_factory=list)


def pause_seconds() -> float:
    """PAUSE_S, or $ZOTREC_ARXIV_PAUSE_S (a local mirror or a test double may allow less)."""
    import os

    value = os.environ.get(PAUSE_ENV, "").strip()
    try:
        return max(0.0, float(value)) if value else PAUSE_S
    except ValueError:
        log.warning("%s=%r is not a number of seconds; pausing %.0f s", PAUSE_ENV, value, PAUSE_S)
        return PAUSE_S


def fetch_arxiv(spec: ArxivSpec, sources: Sequence[str] = (), settings: FetchSettings | None = None, *,
                days: int = DEFAULT_DAYS, now: datetime | None = None) -> ArxivReport:
    """Bring the stored corpus of `spec`'s categories up to date (see the module docstring); `sources` are
    saved Atom answers (paths) or an API base URL instead of arXiv's."""
    if days < 1:
        raise InputError("--days must be at least 1")
    from dataclasses import replace

    settings = settings or FetchSettings(page_size=PAGE_SIZE)
    settings = replace(settings, concurrency=1, backoff=max(settings.backoff, pause_seconds()))  # arXiv's terms
    started = time.perf_counter()
    stored, header = _stored_rows(spec)
    report = ArxivReport(path=stored_path(spec.name), papers=len(stored))
    urls = [s for s in sources if s.startswith(("http://", "https://"))] or ([] if sources else [API])
    files = [s for s in sources if not s.startswith(("http://", "https://"))]
    pages: list[AtomPage] = [_file_page(path) for path in files]
    if files and not urls:
        now = now or max((row_time(r) for page in pages for r in page.rows), default=None)
    now = now or datetime.now(UTC)
    window_start = now - timedelta(days=days)
    newest = max((row_time(r) for r in stored.values()), default=None)
    stop_at = max(window_start, newest - OVERLAP) if newest else window_start
    if urls:
        with Http(settings, report.stats) as http:
            for url in urls:
                pages += _listing(http, url, spec, stop_at, settings, report)
    _merge(stored, pages, spec, window_start, report)
    report.papers = len(stored)
    report.seconds = time.perf_counter() - started
    if report.changed:
        rows = sorted(stored.values(), key=lambda r: (r["updated"], r["id"]), reverse=True)
        provenance = {"fetched_at": datetime.now(UTC).isoformat(timespec="seconds"), "venue": spec.label,
                      "arxiv": {"categories": list(spec.categories), "days": days,
                                "window_start": window_start.isoformat(timespec="seconds")},
                      "sources": [{"kind": "arxiv", "location": s} for s in (urls + files)],
                      "counts": {"papers": len(rows), "new": len(report.new), "updated": len(report.updated),
                                 "expired": report.expired}}
        report.path = save_corpus(spec.name, rows, provenance, allow_shrink=True)  # the window shrinks it
    elif header is None:
        raise FetchError(f"arXiv gave no papers in {spec.label} for the last {days} days; nothing was saved")
    return report


def row_time(row: dict[str, Any]) -> datetime:
    """When a stored row's version was submitted (`updated`), as an aware datetime (the epoch if unreadable)."""
    try:
        value = datetime.fromisoformat(str(row.get("updated")))
    except ValueError:
        return datetime.fromtimestamp(0, UTC)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def query_for(spec: ArxivSpec) -> str:
    return " OR ".join(f"cat:{category}" for category in spec.categories)


def _stored_rows(spec: ArxivSpec) -> tuple[dict[str, dict[str, Any]], dict | None]:
    path = stored_path(spec.name)
    if not path.is_file():
        return {}, None
    try:
        stored = read_stored(path)
    except RecommenderError as error:
        log.warning("%s; fetching the window afresh", error)
        return {}, None
    return {str(row.get("id")): row for row in stored.papers if isinstance(row, dict) and row.get("id")}, \
        stored.header


def _file_page(path: str) -> AtomPage:
    from recommender.formats.textfile import read_input_bytes

    try:
        return parse_answer(read_input_bytes(path), path)
    except ArxivAnswerError as error:
        raise InputError(str(error).removeprefix(f"{path}: "), path=path) from None


def _listing(http: Http, url: str, spec: ArxivSpec, stop_at: datetime, settings: FetchSettings,
             report: ArxivReport) -> list[AtomPage]:
    """The result set, newest update first, page by page until `stop_at` (see the module docstring)."""
    size = max(1, min(settings.page_size, 2000))
    pages: list[AtomPage] = []
    start, total, empty = 0, None, 0
    http.start_progress(f"arXiv {', '.join(spec.categories)}", None)
    while start < MAX_RESULTS:
        params = {"search_query": query_for(spec), "sortBy": "lastUpdatedDate", "sortOrder": "descending",
                  "start": start, "max_results": min(size, MAX_RESULTS - start)}
        if report.pages or empty:
            settings.sleep(pause_seconds())
        where = f"{url} start={start}"
        page = http.get_bytes(url, params, check=lambda body, where=where: _checked(body, where))
        report.pages += 1
        total = page.total if page.total is not None else total
        if not page.rows and not page.skipped and total is not None and start < total:
            empty += 1  # a known quirk of the API: asked again after the pause
            if empty >= EMPTY_PAGE_TRIES:
                raise FetchError(f"{where}: arXiv answered an empty page {empty} times inside a result set "
                                 f"of {total:,}; the stored corpus is kept, try again later")
            log.info("%s: an empty page inside %d results; asking again", where, total)
            continue
        empty = 0
        pages.append(page)
        http.advance(len(page.rows))
        start += len(page.rows) + len(page.skipped)
        oldest = min((row_time(r) for r in page.rows), default=None)
        if not page.rows or (total is not None and start >= total) or (oldest and oldest < stop_at):
            break
    return pages


def _checked(body: bytes, where: str) -> AtomPage:
    try:
        return parse_answer(body, where)
    except ArxivAnswerError as error:
        if not error.complete:
            raise Retry(str(error).removeprefix(f"{where}: ")) from None
        raise FetchError(str(error)) from None


def _merge(stored: dict[str, dict[str, Any]], pages: list[AtomPage], spec: ArxivSpec,
           window_start: datetime, report: ArxivReport) -> None:
    """Fold the pages' rows into `stored` (one row per paper, the highest version wins), then drop the rows
    that left the window; counts go to `report`."""
    wanted = set(spec.categories)
    seen: set[str] = set()
    for page in pages:
        report.skipped += page.skipped
        for row in page.rows:
            report.read += 1
            key = row["id"]
            if key in seen:
                report.repeated += 1  # paging a changing result set can repeat an entry
                continue
            seen.add(key)
            if len(wanted.intersection(row.get("categories") or ())) > 1:
                report.cross_listed += 1
            if row_time(row) < window_start:
                continue
            old = stored.get(key)
            if old is None:
                report.new.append(key)
            elif int(row.get("arxiv_version") or 1) > int(old.get("arxiv_version") or 1):
                report.updated.append(key)
            else:
                report.unchanged += 1
                continue
            stored[key] = _rendered(row)
            report.changed = True
    gone = [key for key, row in stored.items() if row_time(row) < window_start]
    for key in gone:
        del stored[key]
    report.expired = len(gone)
    report.changed = report.changed or bool(gone)


def _rendered(row: dict[str, Any]) -> dict[str, Any]:
    """Titles and abstracts as they will be shown (TeX accents and markup rendered once, as fetch.py does)."""
    from recommender.text import clean_text

    row["title"] = clean_text(row["title"]) or row["title"]
    row["abstract"] = clean_text(row["abstract"]) if row.get("abstract") else None
    row["authors"] = [name for name in map(clean_text, row["authors"]) if name]
    return row
