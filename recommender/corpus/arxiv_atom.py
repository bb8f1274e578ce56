"""arXiv API answers (Atom 1.0 with the OpenSearch and arXiv extensions) → corpus rows.

The format is the one the arXiv API user manual describes (arXiv/arxiv-docs, help/api/user-manual.md): an
entry's `<id>` is `http://arxiv.org/abs/<id>v<N>` (old ids hold a slash: `hep-ex/0307015v1`), `<published>` the
first version's date, `<updated>` this version's; `<summary>` is the abstract; one `<arxiv:primary_category>`
and a `<category>` per class; an error is a feed with one entry titled "Error" whose summary says why.
The answer's markup is bounded first (stream_rows.check_markup), so parsing it stays quick. An answer of the
shape arXiv sends is read by expat (arxiv_expat.py) into the entries feedparser would give; any other answer
(not XML, cut short, an HTML page, an odd encoding, markup or namespace) is read by feedparser as a whole,
only ever handed bytes (given a str it would open a file or URL of that name). An entry that cannot be read is
skipped with its number and id, never the whole answer; a date beyond what a datetime holds (year 0 or 10000
through its time zone) is clamped here and trusted or clamped again by the stream rules.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime
from typing import Any

from recommender.corpus import arxiv_expat
from recommender.corpus.stream import AnswerError, StreamPage, parse_xml_feed
from recommender.corpus.stream_rows import check_markup, flat
from recommender.items import Skipped

ABS_SITE = "https://arxiv.org/abs/"
_ID = re.compile(r"^(?:https?://(?:export\.)?arxiv\.org/abs/)?"
                 r"(?P<base>\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})(?:v(?P<version>\d{1,4}))?$")

MAX_ENTRIES = 2_000  # arXiv's largest slice: what one answer can hold
_FIRST = datetime(1, 1, 2, tzinfo=UTC)
_LAST = datetime(9999, 12, 30, tzinfo=UTC)


def parse_answer(body: bytes, where: str) -> StreamPage:
    """An arXiv API answer → its rows; raises AnswerError for arXiv's error feed or a body that is no
    feed (an HTML page, text cut short, markup beyond any answer's)."""
    try:
        check_markup(bytes(body), where, MAX_ENTRIES)
    except ValueError as error:
        raise AnswerError(str(error)) from None
    read = arxiv_expat.read(body)
    if read is None:
        return _page(_feedparser_answer(body, where), where)
    _refuse_an_error_feed(read[1], where)
    return _page(read, where)


def _feedparser_answer(body: bytes, where: str) -> tuple[Any, list[Any]]:
    """feedparser's reading of an answer of any other shape: its feed fields and entries, or AnswerError."""
    parsed = parse_xml_feed(body, where, MAX_ENTRIES, "an arXiv API Atom answer")
    feed = parsed.get("feed", {})
    entries = parsed.get("entries", [])
    if parsed.get("bozo") and not entries and "opensearch_totalresults" not in feed:
        raise AnswerError(f"{where}: not an arXiv API Atom answer ({_bozo_reason(parsed)})", complete=False)
    if parsed.get("version", "") != "atom10" and not parsed.get("bozo"):
        raise AnswerError(f"{where}: not an Atom 1.0 feed (got {parsed.get('version') or 'no feed'})")
    _refuse_an_error_feed(entries, where)
    if parsed.get("bozo") and isinstance(parsed.get("bozo_exception"), _sax_errors()):
        raise AnswerError(f"{where}: the answer is not complete ({_bozo_reason(parsed)})", complete=False)
    return feed, entries


def _refuse_an_error_feed(entries: list[Any], where: str) -> None:
    if len(entries) == 1 and str(entries[0].get("title", "")).strip() == "Error" and \
            "/api/errors" in str(entries[0].get("id", "")):
        raise AnswerError(f"{where}: arXiv says: {flat(entries[0].get('summary', '')) or 'error'}")


def _page(read: tuple[Any, list[Any]], where: str) -> StreamPage:
    feed, entries = read
    page = StreamPage(total=_int(feed.get("opensearch_totalresults")), start=_int(feed.get("opensearch_startindex")))
    for number, entry in enumerate(entries, 1):
        try:
            row, problem = entry_row(entry)
        except (ValueError, TypeError, OverflowError, AttributeError) as error:  # one odd entry, not the answer
            row, problem = None, f"{flat(entry.get('id', ''))[:80] or 'no id'}: unreadable ({error})"[:200]
        if row is None:
            page.skipped.append(Skipped(f"{where} entry {number}", problem))
        else:
            page.rows.append(row)
    return page


def entry_row(entry: Any) -> tuple[dict[str, Any] | None, str]:
    """One Atom entry (feedparser's, or arxiv_expat's alike) → a corpus row keyed by the version-less id
    (`arxiv:2501.01234`), or (None, why)."""
    match = _ID.match(flat(entry.get("id", "")))
    if not match:
        return None, f"no arXiv id in <id> ({flat(entry.get('id', ''))[:80] or 'empty'})"
    base, version = match.group("base"), int(match.group("version") or 1)
    title = flat(entry.get("title", ""))
    if not title:
        return None, f"{base}: no title"
    first = _when(entry.get("published_parsed"))
    updated = _when(entry.get("updated_parsed")) or first
    published = first or updated
    if updated is None:
        return None, f"{base}: no <updated> date"
    categories = [str(tag.get("term")) for tag in entry.get("tags") or [] if tag.get("term")]
    primary = str((entry.get("arxiv_primary_category") or {}).get("term") or (categories[:1] or [""])[0])
    pdf = next((link.get("href") for link in entry.get("links") or []
                if link.get("title") == "pdf" or link.get("type") == "application/pdf"), None)
    return {
        "id": f"arxiv:{base}",
        "title": title,
        "abstract": flat(entry.get("summary", "")) or None,
        "authors": [name for author in entry.get("authors") or [] if (name := flat(author.get("name", "")))],
        "url": ABS_SITE + base,
        "pdf_url": _https(pdf),
        "doi": flat(entry.get("arxiv_doi", "")) or None,
        "year": published.year,
        "venue": f"arXiv {primary}".strip(),
        "arxiv_id": base,
        "version": version,
        "primary_category": primary or None,
        "categories": categories,
        "published": published.isoformat(timespec="seconds"),
        "updated": updated.isoformat(timespec="seconds"),
        "comment": flat(entry.get("arxiv_comment", "")) or None,
    }, ""


def _when(parsed: Any) -> datetime | None:
    """A UTC struct_time (feedparser's date) → an aware datetime."""
    if not parsed:
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(parsed), UTC)
    except (ValueError, OverflowError, OSError):  # beyond a datetime's years: the nearer end
        return _LAST if parsed.tm_year > 5000 else _FIRST


def _https(url: Any) -> str | None:
    if not isinstance(url, str) or not url.startswith(("http://arxiv.org/", "https://arxiv.org/")):
        return url if isinstance(url, str) and url.startswith("https://") else None
    return "https://" + url.split("://", 1)[1]


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _sax_errors() -> tuple[type, ...]:
    from xml.sax import SAXException

    return (SAXException,)


def _bozo_reason(parsed: Any) -> str:
    error = parsed.get("bozo_exception")
    return str(getattr(error, "getMessage", lambda: error)() or error or "unreadable")[:160]
