"""A journal's table-of-contents feed (RSS 2.0, RSS 1.0/RDF with Dublin Core and PRISM, Atom) → corpus rows.

feedparser reads all three (it is only ever handed bytes). What publishers put where, from their real feeds:
Nature's RSS 1.0 (feeds.nature.com/<journal>/rss/current) has `dc:creator` per author, `dc:identifier`
`doi:…`, `prism:doi`, `dc:date`, and a `content:encoded` that starts with a "<Journal>, Published online:
…; doi:…" line before the abstract's first sentences; Cell Press's RSS 1.0 (PRISM 1.2) a bare DOI in
`dc:identifier` and `prism:publicationDate`; PubMed's search RSS 2.0 two `dc:identifier`s (`pmid:…`,
`doi:…`) and the journal in `dc:source`; Atom TOC feeds (PLOS, AIP, …) `<id>` with the DOI, `<author>`s
and a `<summary>` or `<content>`. An item's id is `feed:` + its DOI, else its link (else its guid), so the
same paper is one row whichever feed lists it.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime
from typing import Any

from recommender.corpus.stream import AnswerError, StreamPage, parse_xml_feed
from recommender.corpus.web_rows import add_rows, day, find_doi, plain, row, stamp

MAX_ITEMS = 2_000  # a TOC feed holds tens of items; its markup is bounded as for this many
_PUBLISHED_LINE = re.compile(r"^[^.]{0,200}?Published online:[^;]*;\s*(?:doi:\s*\S+)?\s*", re.IGNORECASE)
_BYLINE = re.compile(r"^\s*<p>\s*by [^<]{1,2000}</p>", re.IGNORECASE)  # PLOS opens its content with the authors


def parse_feed(body: bytes, where: str, *, fetched: datetime | None = None) -> StreamPage:
    """A feed's bytes → its rows; items without a date are dated `fetched` (when they were first seen)."""
    parsed = parse_xml_feed(body, where, MAX_ITEMS, "an RSS or Atom feed")
    version = parsed.get("version") or ""
    entries = parsed.get("entries") or []
    if not version or (not entries and parsed.get("bozo")):
        reason = parsed.get("bozo_exception")
        raise AnswerError(f"{where}: not an RSS or Atom feed ({str(reason)[:160] if reason else 'no feed found'})")
    feed = parsed.get("feed") or {}
    journal = plain(feed.get("prism_publicationname") or feed.get("title"))
    page = StreamPage()
    fallback = stamp(fetched or datetime.now(UTC))
    add_rows(page, entries, lambda entry: entry_row(entry, journal, fallback), where, "item")
    return page


def entry_row(entry: Any, journal: str, fallback: str | None) -> tuple[dict[str, Any] | None, str]:
    """One item → a row, or (None, why)."""
    title = plain(entry.get("title"))
    link = str(entry.get("link") or "").strip()
    doi = find_doi(entry.get("prism_doi"), *_identifiers(entry), entry.get("id"), link, entry.get("dc_source"))
    if not title:
        return None, f"{doi or link or 'an item'}: no title"
    key = doi.lower() if doi else (link or str(entry.get("id") or "").strip())
    if not key:
        return None, f"{title[:60]}: no DOI, link or id"
    published = _when(entry.get("published_parsed")) or _when(dict.get(entry, "updated_parsed")) \
        or stamp(day(entry.get("prism_publicationdate") or entry.get("prism_coverdate"))) or fallback
    updated = _when(dict.get(entry, "updated_parsed")) or published  # not feedparser's deprecated fallback
    return row(id=f"feed:{key}", title=title, abstract=_abstract(entry), authors=_authors(entry),
               url=link or (f"https://doi.org/{doi}" if doi else ""), doi=doi, published=published,
               updated=max(published, updated) if published and updated else published,
               venue=plain(entry.get("prism_publicationname") or entry.get("dc_source")) or journal), ""


def _identifiers(entry: Any) -> list[str]:
    """Every `dc:identifier` (feedparser keeps the last one; PubMed's feed has `pmid:` then `doi:`)."""
    value = entry.get("dc_identifier")
    return [value] if isinstance(value, str) else list(value or [])


def _authors(entry: Any) -> list[str]:
    names: list[str] = []
    for author in entry.get("authors") or []:
        name = plain(author.get("name") if isinstance(author, dict) else author)
        for part in ([name] if ";" not in name else name.split(";")):
            part = part.strip()
            if part and part not in names:  # Nature lists a corresponding author twice
                names.append(part)
    return names


def _abstract(entry: Any) -> str | None:
    """The item's text without the publisher's "Published online" line; None when that line is all."""
    contents = [c.get("value") for c in entry.get("content") or [] if isinstance(c, dict)]
    for text in [*contents, entry.get("summary")]:
        cleaned = _PUBLISHED_LINE.sub("", plain(_BYLINE.sub("", str(text or "")))).strip()
        if cleaned:
            return cleaned
    return None


def _when(parsed: Any) -> str | None:
    if not parsed:
        return None
    return stamp(datetime.fromtimestamp(calendar.timegm(parsed), UTC))
