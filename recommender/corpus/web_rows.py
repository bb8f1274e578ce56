"""Corpus rows from the web sources (journal feeds, bioRxiv/medRxiv, PubMed, OpenAlex): one shape for all.

A row is what the stored corpus keeps (recommender/corpus/store.py): `id` prefixed by its source
(`feed:`, `biorxiv:`, `medrxiv:`, `pubmed:`, `openalex:`), title, abstract (None when the source gave
none), authors, url, doi (bare, no resolver), year, venue, `published` (the first version's date) and
`updated` (this version's date; the stream's window and its "newer version wins" read it), `version`.
Text is made plain once here: HTML tags and entities out, one space between words. The services that
take an API key share `ServiceKey`.
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
    """A JSON answer read as bytes, its depth bounded before the parser recurses (a live page's depth is also
    checked as it streams, `Lister.get(is_json=True)`; a saved answer's only here). A body that is not JSON (cut short) is an AnswerError that is asked
    again, a web page where JSON was asked (a browser check) one that is not; one nested too deep is a
    ServerLimitError."""
    import json

    from recommender.bounded_http import MAX_JSON_DEPTH, JsonDepth
    from recommender.corpus.stream import AnswerError

    if bytes(body[:512]).lstrip()[:1] == b"<":
        title = re.search(rb"<title>(.*?)</title>", bytes(body[:4096]), re.IGNORECASE | re.DOTALL)
        page = plain(title.group(1).decode("utf-8", "replace")) if title else "a web page"
        raise AnswerError(f"{where}: answered with a web page ('{page[:80]}') instead of JSON: the service "
                          "wants a browser, or is down; the stored corpus is kept")

    JsonDepth(MAX_JSON_DEPTH, where).feed(bytes(body))
    try:
        return json.loads(body)
    except ValueError as error:
        raise AnswerError(f"{where}: the answer is not complete JSON ({error})", complete=False) from None


def first_day(since: datetime, window_start: datetime | None) -> date:
    """The first day to ask a service that filters by day: `since`'s, or the next one when that day's
    midnight is before the window (its records, dated at midnight, would all be left out as too old)."""
    start = since.astimezone(UTC).date()
    if window_start is not None and datetime(start.year, start.month, start.day, tzinfo=UTC) < window_start:
        start = start.fromordinal(start.toordinal() + 1)
    return start


def add_rows(page: Any, records: Any, convert: Any, where: str, what: str) -> Any:
    """Each record through `convert` (→ (row, "") or (None, why)) into `page`'s rows or its skipped list (one
    bad record never fails the answer); returns the page."""
    from recommender.items import Skipped

    for number, record in enumerate(records, 1):
        item, problem = convert(record)
        if item is None:
            page.skipped.append(Skipped(f"{where} {what} {number}", problem))
        else:
            page.rows.append(item)
    return page


class ServiceKey:
    """For the adapters of services that take an API key and a contact (OpenAlex, NCBI): the command line
    hands them in (`use_key`, read from the config or the keyring); the key stays out of every repr and log."""

    _key: str | None = None
    email: str | None = None
    label: str = ""

    def keyed(self, text: str, api_env: str, api: str, key_env: str, email_env: str) -> None:
        """The service's base URL (`api_env` may replace `api`: a mirror, a test double), its key and contact
        from the environment, and the stored corpus's name for `text` (the query, the filter)."""
        import hashlib
        import os

        from recommender.text import title_key

        self.api = os.environ.get(api_env, "").strip() or api
        self._key = os.environ.get(key_env, "").strip() or None
        self.email = os.environ.get(email_env, "").strip() or None
        prefix = getattr(self, "prefix", "stream")
        self.name = f"{prefix}-{title_key(text)[:40] or prefix}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"

    def use_key(self, api_key: str | None, email: str | None = None) -> None:
        self._key = api_key or self._key
        self.email = email or self.email

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r})"
