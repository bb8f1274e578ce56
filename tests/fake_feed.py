"""A journal's table-of-contents feed served on 127.0.0.1 over real HTTP, with conditional GET.

The feed is RSS 1.0/RDF with Dublin Core and PRISM in Nature's shape (tests/data/web/nature-rss10.xml),
RSS 2.0 in PubMed's (pubmed-rss20.xml) or Atom in PLOS's (plos-atom.xml). Like a publisher's server it sends
an ETag and Last-Modified, and answers 304 Not Modified, without a body, to an If-None-Match or
If-Modified-Since that still holds. It counts requests, 304s and bodies sent; faults can be injected by
request number: a 503 with Retry-After, an HTML page.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from xml.sax.saxutils import escape

from tests.loopback import QuietDispatcher, serve, shutdown


@dataclass
class Item:
    doi: str
    title: str
    day: datetime
    authors: tuple[str, ...] = ("Maya Rosen", "Kwame Mensah")
    abstract: str = "We report a finding in patients."
    link: str = ""

    @property
    def url(self) -> str:
        return self.link or f"https://www.nature.com/articles/{self.doi.rsplit('/', 1)[-1]}"


@dataclass
class FakeFeed:
    items: list[Item] = field(default_factory=list)
    kind: str = "rss10"  # rss10 | rss20 | atom
    changed: datetime = field(default_factory=lambda: datetime(2026, 12, 1, 6, tzinfo=UTC))
    requests: list[dict] = field(default_factory=list)
    not_modified: int = 0
    bodies: int = 0
    faults: dict[int, tuple] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def publish(self, *items: Item, when: datetime | None = None) -> None:
        """New items at the top of the feed (its ETag and Last-Modified change)."""
        self.items[:0] = items
        self.changed = when or datetime.now(UTC).replace(microsecond=0)

    def body(self) -> bytes:
        return {"rss10": _rss10, "rss20": _rss20, "atom": _atom}[self.kind](self.items).encode()

    def answer(self, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            self.requests.append(dict(headers))
            fault = self.faults.pop(len(self.requests), None)
        if fault and fault[0] == "503":
            return 503, {"Retry-After": str(fault[1])}, b"busy"
        if fault and fault[0] == "html":
            return 200, {"Content-Type": "text/html"}, b"<html><head><title>Access denied</title></head></html>"
        body = self.body()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        modified = format_datetime(self.changed, usegmt=True)
        validators = {"ETag": etag, "Last-Modified": modified}
        if headers.get("if-none-match") == etag or (
                "if-none-match" not in headers and _not_after(headers.get("if-modified-since"), self.changed)):
            with self.lock:
                self.not_modified += 1
            return 304, validators, b""
        with self.lock:
            self.bodies += 1
        kind = "application/atom+xml" if self.kind == "atom" else "application/rss+xml"
        return 200, {**validators, "Content-Type": f"{kind}; charset=UTF-8"}, body

    def start(self) -> str:
        self._httpd = serve(self, _Handler)
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/rss/current"

    def stop(self) -> None:
        shutdown(getattr(self, "_httpd", None))


def _not_after(since: str | None, changed: datetime) -> bool:
    try:
        return bool(since) and changed <= parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False


def _rss10(items: list[Item]) -> str:
    seq = "".join(f'<rdf:li rdf:resource="{escape(i.url)}"/>' for i in items)
    entries = "".join(
        f'<item rdf:about="{escape(i.url)}"><title><![CDATA[{i.title}]]></title><link>{escape(i.url)}</link>'
        f'<content:encoded><![CDATA[<p>Nature Medicine, Published online: {i.day:%d %B %Y}; '
        f'<a href="{i.url}">doi:{i.doi}</a></p>{i.abstract}]]></content:encoded>'
        + "".join(f"<dc:creator>{escape(a)}</dc:creator>" for a in i.authors)
        + f"<dc:identifier>doi:{escape(i.doi)}</dc:identifier><dc:date>{i.day:%Y-%m-%d}</dc:date>"
        f"<prism:publicationName>Nature Medicine</prism:publicationName><prism:doi>{escape(i.doi)}</prism:doi></item>\n"
        for i in items)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" '
            'xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/" '
            'xmlns:content="http://purl.org/rss/1.0/modules/content/">\n'
            '<channel rdf:about="http://feeds.nature.com/nm/rss/current"><title>Nature Medicine</title>'
            f'<link>http://feeds.nature.com/nm/rss/current</link><items><rdf:Seq>{seq}</rdf:Seq></items></channel>\n'
            f"{entries}</rdf:RDF>\n")


def _rss20(items: list[Item]) -> str:
    entries = "".join(
        f"<item><title>{escape(i.title)}</title><link>{escape(i.url)}</link>"
        f"<description>{escape('<p>' + i.abstract + '</p>')}</description>"
        f"<pubDate>{format_datetime(i.day, usegmt=True)}</pubDate>"
        + "".join(f"<dc:creator>{escape(a)}</dc:creator>" for a in i.authors)
        + f"<dc:source>Radiology</dc:source><dc:identifier>doi:{escape(i.doi)}</dc:identifier>"
        f'<guid isPermaLink="false">{escape(i.doi)}</guid></item>\n' for i in items)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<rss xmlns:dc="http://purl.org/dc/elements/1.1/" version="2.0">'
            f"<channel><title>Radiology - PubMed</title><link>https://pubmed.ncbi.nlm.nih.gov/</link>\n{entries}"
            "</channel></rss>\n")


def _atom(items: list[Item]) -> str:
    entries = "".join(
        f'<entry><title>{escape(i.title)}</title><link rel="alternate" href="{escape(i.url)}"/>'
        f"<id>info:doi/{escape(i.doi)}</id><published>{i.day:%Y-%m-%dT%H:%M:%SZ}</published>"
        f"<updated>{i.day:%Y-%m-%dT%H:%M:%SZ}</updated>"
        + "".join(f"<author><name>{escape(a)}</name></author>" for a in i.authors)
        + f'<content type="html">{escape("<p>" + i.abstract + "</p>")}</content></entry>\n' for i in items)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
            "<title>PLOS ONE: New Articles</title><id>https://journals.plos.org/plosone/feed/atom</id>"
            f"<updated>2026-12-03T14:00:00Z</updated>\n{entries}</feed>\n")


class _Handler(QuietDispatcher):
    def _dispatch(self, method: str) -> None:
        status, headers, body = self.fake.answer({k.lower(): v for k, v in self.headers.items()})
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 304:
            self.wfile.write(body)
