"""`zotrec corpus fetch`: a venue's papers from PMLR (primary) and OpenReview (enrichment), merged, stored.

The PMLR volume BibTeX has every paper with abstract and OpenReview id, anonymously; it is the
corpus. OpenReview adds the presentation type and its PDF link when it answers JSON (it serves a
browser check to anonymous callers, so zotrec logs in with OPENREVIEW_USERNAME/PASSWORD or a
token when given). When OpenReview refuses or fails, the PMLR corpus is stored anyway and one
line says what was skipped. A failed or truncated PMLR download never replaces the stored corpus.

OpenReview pages are read one after another in a stable order (`sort=number:asc`), with
`count=true`; a listing that shifts while paging (a duplicate standing in for a missing note) is
read again once, then refused. Pages and the BibTeX bytes are kept under the data dir until the
corpus is saved, so a rerun after a failure asks only for what is missing.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recommender.bounded_http import PageGuard, server_name
from recommender.corpus.http import AccessRefused, FetchError, FetchSettings, FetchStats, Http
from recommender.corpus.records import (
    Records,
    add_known_links,
    bibtex_records,
    check_notes_page,
    drop_duplicate_ids,
    merge_records,
    note_records,
)
from recommender.corpus.store import partial_dir, save_corpus, write_text_file
from recommender.corpus.stream_rows import RowNotes, rendered
from recommender.corpus.venues import Venue, known_names, pmlr_links, resolve_venue
from recommender.errors import InputError, RecommenderError, ServerLimitError
from recommender.words import plural

log = logging.getLogger(__name__)

__all__ = ["FetchError", "FetchReport", "FetchSettings", "OpenReviewLogin", "fetch_corpus"]

ENABLE_OPENREVIEW = ("set OPENREVIEW_USERNAME and OPENREVIEW_PASSWORD (or OPENREVIEW_TOKEN) and fetch again "
                     "to add presentation types")


@dataclass(frozen=True)
class OpenReviewLogin:
    """Credentials for api2.openreview.net: a token, or a user name and password (never logged)."""

    username: str = ""
    password: str = field(default="", repr=False)
    token: str = field(default="", repr=False)


@dataclass
class FetchReport:
    """What a fetch saved and what it cost; `notes` are one-line remarks (OpenReview skipped, …)."""

    path: Path
    papers: int
    counts: dict[str, int]
    sources: list[dict[str, Any]]
    stats: FetchStats
    seconds: float
    skipped: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def fetch_corpus(name: str, sources: Sequence[str] = (), settings: FetchSettings | None = None, *,
                 force: bool = False, login: OpenReviewLogin | None = None) -> FetchReport:
    """Fetch venue `name` (see venues.py) or `sources` (URLs or paths) and store it.

    A URL or path ending in .bib is PMLR-style BibTeX; a .json path is a saved OpenReview answer
    ({"notes": […]}); a .jsonl/.csv/.txt path is read as a corpus file; any other URL is an
    OpenReview API base. OpenReview is optional when another source gives the papers.
    `force` replaces a stored corpus even when the new one is much smaller. A disk that is full or
    read-only is one FetchError naming the file and what was kept.
    """
    try:
        return _fetch(name, sources, settings, force=force, login=login)
    except OSError as error:
        raise _not_written(error, resolve_venue(name).name if resolve_venue(name) else name) from None


def _not_written(error: OSError, name: str) -> FetchError:
    """A failed write as one line: the path, the reason, the stored corpus kept and the pages kept to resume."""
    from recommender.corpus.store import not_saved

    return FetchError(not_saved(error, name, partial_dir(name),
                                f"what was fetched so far is kept in {partial_dir(name)} for the next try"))


def _fetch(name: str, sources: Sequence[str], settings: FetchSettings | None, *, force: bool,
           login: OpenReviewLogin | None) -> FetchReport:
    settings = settings or FetchSettings()
    venue = resolve_venue(name)
    if venue is None and not sources:
        raise InputError(f"unknown corpus '{name}' (known: {known_names()}); give --from URL|PATH")
    venue = venue or Venue(name=name, label="")
    locations = list(sources) or [u for u in (venue.bibtex_url, venue.openreview_api if venue.venue_ids else "")
                                  if u]
    optional = {loc for loc in locations if _is_openreview(loc)} if any(
        not _is_openreview(loc) for loc in locations) else set()
    started = time.perf_counter()
    stats = FetchStats()
    cache = partial_dir(venue.name)
    fetched: list[Records] = []
    notes: list[str] = []
    try:
        with Http(settings, stats) as http:
            for location in sorted(locations, key=_from_openreview):  # PMLR and files first
                try:
                    fetched.append(_fetch_one(location, venue, http, cache, login))
                except FetchError as error:
                    if location not in optional:
                        raise
                    notes.append(_openreview_skipped(error, login))
                    log.warning("%s", notes[-1])
    except RecommenderError:
        _say_what_was_kept(venue.name)
        raise
    text_notes = RowNotes()
    rows = [rendered(row, text_notes) for row in merge_records(fetched)]
    if text_notes.cut:
        (key, why), *_ = text_notes.cut
        log.warning("%s cut to length; first: %s: %s", plural(len(text_notes.cut), "text"), key, why)
    if not rows:
        raise FetchError("the sources gave no papers; nothing was saved")
    if venue.links is not None and venue.links.is_file():
        add_known_links(rows, pmlr_links(venue.links))
    counts = corpus_counts(rows, fetched)
    provenance = {
        "fetched_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "venue": venue.label,
        "sources": [{"kind": f.kind, "location": f.location, "records": len(f.records),
                     "reported_count": f.reported_count, "duplicates": f.duplicates,
                     "skipped": len(f.skipped)} for f in fetched],
        "counts": counts,
        "notes": notes,
    }
    path = save_corpus(venue.name, rows, provenance, allow_shrink=force)
    _clear(cache)
    return FetchReport(path=path, papers=len(rows), counts=counts, sources=provenance["sources"],
                       stats=stats, seconds=time.perf_counter() - started,
                       skipped=[s for f in fetched for s in f.skipped], notes=notes)


def corpus_counts(rows: Sequence[dict], fetched: Sequence[Records] = ()) -> dict[str, int]:
    return {
        "papers": len(rows),
        "with_abstracts": sum(bool(r.get("abstract")) for r in rows),
        "with_authors": sum(bool(r.get("authors")) for r in rows),
        "with_presentation": sum(bool(r.get("presentation")) for r in rows),
        "duplicates_dropped": sum(f.duplicates for f in fetched),
        "skipped": sum(len(f.skipped) for f in fetched),
    }


def _is_openreview(location: str) -> bool:
    lowered = location.lower().split("?")[0]
    return location.startswith(("http://", "https://")) and not lowered.endswith(".bib")


def _from_openreview(location: str) -> bool:
    return _is_openreview(location) or location.lower().endswith(".json")


def _openreview_skipped(error: FetchError, login: OpenReviewLogin | None) -> str:
    reason = str(error)
    if isinstance(error, AccessRefused) and not (login and (login.token or login.username)):
        return f"OpenReview skipped ({reason}); stored the PMLR papers without presentation types: " \
               f"{ENABLE_OPENREVIEW}"
    return f"OpenReview skipped ({reason}); stored the PMLR papers without presentation types"


def _fetch_one(location: str, venue: Venue, http: Http, cache: Path, login: OpenReviewLogin | None) -> Records:
    is_url = location.startswith(("http://", "https://"))
    before = http.stats.requests
    lowered = location.lower().split("?")[0]
    if lowered.endswith(".bib"):
        text = http.download_text(location, cache / f"bibtex-{_slug(location)}") if is_url \
            else _read_local(location)
        records = bibtex_records(text, location, volume=venue.pmlr_volume, venue=venue.label,
                                 year=venue.year)
    elif is_url:
        records = _fetch_openreview(location, venue, http, cache, login)
    elif lowered.endswith(".json"):
        notes, count = check_notes_page(_json_file(location), location)
        records = note_records(notes, venue=venue.label, year=venue.year, venue_id=venue.venue_ids,
                               where=location)
        records.reported_count = count
    else:
        records = _corpus_file_records(location)
    log.info("%s: %d papers", location, len(records.records))
    records.requests = http.stats.requests - before
    return drop_duplicate_ids(records)


def _fetch_openreview(base: str, venue: Venue, http: Http, cache: Path,
                      login: OpenReviewLogin | None) -> Records:
    """Every note of the venue's ids (all ids in one listing when none is named)."""
    base = base.rstrip("/").removesuffix("/notes")
    _log_in(http, base, login)
    notes: list[dict] = []
    reported = 0
    for venue_id in venue.venue_ids or ("",):
        listed, count = _list_notes(http, f"{base}/notes", venue_id, cache)
        notes += listed
        reported += count if count is not None else len(listed)
    records = note_records(notes, venue=venue.label, year=venue.year, venue_id=venue.venue_ids, where=base)
    records.reported_count = reported
    return records


def _log_in(http: Http, base: str, login: OpenReviewLogin | None) -> None:
    """OpenReview's own client does this: POST /login {id, password} → {token}, then a Bearer header."""
    if login is None or not (login.token or login.username):
        return
    token = login.token.strip().removeprefix("Bearer ").strip()
    if not token:
        try:
            answer = http.post_json(f"{base}/login", {"id": login.username, "password": login.password})
        except FetchError as error:
            raise AccessRefused(f"OpenReview login as {login.username} failed: {error}") from None
        token = answer.get("token") if isinstance(answer, dict) else None
        if not isinstance(token, str) or not token:
            raise AccessRefused(f"OpenReview login as {login.username}: the answer has no token")
    http.authorize(token)


def _list_notes(http: Http, url: str, venue_id: str, cache: Path) -> tuple[list[dict], int | None]:
    """One venue id's notes, page after page; read again once if the listing shifted meanwhile."""
    params = {"content.venueid": venue_id} if venue_id else {}
    params["sort"] = "number:asc"
    for attempt in (1, 2):
        notes, count = _pages(http, url, params, cache / f"openreview-{_slug(url + venue_id)}", reuse=attempt == 1)
        distinct = len({n.get("id") for n in notes})
        if count is None or distinct >= count:
            if distinct < len(notes):
                log.info("%s: %d notes came twice (dropped)", url, len(notes) - distinct)
            return notes, count
        shifted = len(notes) - distinct
        where = f"{url} ({venue_id or 'all notes'})"
        if attempt == 1:
            log.info("%s: %d distinct notes of %d (%d came twice); the listing changed while paging, "
                     "reading it again", where, distinct, count, shifted)
            continue
        raise FetchError(f"{where}: got {distinct:,} distinct notes of the {count:,} the API reported"
                         + (f" ({shifted} came twice: the listing changed while paging)" if shifted else
                            "; the listing was cut short"))
    raise AssertionError("unreachable")


def _pages(http: Http, url: str, params: dict, cache: Path, *, reuse: bool) -> tuple[list[dict], int | None]:
    """Pages until the reported count, a short page or an empty one; a listing that repeats a page or
    runs past the page cap is one FetchError (bounded_http.PageGuard)."""
    size = http.page_size
    notes: list[dict] = []
    count: int | None = None
    offset = 0
    guard = PageGuard(server_name(url), "reading OpenReview notes", limits=http.settings.bounds)
    while True:
        try:
            page, page_count = _page(http, url, {**params, "offset": offset, "limit": size,
                                                 **({"count": "true"} if offset == 0 else {})},
                                     cache / f"{size}-{offset}.json", reuse=reuse and offset > 0)
        except FetchError as error:
            cap = re.search(r"limit must be <= (\d+)", error.detail or str(error))
            if error.status == 400 and cap and int(cap.group(1)) < size:
                size = http.page_size = int(cap.group(1))
                log.info("%s: the API takes at most %d notes a page", url, size)
                continue
            raise
        if offset == 0:
            count = guard.total = page_count
            http.start_progress("OpenReview notes", count)
        try:
            guard.page(tuple(str(note.get("id")) for note in page))
        except ServerLimitError as error:
            raise FetchError(str(error), detail=error.limit) from None
        notes += page
        offset += len(page)
        http.advance(len(page))
        if not page or guard.done(offset) or (count is None and len(page) < size):
            return notes, count


def _page(http: Http, url: str, params: dict, kept: Path, *, reuse: bool) -> tuple[list[dict], int | None]:
    """One page; a page kept from an interrupted run of the same listing is reused."""
    if reuse and kept.is_file():
        try:
            return json.loads(kept.read_text(encoding="utf-8")), None
        except (OSError, ValueError):
            kept.unlink(missing_ok=True)
    where = f"{url} offset {params['offset']}"
    notes, count = check_notes_page(http.get_json(url, params), where)
    write_text_file(kept, json.dumps(notes, ensure_ascii=False))
    return notes, count


def _corpus_file_records(location: str) -> Records:
    """A corpus file (papers.jsonl, a .bib without abstracts, …) as records, through the corpus readers."""
    from recommender.corpus.readers import load_corpus

    loaded = load_corpus([location])
    records = Records("file", location, duplicates=loaded.duplicates, skipped=list(loaded.skipped))
    for paper in loaded.papers:
        meta = paper.metadata
        records.records.append({
            "id": paper.id, "title": paper.title if not paper.title_derived else "",
            "abstract": paper.abstract, "authors": list(paper.authors), "url": paper.url or None,
            "pdf_url": meta.get("pdf_url"), "openreview_id": meta.get("openreview_id"),
            "openreview_url": meta.get("openreview_url"), "pmlr_id": meta.get("pmlr_id"),
            "pmlr_url": meta.get("pmlr_url"), "presentation": meta.get("presentation"),
            "venue": paper.venue or None, "year": paper.year,
        })
    return records


def _read_local(location: str) -> str:
    from recommender.formats.textfile import read_text

    return read_text(location)


def _json_file(location: str) -> Any:
    try:
        return json.loads(_read_local(location))
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON ({error.msg})", path=location, line=error.lineno) from None


def _slug(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _say_what_was_kept(name: str) -> None:
    """After a failed fetch: the user should know the stored corpus is still there, untouched."""
    from recommender.corpus.store import read_stored, stored_path

    try:
        stored = read_stored(stored_path(name))
    except RecommenderError:
        return
    log.warning("Kept the stored corpus '%s' (%d papers, fetched %s); what was fetched so far is kept "
                "for the next try", name, len(stored.papers), stored.header.get("fetched_at", "?"))


def _clear(cache: Path) -> None:
    """Drop what an interrupted fetch kept, once the corpus is safely stored."""
    import shutil

    shutil.rmtree(cache, ignore_errors=True)
