"""An arXiv API answer of the shape arXiv sends, read by expat (xml.etree) into the entries feedparser gives.

feedparser walks an answer in Python, one SAX call a tag; ElementTree parses in C, and the answer is read an
entry at a time as it is parsed (an element arXiv does not send stops the parse there, so a hostile answer is
never built whole). What reaches a row is done as feedparser 6 does it, mostly by its own helpers: the bytes
it hands its parser (convert_to_utf8), text stripped and repaired (latin-1 read as UTF-8, cp1252 code
points), html/xhtml text constructs through its sanitiser, arXiv's date form as its W3C-DTF reader reads it
(any other by its date parser), the first non-empty title, the last id and dates, categories deduplicated,
link hrefs joined. Anything outside that shape (an encoding feedparser corrects, a DOCTYPE, markup inside a
text element, an element or namespace arXiv does not send, xml:base, a second summary, an author named only
by an e-mail, ...) gives None: the caller then reads the whole answer with feedparser, so an odd answer keeps
feedparser's reading exactly.
"""

from __future__ import annotations

import io
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the parser and its helpers load on the first answer, not with every command
    from xml.etree.ElementTree import Element

ATOM, ARXIV, OPENSEARCH = "http://www.w3.org/2005/Atom", "http://arxiv.org/schemas/atom", \
    "http://a9.com/-/spec/opensearch/1.1/"
_A, _X, _O = f"{{{ATOM}}}", f"{{{ARXIV}}}", f"{{{OPENSEARCH}}}"
_FIRST_PREFIX = {ARXIV: "arxiv", OPENSEARCH: "opensearch"}  # feedparser names their elements by these
_ENTRY, _AUTHOR, _NAME, _ID, _TITLE, _SUMMARY, _UPDATED, _PUBLISHED, _CATEGORY, _LINK = (
    _A + name for name in ("entry", "author", "name", "id", "title", "summary", "updated", "published",
                           "category", "link"))
_PRIMARY, _AFFILIATION, _CONTACT = _X + "primary_category", _X + "affiliation", {_A + "email", _A + "uri"}
_ARXIV_TEXT = {_X + name: "arxiv_" + name for name in ("comment", "doi", "journal_ref")}
_KNOWN = {_A + "feed", _ENTRY, _AUTHOR, _NAME, _ID, _TITLE, _SUMMARY, _UPDATED, _PUBLISHED, _CATEGORY, _LINK,
          _PRIMARY, _AFFILIATION, *_CONTACT, *_ARXIV_TEXT, _O + "totalResults", _O + "startIndex",
          _O + "itemsPerPage"}  # where each may stand is checked as the entries and the feed are read
_FEED_TEXT = {_A + "link", _A + "title", _A + "id", _A + "updated", _O + "itemsPerPage"}
_TOTALS = {_O + "totalResults": "opensearch_totalresults", _O + "startIndex": "opensearch_startindex"}
_USUAL = frozenset(("href", "rel", "type", "title", "term", "scheme", "label", "length"))  # none odd
_HTML_TYPES = {"text/html", "application/xhtml+xml"}
_W3CDTF = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2})")


def read(body: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The answer's feed fields and entries as feedparser would give them; None: let feedparser read it."""
    try:
        return _read(bytes(body))
    except Exception:  # noqa: BLE001 — what this reader did not foresee, feedparser reads (or raises on)
        return None


def _read(body: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    from xml.etree.ElementTree import iterparse

    from feedparser.encodings import convert_to_utf8

    result: dict[str, Any] = {}
    data = convert_to_utf8({}, body, result) if body else b""
    if not data or result.get("bozo") or b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        return None
    bound: dict[str, str] = {}
    first: dict[str, str] = {}
    entries = []
    events = iterparse(io.BytesIO(data), events=("start-ns", "end"))
    for event, item in events:  # read as it is parsed: an element arXiv does not send stops it at once
        if event == "start-ns":
            if not _plain_namespace(*item, bound, first):
                return None
        elif item.tag == _ENTRY:
            entry = _entry(item)
            if entry is None:
                return None
            entries.append(entry)
            item.clear()  # its tree read, only the entry's place is kept
        elif item.tag not in _KNOWN:
            return None
    feed = _feed(events.root, len(entries))
    return None if feed is None else (feed, entries)


def _plain_namespace(prefix: str, uri: str, bound: dict[str, str], first: dict[str, str]) -> bool:
    """Only Atom (the default), arXiv's and OpenSearch's namespaces, each prefix bound once, and the first
    prefix of each extension the one feedparser names its keys by (`arxiv_comment`)."""
    if not uri:
        return True
    if uri != ATOM and uri not in _FIRST_PREFIX or bound.setdefault(prefix, uri) != uri:
        return False
    if not prefix and uri != ATOM:
        return False
    return first.setdefault(uri, prefix) == _FIRST_PREFIX.get(uri, first[uri])


def _feed(root: Element | None, entries: int) -> dict[str, Any] | None:
    """The result set's numbers; None unless every child of the feed is an entry read (and none elsewhere) or
    a text element of the feed's own."""
    if root is None or root.tag != _A + "feed" or _odd(root):
        return None
    feed: dict[str, Any] = {}
    for child in root:
        if child.tag == _ENTRY:
            entries -= 1
        elif child.tag in _FEED_TEXT or child.tag in _TOTALS:
            if len(child) or _odd(child):
                return None
            if child.tag in _TOTALS:  # one with attributes is kept as its attributes (feedparser's way)
                feed[_TOTALS[child.tag]] = _attributes(child) if child.attrib else _plain(child.text)
        else:
            return None
    return feed if entries == 0 else None


def _odd(element: Element) -> bool:
    """Attributes feedparser reads beyond their names: a namespaced one (xml:base, xml:lang) or `base`."""
    attrib = element.attrib
    return bool(attrib) and not attrib.keys() <= _USUAL and any(
        key[:1] == "{" or key.lower() == "base" for key in attrib)


def _attributes(element: Element) -> dict[str, str]:
    """Attribute names in lower case, `rel` and `type` values too (feedparser's normalisation)."""
    attrib = element.attrib
    if not attrib:
        return {}
    if not attrib.keys() <= _USUAL:
        return {key.lower(): value.lower() if key.lower() in ("rel", "type") else value
                for key, value in attrib.items()}
    attributes = dict(attrib)
    for key in ("rel", "type"):
        if key in attributes:
            attributes[key] = attributes[key].lower()
    return attributes


def _entry(element: Element) -> dict[str, Any] | None:
    if element.attrib:  # lastmod, href, rdf:about: feedparser reads them as fields
        return None
    entry: dict[str, Any] = {}
    titled = False
    for child in element:
        tag = child.tag
        if _odd(child):
            return None
        if tag == _AUTHOR:
            author = _author(child)
            if author is None:
                return None
            entry.setdefault("authors", []).append(author)
            continue
        if len(child):
            return None
        text = child.text or ""
        if tag == _ID:
            value = text.strip()
            if value and _attributes(child).get("ispermalink", "true") == "true":
                value = _urljoin(value)
            entry["id"] = _repair(value)
        elif tag == _TITLE:
            value = _content(text, _attributes(child))
            if not titled:  # feedparser keeps the first non-empty title
                entry["title"], titled = value, bool(value)
        elif tag == _SUMMARY:
            if "summary" in entry:  # a second one is read as content, with its own quirks
                return None
            entry["summary"] = _content(text, _attributes(child))
        elif tag == _UPDATED:
            entry["updated_parsed"] = _date(_plain(text))
        elif tag == _PUBLISHED:
            entry["published_parsed"] = _date(_plain(text))
        elif tag == _CATEGORY:
            _category(entry.setdefault("tags", []), _attributes(child), _plain(text))
        elif tag == _LINK:
            link = _link(_attributes(child))
            if link is None:
                return None
            entry.setdefault("links", []).append(link)
        elif tag == _PRIMARY:
            if not child.attrib:  # then a text, where the rows read a term
                return None
            entry["arxiv_primary_category"] = _attributes(child)
        elif tag in _ARXIV_TEXT:
            if child.attrib:  # then feedparser keeps the attributes, not the text
                return None
            entry[_ARXIV_TEXT[tag]] = _plain(text)
        else:
            return None
    return entry


def _author(element: Element) -> dict[str, str] | None:
    """An author's last <name>, stripped (feedparser repairs no name); None where feedparser would name it
    otherwise (text of its own, or an e-mail or URI before any name, which may take the previous author's)."""
    if (element.text or "").strip():
        return None
    author: dict[str, str] = {}
    for part in element:
        if _odd(part) or len(part) or (part.tail or "").strip():
            return None
        if part.tag == _NAME:
            author["name"] = (part.text or "").strip()
        elif part.tag in _CONTACT:
            if "name" not in author:
                return None
        elif part.tag != _AFFILIATION or part.attrib:
            return None
    return author


def _content(text: str, attributes: dict[str, str]) -> str:
    """An Atom text construct (title, summary) as feedparser's pop() gives it."""
    kind = attributes.get("type", "text/plain")
    kind = {"text": "text/plain", "plain": "text/plain", "html": "text/html",
            "xhtml": "application/xhtml+xml"}.get(kind, kind)
    if kind == "application/xhtml+xml":  # feedparser escapes the text of xhtml as it reads it
        from xml.sax.saxutils import escape

        text = escape(text)
    output = text.strip()
    if attributes.get("mode", "") == "base64" or not (
            kind.startswith("text/") or kind.endswith(("+xml", "/xml"))):  # feedparser's _is_base64
        import base64
        import binascii

        try:
            output = base64.decodebytes(output.encode("utf8")).decode("utf8")
        except (binascii.Error, binascii.Incomplete, UnicodeDecodeError):
            pass
    if kind in _HTML_TYPES:
        from feedparser.sanitizer import _sanitize_html
        from feedparser.urls import resolve_relative_uris

        output = _sanitize_html(resolve_relative_uris(output, "", "utf-8", kind), "utf-8", kind)
    return _repair(output)


def _plain(text: str | None) -> str:
    return _repair((text or "").strip())


def _repair(text: str) -> str:
    """feedparser's last steps on a text: UTF-8 read as latin-1 read again, cp1252's code points mapped."""
    if text.isascii():
        return text
    from feedparser.html import _cp1252

    try:
        text = text.encode("iso-8859-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        pass
    return text.translate(_cp1252)


def _urljoin(uri: str) -> str:
    """feedparser's join of a URI to an empty base: only `scheme:///x` changes (to `scheme://x`)."""
    if ":///" not in uri:
        return uri
    from feedparser.urls import _urljoin

    return _urljoin("", uri)


def _link(attributes: dict[str, str]) -> dict[str, str] | None:
    """A <link> as feedparser keeps it; None for one without an href (feedparser reads its text)."""
    attributes.setdefault("rel", "alternate")
    attributes.setdefault("type", "application/atom+xml" if attributes["rel"] == "self" else "text/html")
    if "url" in attributes or "uri" in attributes:  # feedparser's href from either (else it keeps what it has)
        from feedparser.mixin import _FeedParserMixin

        attributes = _FeedParserMixin._enforce_href(attributes)
    if "href" not in attributes:
        return None
    attributes["href"] = _urljoin(attributes["href"])
    return attributes


def _category(tags: list[dict[str, Any]], attributes: dict[str, str], text: str) -> None:
    _add_tag(tags, attributes.get("term"), attributes.get("scheme", attributes.get("domain")),
             attributes.get("label"))
    if text and tags and not tags[-1]["term"]:
        tags[-1]["term"] = text
    elif text:
        _add_tag(tags, text, None, None)


def _add_tag(tags: list[dict[str, Any]], term: Any, scheme: Any, label: Any) -> None:
    tag = {"term": term, "scheme": scheme, "label": label}
    if (term or scheme or label) and tag not in tags:
        tags.append(tag)


def _date(text: str) -> Any:
    """feedparser's date: arXiv's form (`2025-01-20T06:00:00Z`, `-05:00`) read here as feedparser's W3C-DTF
    reader reads it (to a UTC struct_time), every other form and every one out of range by feedparser."""
    if _W3CDTF.fullmatch(text):
        try:
            return datetime.fromisoformat(text).utctimetuple()
        except (ValueError, OverflowError):  # out of range, an offset of a day or more: left to feedparser
            pass
    from feedparser.datetimes import _parse_date

    return _parse_date(text)
