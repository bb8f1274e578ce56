"""Corpus rows from the web sources (journal feeds, bioRxiv/medRxiv, PubMed, OpenAlex): one shape for all.

A row is what the stored corpus keeps (recommender/corpus/store.py): `id` prefixed by its source
(`feed:`, `biorxiv:`, `medrxiv:`, `pubmed:`, `openalex:`), title, abstract (None when the source gave
none), authors, url, doi (bare, no resolver), year, venue, `published` (the first version's date) and
`updated` (this version's date; the stream's window and its "newer version wins" read it), `version`.
Text is made plain once here: HTML tags and entities out, one space between words.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, date, datetime
from typing import Any

from recommender.text import clean_text

_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"'<>]+)", re.IGNORECASE)
_DOI_END = ".,;:)]}"
_BLOCK_TAG = re.compile(r"</?(?:p|br|div|li|ul|ol|h[1-6]|tr|td|blockquote)\b[^>]*>", re.IGNORECASE)


def plain(value: Any) -> str:
    """Text from a service as it will be shown: entities decoded, tags dropped, spaces squeezed."""
    if value is None:
        return ""
    text = str(value)
    if "<" in text:  # a paragraph's end is a space, not glue between two words
        text = _BLOCK_TAG.sub(" ", text)
    text = html.unescape(text)
    return clean_text(text, latex=False) if text else ""


def find_doi(*values: Any) -> str:
    """The first DOI in `values` (a bare DOI, `doi:…`, `info:doi/…`, a doi.org link, a publisher link with
    the DOI in its path), without a resolver and trailing punctuation; '' if none."""
    for value in values:
        if not value:
            continue
        match = _DOI.search(html.unescape(str(value)))
        if match:
            return match.group(1).rstrip(_DOI_END)
    return ""


def stamp(when: datetime | date | None) -> str | None:
    """An aware UTC ISO stamp (a date becomes its midnight UTC)."""
    if when is None:
        return None
    if not isinstance(when, datetime):
        when = datetime(when.year, when.month, when.day, tzinfo=UTC)
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="seconds")


def day(text: Any) -> date | None:
    """`YYYY-MM-DD` (a longer ISO stamp is cut to its day) → a date; None if it is not one."""
    try:
        return date.fromisoformat(str(text or "").strip()[:10])
    except ValueError:
        return None


def row(*, id: str, title: str, abstract: str | None, authors: list[str], url: str, doi: str = "",
        published: str | None, updated: str | None = None, venue: str = "", version: int = 1,
        **extra: Any) -> dict[str, Any]:
    """One corpus row in the shape above (`published` and `updated` are stamps from `stamp`)."""
    updated = updated or published
    year = int(published[:4]) if published and published[:4].isdigit() else None
    return {"id": id, "title": title, "abstract": abstract or None, "authors": [a for a in authors if a],
            "url": url, "doi": doi, "year": year, "venue": venue, "published": published, "updated": updated,
            "version": version, **{key: value for key, value in extra.items() if value not in (None, "", [])}}


def json_answer(body: bytes, where: str) -> Any:
    """A JSON answer read as bytes (the stream's pages are read without the client's JSON check): its depth
    bounded before the parser recurses; ValueError for a body that is not JSON, ServerLimitError for one
    nested too deep."""
    import json

    from recommender.bounded_http import MAX_JSON_DEPTH, JsonDepth

    JsonDepth(MAX_JSON_DEPTH, where).feed(bytes(body))
    return json.loads(body)
