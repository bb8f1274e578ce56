"""A reading list as an Atom 1.0 feed (RFC 4287) for feed readers: one entry per paper, with its reasons.

Entry ids are the paper's own (`urn:zotrec:paper:<corpus id>`), the same in every run, so a reader that
polls the feed file shows each paper once, when it first enters the list; `daily` keeps the window's earlier
entries below today's (newest first, by `published`: when the feed first delivered the paper) and links the
feed to itself (rel="self"), as the W3C feed validator asks. The feed's id comes from the
library and corpus ranked, so two lists are two feeds. Text goes through the one safe-text rule (no control
characters, which XML 1.0 cannot hold); links are kept only when they are http(s); ElementTree escapes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from urllib.parse import quote
from xml.etree import ElementTree as ET

from recommender.formats.output import safe_text
from recommender.items import Recommendation
from zotero_bridge.render.safe import html_link, html_text, safe_url

ATOM = "http://www.w3.org/2005/Atom"


def entry_id(corpus_id: str) -> str:
    return "urn:zotrec:paper:" + quote(safe_text(corpus_id), safe=":._-/")


def render_atom(recs: Sequence[Recommendation], *, title: str, library: str = "", corpus: str = "",
                now: datetime | None = None, reasons=None, self_href: str = "", previous: str | None = None,
                keep_days: int = 0) -> str:
    """The feed as text. `reasons(rec)` gives the plain reason text (every reason line, by default).
    `self_href`: the feed's own address (rel="self"; a bare file name resolves against wherever the file is
    served). `previous` (the feed file as it was) with `keep_days`: its entries first delivered within the last
    `keep_days` days stay below today's, so a reader that polls weekly misses nothing; newest first."""
    if reasons is None:
        from zotero_bridge.render.digest import why_lines

        def reasons(rec: Recommendation) -> str:
            return "\n".join(why_lines(rec))
    now = (now or datetime.now(UTC)).astimezone(UTC)
    stamp = _stamp(now)
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    _text(feed, "title", title)
    _text(feed, "id", "urn:zotrec:feed:" + hashlib.sha256(safe_text(f"{library}\n{corpus}").encode()).hexdigest()[:32])
    _text(feed, "updated", stamp)
    if self_href:
        ET.SubElement(feed, f"{{{ATOM}}}link", rel="self", type="application/atom+xml", href=self_href)
    _text(_sub(feed, "author"), "name", "zotrec")
    _sub(feed, "generator", text="zotrec")
    if corpus:
        from zotero_bridge.render.digest import library_name

        named, ranked = library_name(library), library_name(corpus)
        _text(feed, "subtitle", f"{ranked}, ranked for {named}" if named else ranked)
    ids = set()
    for position, rec in enumerate(recs):  # a second apart, best first: no two entries share `updated`
        feed.append(_entry(rec, reasons(rec), _stamp(now - timedelta(seconds=position))))
        ids.add(entry_id(rec.paper.id))
    if previous and keep_days:
        feed.extend(kept_entries(previous, ids, now - timedelta(days=keep_days)))
    return ET.tostring(feed, encoding="unicode", xml_declaration=True) + "\n"


def _entry(rec: Recommendation, why: str, stamp: str) -> ET.Element:
    paper = rec.paper
    entry = ET.Element(f"{{{ATOM}}}entry")
    _text(entry, "id", entry_id(paper.id))
    _text(entry, "title", paper.title)
    _text(entry, "published", stamp)  # when this feed first delivered it: the order a week's feed keeps
    _text(entry, "updated", stamp)  # the entry is the recommendation, made then (the paper's dates are its own)
    link = safe_url(paper.url)
    if link:
        ET.SubElement(entry, f"{{{ATOM}}}link", rel="alternate", type="text/html", href=link)
    pdf = safe_url(paper.metadata.get("pdf_url"))
    if pdf:
        ET.SubElement(entry, f"{{{ATOM}}}link", rel="related", type="application/pdf", title="pdf", href=pdf)
    for name in paper.authors or ("unknown",):
        _text(_sub(entry, "author"), "name", name)
    for term in paper.metadata.get("categories") or ():
        ET.SubElement(entry, f"{{{ATOM}}}category", term=safe_text(term))
    _text(entry, "summary", f"{why}\n\n{paper.abstract or ''}".strip())
    content = _sub(entry, "content", type="html")
    content.text = _entry_html(rec, why)
    return entry


def kept_entries(previous: str, skip: set[str], since: datetime) -> list[ET.Element]:
    """The entries of an earlier feed first delivered at or after `since`, newest first, without the ids in
    `skip` (today's). A feed that is not ours or does not parse keeps nothing (the caller says so)."""
    root = parse_feed(previous)
    kept = []
    for entry in root.iterfind(f"{{{ATOM}}}entry"):
        key = entry.findtext(f"{{{ATOM}}}id") or ""
        when = _parse_time(entry.findtext(f"{{{ATOM}}}published") or "")
        if key and key not in skip and when is not None and when >= since:
            kept.append((when, len(kept), entry))
            skip = skip | {key}
    return [entry for _, _, entry in sorted(kept, key=lambda row: (-row[0].timestamp(), row[1]))]


def parse_feed(text: str) -> ET.Element:
    """An Atom feed parsed strictly (expat: any character XML 1.0 forbids is an error); a document type or
    entity declaration, which zotrec's feeds never hold, is refused before parsing. ValueError on any fault."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ValueError("the file declares a document type or entities, which a zotrec feed never does")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        raise ValueError(f"not well-formed XML ({error})") from None
    if root.tag != f"{{{ATOM}}}feed":
        raise ValueError("not an Atom feed")
    return root


def _stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(text: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else None


def _entry_html(rec: Recommendation, why: str) -> str:
    """The entry's HTML (escaped again by ElementTree, as Atom's type="html" wants)."""
    paper = rec.paper
    parts = [f"<p><strong>{html_link(paper.title, paper.url)}</strong></p>"]
    if paper.authors:
        parts.append(f"<p>{html_text(', '.join(paper.authors))}</p>")
    parts += [f"<p><em>{html_text(line)}</em></p>" for line in why.splitlines() if line.strip()]
    if paper.abstract:
        parts.append(f"<p>{html_text(paper.abstract)}</p>")
    return "".join(parts)


def _sub(parent: ET.Element, name: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM}}}{name}", **attributes)
    if text is not None:
        element.text = safe_text(text)
    return element


def _text(parent: ET.Element, name: str, text: object) -> ET.Element:
    return _sub(parent, name, safe_text(text or ""))
