"""Source records → corpus rows: OpenReview v2 notes and PMLR BibTeX entries, checked and merged.

Every source is turned into the same flat record (id, title, abstract, authors, url, pdf_url,
openreview_id, openreview_url, pmlr_id, pmlr_url, presentation, venue, year). Records are merged
by OpenReview id, then by normalised title; the first source that has a field wins it (PMLR
comes first). A PMLR link is kept only where the real PMLR id is known: a `pmlr-vNNN-` key
(the volume's bibliography.bib) or a bundled list; a submission key ("amancisidor25", published
as "a-mancisidor25a") never makes one.
A response whose shape changed is refused with the missing field named, never half-read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

from recommender.corpus.venues import OPENREVIEW_SITE, pmlr_page
from recommender.errors import RecommenderError
from recommender.items import Skipped
from recommender.text import title_key

log = logging.getLogger(__name__)

SHAPE_CHANGE_SHARE = 0.1  # more than 10 % of notes without a title means the API changed
POSITION_TRACK = "/Position_Paper_Track"
_FIELDS = ("id", "title", "abstract", "authors", "url", "pdf_url", "openreview_id", "openreview_url",
           "pmlr_id", "pmlr_url", "bibtex_key", "presentation", "venue", "year")


class SourceShapeError(RecommenderError):
    """A source answered in a shape zotrec does not know; the message names what is missing."""


@dataclass
class Records:
    """Records read from one source, with the duplicates dropped and entries skipped on the way."""

    kind: str
    location: str
    records: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    requests: int = 0
    reported_count: int | None = None


def check_notes_page(data: Any, where: str) -> tuple[list[dict], int | None]:
    """The notes list and `count` of one OpenReview page, or a SourceShapeError saying what is missing."""
    if not isinstance(data, dict):
        raise SourceShapeError(f"{where}: expected a JSON object with 'notes', got {type(data).__name__}")
    notes = data.get("notes")
    if not isinstance(notes, list):
        keys = ", ".join(sorted(map(str, data))[:8]) or "none"
        raise SourceShapeError(f"{where}: the response has no 'notes' list (keys: {keys}); "
                               "the OpenReview API may have changed")
    count = data.get("count")
    return [n for n in notes if isinstance(n, dict)], count if isinstance(count, int) else None


def _value(content: dict, key: str) -> Any:
    """API v2 wraps every content field as {"value": …}; v1 used the bare value."""
    value = content.get(key)
    return value.get("value") if isinstance(value, dict) else value


def note_records(notes: Sequence[dict], *, venue: str, year: int | None,
                 venue_id: str | Sequence[str] | None, where: str) -> Records:
    """OpenReview notes → records; notes of another venue id are left out, missing fields reported."""
    result = Records("openreview", where)
    wanted = {venue_id} if isinstance(venue_id, str) else set(venue_id or ())
    missing: dict[str, int] = {}
    for number, note in enumerate(notes):
        content = note.get("content") if isinstance(note.get("content"), dict) else {}
        note_id = str(note.get("forum") or note.get("id") or "")
        title = _value(content, "title")
        lacks = [name for name, ok in (("id", note_id), ("content.title.value", isinstance(title, str)
                                                         and title.strip())) if not ok]
        if lacks:
            for name in lacks:
                missing[name] = missing.get(name, 0) + 1
            result.skipped.append(Skipped(f"{where} note {number}", f"no {' or '.join(lacks)}"))
            continue
        note_venue_id = _value(content, "venueid")
        if wanted and isinstance(note_venue_id, str) and note_venue_id not in wanted:
            result.skipped.append(Skipped(f"{where} note {note_id}", f"venue id {note_venue_id}"))
            continue
        result.records.append(_note_record(note_id, title, content, venue, year))
        if isinstance(note_venue_id, str) and note_venue_id.endswith(POSITION_TRACK):
            result.records[-1]["presentation"] = "position"
    if notes and sum(missing.values()) > SHAPE_CHANGE_SHARE * len(notes):
        lacks = ", ".join(f"{name} ({n:,} of {len(notes):,} notes)" for name, n in missing.items())
        raise SourceShapeError(f"{where}: notes lack {lacks}; the OpenReview API may have changed")
    return result


def _note_record(note_id: str, title: str, content: dict, venue: str, year: int | None) -> dict[str, Any]:
    authors = _value(content, "authors")
    abstract = _value(content, "abstract")
    pdf = _value(content, "pdf")
    if isinstance(pdf, str) and pdf.startswith("/"):
        pdf = OPENREVIEW_SITE + pdf
    return {
        "id": note_id,
        "title": title,
        "abstract": abstract if isinstance(abstract, str) and abstract.strip() else None,
        "authors": [a for a in authors if isinstance(a, str)] if isinstance(authors, list) else [],
        "openreview_id": note_id,
        "openreview_url": f"{OPENREVIEW_SITE}/forum?id={note_id}",
        "pdf_url": pdf if isinstance(pdf, str) else None,
        "presentation": presentation_type(_value(content, "venue")),
        "venue": venue,
        "year": year,
    }


def presentation_type(venue_text: Any) -> str | None:
    """'ICML 2025 oral' → 'oral'; 'ICML 2025 spotlightposter' → 'spotlight'; else 'poster' or None."""
    if not isinstance(venue_text, str):
        return None
    lowered = venue_text.lower()
    for kind in ("oral", "spotlight", "poster"):
        if kind in lowered:
            return kind
    return None


def bibtex_records(text: str, where: str, *, volume: str, venue: str, year: int | None) -> Records:
    """PMLR BibTeX → records; the `@Proceedings` header entry gives the year and is no paper."""
    from recommender.formats.bibtex import parse_bibtex

    result = Records("bibtex", where)
    if not text.rstrip().endswith(("}", ")")):
        raise SourceShapeError(f"{where}: the BibTeX file ends in the middle of an entry (cut short?)")
    entries, result.skipped = parse_bibtex(text, where)
    header = next((e for e in entries if e["ENTRYTYPE"] == "proceedings"), {})
    if str(header.get("year", "")).strip().isdigit():
        year = int(header["year"])
    for entry in entries:
        if entry["ENTRYTYPE"] != "inproceedings":
            continue
        result.records.append(_bibtex_record(entry, volume, venue, year))
    if not result.records:
        raise SourceShapeError(f"{where}: no @InProceedings entry with a title in this BibTeX")
    return result


def _bibtex_record(entry: dict, volume: str, venue: str, year: int | None) -> dict[str, Any]:
    from recommender.corpus.readers import split_bibtex_authors

    key = entry["ID"]
    prefix = f"pmlr-{volume}-"
    # A `pmlr-vNNN-` key (bibliography.bib) is the published id; icml25.bib's keys are submission
    # keys, not always the published id, so they make no link.
    pmlr_id = key[len(prefix):] if volume and key.startswith(prefix) else None
    page, pdf = pmlr_page(volume, pmlr_id) if pmlr_id else (None, None)
    openreview = _openreview_id(entry.get("openreview", ""))
    abstract = entry.get("abstract", "").strip()
    return {
        "id": openreview or (f"pmlr-{volume}-{pmlr_id or key}" if volume else key),
        "title": entry.get("title", ""),
        "abstract": abstract or None,
        "authors": split_bibtex_authors(entry.get("author", "")),
        "url": None,
        "pdf_url": entry.get("pdf") or pdf,
        "openreview_id": openreview,
        "openreview_url": f"{OPENREVIEW_SITE}/forum?id={openreview}" if openreview else None,
        "pmlr_id": pmlr_id,
        "pmlr_url": entry.get("url") or page,
        "bibtex_key": key,
        "venue": venue,
        "year": int(entry["year"]) if str(entry.get("year", "")).isdigit() else year,
    }


def add_known_links(rows: list[dict[str, Any]], links: dict[str, dict[str, str]]) -> int:
    """Fill the real PMLR id, page and PDF of rows whose OpenReview id a bundled list knows."""
    added = 0
    for row in rows:
        known = links.get(row.get("openreview_id") or "")
        if not known:
            continue
        added += 1
        row["pmlr_id"] = row.get("pmlr_id") or known["pmlr_id"]
        row["pmlr_url"] = row.get("pmlr_url") or known["pmlr_url"] or None
        row["pdf_url"] = known["pdf_url"] or row.get("pdf_url")  # the published PDF over the submission
    return added


def _openreview_id(value: str) -> str | None:
    """An `openreview` BibTeX field holds an id or a forum URL."""
    value = value.strip()
    if value.startswith("http"):
        return (parse_qs(urlparse(value).query).get("id") or [None])[0]
    return value or None


def drop_duplicate_ids(result: Records) -> Records:
    """Keep the first record of each id within one source (paging can repeat a note)."""
    seen: set[str] = set()
    kept = []
    for record in result.records:
        if record["id"] in seen:
            result.duplicates += 1
            log.debug("%s: duplicate id %s dropped", result.location, record["id"])
            continue
        seen.add(record["id"])
        kept.append(record)
    result.records = kept
    return result


def merge_records(sources: Iterable[Records]) -> list[dict[str, Any]]:
    """One row per paper across sources: same OpenReview id or same normalised title is the same paper."""
    rows: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for source in sources:
        for record in source.records:
            keys = [f"or:{record['openreview_id']}"] if record.get("openreview_id") else []
            if title_key(record.get("title") or ""):
                keys.append(f"title:{title_key(record['title'])}")
            found = next((index[k] for k in keys if k in index), None)
            if found is None:
                found = len(rows)
                rows.append({name: None for name in _FIELDS} | {"sources": []})
            row = rows[found]
            for name in _FIELDS:
                if row.get(name) in (None, "", []) and record.get(name) not in (None, "", []):
                    row[name] = record[name]
            row["sources"].append(source.kind)
            for key in keys:
                index.setdefault(key, found)
    for row in rows:
        finish_row(row)
    return rows


def finish_row(row: dict[str, Any]) -> dict[str, Any]:
    """The paper's id is its OpenReview id; its link the OpenReview forum, else the PMLR page."""
    row["id"] = row["openreview_id"] or row["id"]
    row["url"] = row["openreview_url"] or row["pmlr_url"] or row["url"]
    row["authors"] = row["authors"] or []
    return row
