"""arXiv API answers (Atom 1.0 with the OpenSearch and arXiv extensions) → corpus rows, parsed by feedparser.

The format is the one the arXiv API user manual describes (arXiv/arxiv-docs, help/api/user-manual.md): an
entry's `<id>` is `http://arxiv.org/abs/<id>v<N>` (old ids hold a slash: `hep-ex/0307015v1`), `<published>` the
first version's date, `<updated>` this version's; `<summary>` is the abstract; one `<arxiv:primary_category>`
and a `<category>` per class; an error is a feed with one entry titled "Error" whose summary says why.
feedparser is only ever handed bytes (given a str it would open a file or URL of that name).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from recommender.items import Skipped

ABS_SITE = "https://arxiv.org/abs/"
_ID = re.compile(r"^(?:https?://(?:export\.)?arxiv\.org/abs/)?"
                 r"(?P<base>\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})(?:v(?P<version>\d{1,4}))?$")


class ArxivAnswerError(ValueError):
    """The answer is arXiv's error feed (`message` is its summary) or no Atom feed at all (`complete` False:
    not well-formed, e.g. cut short)."""

    def __init__(self, message: str, *, complete: bool = True) -> None:
        super().__init__(message)
        self.complete = complete


@dataclass
class AtomPage:
    """One answer: its rows (one per entry, in the answer's order), what OpenSearch says of the result set,
    and the entries that could not be read."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    total: int | None = None
    start: int | None = None
    skipped: list[Skipped] = field(default_factory=list)


def parse_answer(body: bytes, where: str) -> AtomPage:
    """An arXiv API answer → its rows; raises ArxivAnswerError for arXiv's error feed or a body that is no
    feed (an HTML page, text cut short)."""
    import feedparser

    parsed = feedparser.parse(bytes(body))
    feed = parsed.get("feed", {})
    entries = parsed.get("entries", [])
    if parsed.get("bozo") and not entries and "opensearch_totalresults" not in feed:
        raise ArxivAnswerError(f"{where}: not an arXiv API Atom answer ({_bozo_reason(parsed)})", complete=False)
    if parsed.get("version", "") != "atom10" and not parsed.get("bozo"):
        raise ArxivAnswerError(f"{where}: not an Atom 1.0 feed (got {parsed.get('version') or 'no feed'})")
    if len(entries) == 1 and str(entries[0].get("title", "")).strip() == "Error" and \
            "/api/errors" in str(entries[0].get("id", "")):
        raise ArxivAnswerError(f"{where}: arXiv says: {_flat(entries[0].get('summary', '')) or 'error'}")
    if parsed.get("bozo") and isinstance(parsed.get("bozo_exception"), _sax_errors()):
        raise ArxivAnswerError(f"{where}: the answer is not complete ({_bozo_reason(parsed)})", complete=False)
    page = AtomPage(total=_int(feed.get("opensearch_totalresults")), start=_int(feed.get("opensearch_startindex")))
    for number, entry in enumerate(entries, 1):
        row, problem = entry_row(entry)
        if row is None:
            page.skipped.append(Skipped(f"{where} entry {number}", problem))
        else:
            page.rows.append(row)
    return page


def entry_row(entry: Any) -> tuple[dict[str, Any] | None, str]:
    """One Atom entry → a corpus row keyed by the version-less id (`arxiv:2501.01234`), or (None, why)."""
    match = _ID.match(_flat(entry.get("id", "")))
    if not match:
        return None, f"no arXiv id in <id> ({_flat(entry.get('id', ''))[:80] or 'empty'})"
    base, version = match.group("base"), int(match.group("version") or 1)
    title = _flat(entry.get("title", ""))
    if not title:
        return None, f"{base}: no title"
    updated = _when(entry.get("updated_parsed")) or _when(entry.get("published_parsed"))
    published = _when(entry.get("published_parsed")) or updated
    if updated is None:
        return None, f"{base}: no <updated> date"
    categories = [str(tag.get("term")) for tag in entry.get("tags") or [] if tag.get("term")]
    primary = str((entry.get("arxiv_primary_category") or {}).get("term") or (categories[:1] or [""])[0])
    pdf = next((link.get("href") for link in entry.get("links") or []
                if link.get("title") == "pdf" or link.get("type") == "application/pdf"), None)
    return {
        "id": f"arxiv:{base}",
        "title": title,
        "abstract": _flat(entry.get("summary", "")) or None,
        "authors": [_flat(a.get("name", "")) for a in entry.get("authors") or [] if _flat(a.get("name", ""))],
        "url": ABS_SITE + base,
        "pdf_url": _https(pdf),
        "doi": _flat(entry.get("arxiv_doi", "")) or None,
        "year": published.year,
        "venue": f"arXiv {primary}".strip(),
        "arxiv_id": base,
        "arxiv_version": version,
        "primary_category": primary or None,
        "categories": categories,
        "published": published.isoformat(timespec="seconds"),
        "updated": updated.isoformat(timespec="seconds"),
        "comment": _flat(entry.get("arxiv_comment", "")) or None,
    }, ""


def _flat(value: Any) -> str:
    """Titles and abstracts break lines mid-sentence; one space between words."""
    return " ".join(str(value or "").split())


def _when(parsed: Any) -> datetime | None:
    """feedparser's UTC struct_time → an aware datetime."""
    if not parsed:
        return None
    return datetime.fromtimestamp(calendar.timegm(parsed), UTC)


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
