"""`zotrec corpus fetch`: download a conference's papers (OpenReview v2 notes, PMLR BibTeX), merge, store.

Polite by design: a few requests at a time (OpenReview pages of up to 1,000 notes), retries with
exponential backoff on 429/5xx and dropped connections, `Retry-After` honoured. Resumable: every
OpenReview page and the BibTeX bytes are kept under the data dir until the corpus is saved, so a
rerun after a failure asks only for what is missing. A failed, truncated or changed response
never replaces the stored corpus.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recommender.corpus.http import FetchError, FetchSettings, FetchStats, Http
from recommender.corpus.records import (
    Records,
    bibtex_records,
    check_notes_page,
    drop_duplicate_ids,
    merge_records,
    note_records,
)
from recommender.corpus.store import partial_dir, save_corpus, write_atomic
from recommender.errors import InputError, RecommenderError

log = logging.getLogger(__name__)

__all__ = ["CORPORA", "CorpusSpec", "FetchError", "FetchReport", "FetchSettings", "fetch_corpus"]


@dataclass(frozen=True)
class CorpusSpec:
    """Where a named conference corpus comes from."""

    name: str
    venue: str
    year: int
    venue_id: str
    openreview_api: str
    bibtex_url: str
    pmlr_volume: str


CORPORA = {
    "icml2025": CorpusSpec(
        name="icml2025", venue="ICML 2025", year=2025, venue_id="ICML.cc/2025/Conference",
        openreview_api="https://api2.openreview.net",
        bibtex_url="https://raw.githubusercontent.com/mlresearch/v267/main/icml25.bib",
        pmlr_volume="v267",
    ),
}


@dataclass
class FetchReport:
    """What a fetch saved and what it cost."""

    path: Path
    papers: int
    counts: dict[str, int]
    sources: list[dict[str, Any]]
    stats: FetchStats
    seconds: float
    skipped: list = field(default_factory=list)


def fetch_corpus(name: str, sources: Sequence[str] = (), settings: FetchSettings | None = None, *,
                 force: bool = False) -> FetchReport:
    """Fetch corpus `name` from its official sources (or from `sources`: URLs or paths) and store it.

    A URL or path ending in .bib is PMLR-style BibTeX; a .json path is a saved OpenReview answer
    ({"notes": […]}); a .jsonl/.csv/.txt path is read as a corpus file; any other URL is an
    OpenReview API base. `force` replaces a stored corpus even when the new one is much smaller.
    """
    settings = settings or FetchSettings()
    spec = CORPORA.get(name)
    if spec is None and not sources:
        raise InputError(f"unknown corpus '{name}' (known: {', '.join(CORPORA)}); give --from URL|PATH")
    spec = spec or CorpusSpec(name, venue="", year=0, venue_id="", openreview_api="", bibtex_url="",
                              pmlr_volume="")
    locations = list(sources) or [spec.bibtex_url, spec.openreview_api]
    started = time.perf_counter()
    stats = FetchStats()
    cache = partial_dir(name)
    try:
        with Http(settings, stats) as http:
            fetched = [_fetch_one(location, spec, http, cache) for location in locations]
    except RecommenderError:
        _say_what_was_kept(name)
        raise
    rows = [_rendered(row) for row in merge_records(fetched)]
    if not rows:
        raise FetchError("the sources gave no papers; nothing was saved")
    counts = corpus_counts(rows, fetched)
    provenance = {
        "fetched_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "venue": spec.venue,
        "sources": [{"kind": f.kind, "location": f.location, "records": len(f.records),
                     "reported_count": f.reported_count, "duplicates": f.duplicates,
                     "skipped": len(f.skipped)} for f in fetched],
        "counts": counts,
    }
    path = save_corpus(name, rows, provenance, allow_shrink=force)
    _clear(cache)
    return FetchReport(path=path, papers=len(rows), counts=counts, sources=provenance["sources"],
                       stats=stats, seconds=time.perf_counter() - started,
                       skipped=[s for f in fetched for s in f.skipped])


def corpus_counts(rows: Sequence[dict], fetched: Sequence[Records] = ()) -> dict[str, int]:
    return {
        "papers": len(rows),
        "with_abstracts": sum(bool(r.get("abstract")) for r in rows),
        "with_authors": sum(bool(r.get("authors")) for r in rows),
        "duplicates_dropped": sum(f.duplicates for f in fetched),
        "skipped": sum(len(f.skipped) for f in fetched),
    }


def _fetch_one(location: str, spec: CorpusSpec, http: Http, cache: Path) -> Records:
    is_url = location.startswith(("http://", "https://"))
    before = http.stats.requests
    lowered = location.lower().split("?")[0]
    if lowered.endswith(".bib"):
        text = http.download_text(location, cache / f"bibtex-{_slug(location)}") if is_url \
            else _read_local(location)
        records = bibtex_records(text, location, volume=spec.pmlr_volume or "v0", venue=spec.venue,
                                 year=spec.year or None)
    elif is_url:
        records = _fetch_openreview(location, spec, http, cache)
    elif lowered.endswith(".json"):
        notes, count = check_notes_page(_json_file(location), location)
        records = note_records(notes, venue=spec.venue, year=spec.year or None,
                               venue_id=spec.venue_id or None, where=location)
        records.reported_count = count
    else:
        records = _corpus_file_records(location)
    log.info("%s: %d papers", location, len(records.records))
    records.requests = http.stats.requests - before
    return drop_duplicate_ids(records)


def _fetch_openreview(base: str, spec: CorpusSpec, http: Http, cache: Path) -> Records:
    """All notes of the venue, page by page: the first page gives `count`, the rest go in parallel."""
    url = base.rstrip("/") if base.rstrip("/").endswith("/notes") else base.rstrip("/") + "/notes"
    params = {"content.venueid": spec.venue_id} if spec.venue_id else {}
    size = http.settings.page_size
    first, count = check_notes_page(http.get_json(url, {**params, "offset": 0, "limit": size}),
                                    f"{url} offset 0")
    if count is None:
        log.warning("%s: the response has no 'count'; paging until a page comes back empty", url)
        notes = first + _pages_until_empty(http, url, params, len(first) or size)
    else:
        step = len(first) if len(first) < min(size, count) else size  # the server may cap `limit`
        notes = first + _pages(http, url, params, range(step, count, step) if step else (), step, count,
                               cache / f"openreview-{_slug(url)}")
        if len(notes) < count:
            raise FetchError(f"{url}: got {len(notes):,} notes of the {count:,} the API reported; "
                             "the listing was cut short")
    records = note_records(notes, venue=spec.venue, year=spec.year or None, venue_id=spec.venue_id or None,
                           where=url)
    records.reported_count = count
    distinct = len({n.get("id") for n in notes})
    if distinct < len(notes):
        log.warning("%s: %d notes came twice (dropped); the listing may have changed while paging",
                    url, len(notes) - distinct)
    return records


def _pages(http: Http, url: str, params: dict, offsets: Sequence[int], step: int, count: int,
           cache: Path) -> list[dict]:
    """Pages at `offsets`, a few at a time; pages kept from an interrupted run are reused."""

    def one(offset: int) -> list[dict]:
        kept = cache / f"{count}-{step}-{offset}.json"
        if kept.is_file():
            try:
                notes = json.loads(kept.read_text(encoding="utf-8"))
                http.advance(len(notes))
                return notes
            except (OSError, ValueError):
                kept.unlink(missing_ok=True)
        where = f"{url} offset {offset}"
        notes, _ = check_notes_page(http.get_json(url, {**params, "offset": offset, "limit": step}), where)
        write_atomic(kept, json.dumps(notes, ensure_ascii=False))
        http.advance(len(notes))
        return notes

    http.start_progress("OpenReview notes", count)
    with ThreadPoolExecutor(max_workers=http.settings.concurrency) as pool:
        return [note for page in pool.map(one, offsets) for note in page]


def _pages_until_empty(http: Http, url: str, params: dict, step: int) -> list[dict]:
    notes: list[dict] = []
    offset = step
    while True:
        page, _ = check_notes_page(http.get_json(url, {**params, "offset": offset, "limit": step}),
                                   f"{url} offset {offset}")
        notes += page
        if len(page) < step:
            return notes
        offset += step


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
            "presentation": meta.get("presentation"), "venue": paper.venue or None, "year": paper.year,
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


def _rendered(row: dict[str, Any]) -> dict[str, Any]:
    """Store text as it will be shown (LaTeX and TeX accents rendered once, here, not on every load)."""
    from recommender.text import clean_text

    row["title"] = clean_text(row["title"])
    row["abstract"] = clean_text(row["abstract"]) or None
    row["authors"] = [name for name in map(clean_text, row["authors"]) if name]
    return row


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
