"""A reading list as an Atom 1.0 feed (RFC 4287) for feed readers: one entry per paper, with its reasons.

Entry ids are the paper's own (`urn:zotrec:paper:<corpus id>`), the same in every run, so a reader that
polls the feed file shows each paper once, when it first enters the list. The feed's id comes from the
library and corpus ranked, so two lists are two feeds. Text goes through the one safe-text rule (no control
characters, which XML 1.0 cannot hold); links are kept only when they are http(s); ElementTree escapes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from urllib.parse import quote
from xml.etree import ElementTree as ET

from recommender.formats.output import safe_text
from recommender.items import Recommendation
from zotero_bridge.render.safe import html_link, html_text, safe_url

ATOM = "http://www.w3.org/2005/Atom"


def entry_id(corpus_id: str) -> str:
    return "urn:zotrec:paper:" + quote(safe_text(corpus_id), safe=":._-/")


def render_atom(recs: Sequence[Recommendation], *, title: str, library: str = "", corpus: str = "",
                now: datetime | None = None, reasons=None) -> str:
    """The feed as text. `reasons(rec)` gives the plain reason text (every reason line, by default)."""
    if reasons is None:
        from zotero_bridge.render.digest import why_lines

        def reasons(rec: Recommendation) -> str:
            return "\n".join(why_lines(rec))
    now = (now or datetime.now(UTC)).astimezone(UTC)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    _text(feed, "title", title)
    _text(feed, "id", "urn:zotrec:feed:" + hashlib.sha256(safe_text(f"{library}\n{corpus}").encode()).hexdigest()[:32])
    _text(feed, "updated", stamp)
    _text(_sub(feed, "author"), "name", "zotrec")
    _sub(feed, "generator", text="zotrec")
    if corpus:
        _text(feed, "subtitle", f"{corpus}, ranked for {library}" if library else corpus)
    for rec in recs:
        paper = rec.paper
        entry = _sub(feed, "entry")
        _text(entry, "id", entry_id(paper.id))
        _text(entry, "title", paper.title)
        _text(entry, "updated", _paper_time(paper.metadata) or stamp)
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
        why = reasons(rec)
        _text(entry, "summary", f"{why}\n\n{paper.abstract or ''}".strip())
        content = _sub(entry, "content", type="html")
        content.text = _entry_html(rec, why)
    return ET.tostring(feed, encoding="unicode", xml_declaration=True) + "\n"


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


def _paper_time(metadata: dict) -> str | None:
    value = metadata.get("updated")
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None


def _sub(parent: ET.Element, name: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM}}}{name}", **attributes)
    if text is not None:
        element.text = safe_text(text)
    return element


def _text(parent: ET.Element, name: str, text: object) -> ET.Element:
    return _sub(parent, name, safe_text(text or ""))
