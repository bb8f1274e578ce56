"""A local stand-in for export.arxiv.org/api/query (tests, benchmarks), on 127.0.0.1 over real HTTP.

It answers the way the arXiv API user manual (arXiv/arxiv-docs, help/api/user-manual.md) says the service
does: Atom 1.0 with the OpenSearch (`totalResults`, `startIndex`, `itemsPerPage`) and arXiv namespaces;
an entry's `<id>` is `http://arxiv.org/abs/<id>v<N>`, `<published>` the first version's date and `<updated>`
this version's; `<arxiv:primary_category>` and a `<category>` per class, the abstract and PDF links;
`search_query` of `cat:` terms joined by OR, `sortBy`, `sortOrder`, `start`, `max_results` (over 30,000, or
not an integer: HTTP 400 with the error feed, one entry titled "Error"). A cross-listed paper is one entry.
Quirks and refusals can be injected: a 503 with Retry-After, an empty page inside the result set (a known
quirk of the live API), a body cut short, and entries that appear between two pages (the set shifts). Hostile
modes: a redirect to another host (`("moved", URL)`), and a lying result set (`lying`: totalResults 10⁹, one
new entry a page, each a minute older; past `lying` requests it answers an error, so a client without a page
guard fails quickly instead of paging for hours).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlparse
import re
from xml.sax.saxutils import escape as _escape, quoteattr

from tests.loopback import QuietDispatcher, serve, shutdown

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def escape(text: str) -> str:
    """Text as arXiv's XML holds it: escaped, without the characters XML 1.0 cannot carry."""
    return _escape(_NOT_XML.sub("", text))


ATOM, OPENSEARCH, ARXIV = "http://www.w3.org/2005/Atom", "http://a9.com/-/spec/opensearch/1.1/", \
    "http://arxiv.org/schemas/atom"


@dataclass
class Version:
    """One paper as the API shows its latest version."""

    base: str
    title: str
    abstract: str
    categories: tuple[str, ...]
    published: datetime
    updated: datetime
    version: int = 1
    authors: tuple[str, ...] = ("Jane Doe", "Ann Smith")
    doi: str = ""
    listed: datetime | None = None  # where the listing sorts it, when a faulty index disagrees with `updated`

    @property
    def primary(self) -> str:
        return self.categories[0]


def paper(number: int, day: datetime, *, categories=("cs.LG",), title: str | None = None,
          abstract: str | None = None, hour: int = 12) -> Version:
    """A paper numbered `number` submitted on `day` (ids in the 2025 scheme: 2501.NNNNN)."""
    when = day.replace(hour=hour % 24, minute=number % 60, second=0, microsecond=0)
    return Version(base=f"2501.{number:05d}", title=title or f"Learning things number {number}",
                   abstract=abstract or f"We study problem {number} of learning and solve it with\n  method {number}.",
                   categories=tuple(categories), published=when, updated=when)


@dataclass
class FakeArxiv:
    papers: dict[str, Version] = field(default_factory=dict)
    requests: list[dict] = field(default_factory=list)  # each request's parameters and its monotonic time
    faults: dict[int, tuple] = field(default_factory=dict)  # request number (1-based) → ("503", retry_after)
    #                      | ("empty",) | ("cut",) | ("html",) | ("error", message) | ("moved", url)
    late: list[Version] = field(default_factory=list)  # shown from the second page on
    lying: int = 0  # > 0: the lying result set, for at most this many requests
    slice: int = 2000  # the most entries one page holds (arXiv's: 2,000)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, *versions: Version) -> None:
        for version in versions:
            self.papers[version.base] = version

    def revise(self, base: str, when: datetime, abstract: str) -> None:
        """A new version of `base`, submitted at `when`, with a new abstract."""
        old = self.papers[base]
        self.papers[base] = Version(old.base, old.title, abstract, old.categories, old.published, when,
                                    old.version + 1, old.authors, old.doi)

    # ---- the API ----------------------------------------------------------------------------------
    def answer(self, query: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            params = {key: values[-1] for key, values in query.items()}
            self.requests.append({**params, "at": time.monotonic()})
            fault = self.faults.pop(len(self.requests), None)
            if len(self.requests) > 1 and self.late:
                self.add(*self.late)
                self.late = []
        if self.lying:
            return self._lie(params)
        if fault and fault[0] == "moved":
            return 302, {"Location": fault[1], "Content-Type": "text/plain"}, b"Moved"
        if fault and fault[0] == "503":
            return 503, {"Retry-After": str(fault[1]), "Content-Type": "text/plain"}, b"Service Unavailable"
        if fault and fault[0] == "error":
            return self._error(fault[1], params)
        if fault and fault[0] == "html":
            return 200, {"Content-Type": "text/html"}, b"<html><head><title>arXiv</title></head><body>busy</body></html>"
        try:
            start = int(params.get("start", "0"))
            size = int(params.get("max_results", "10"))
        except ValueError:
            return self._error("start and max_results must be integers", params)
        if start < 0 or size < 0:
            return self._error("start must be >= 0", params)
        if size > 30_000:
            return self._error("max_results must be <= 30000", params)
        matching = self._matching(params.get("search_query", ""))
        key = {"lastUpdatedDate": lambda p: p.listed or p.updated, "submittedDate": lambda p: p.published}.get(
            params.get("sortBy", "relevance"), lambda p: p.base)
        matching.sort(key=lambda p: (key(p), p.base), reverse=params.get("sortOrder", "descending") == "descending")
        page = [] if fault and fault[0] == "empty" else matching[start:start + min(size, self.slice)]
        body = self._feed(params, len(matching), start, len(page), "".join(map(atom_entry, page))).encode()
        if fault and fault[0] == "cut":
            body = body[: len(body) // 2]
        return 200, {"Content-Type": "application/atom+xml; charset=utf-8"}, body

    def _lie(self, params: dict) -> tuple[int, dict[str, str], bytes]:
        number = len(self.requests)
        if number > self.lying:
            return self._error("the double stops lying here: the client has no page guard", params)
        when = datetime.now(UTC) - timedelta(minutes=number)
        one = Version(f"2501.{number:05d}", f"Lying paper {number}", "An abstract.", ("cs.LG",), when, when)
        start = int(params.get("start", "0"))
        return 200, {"Content-Type": "application/atom+xml"}, self._feed(params, 10**9, start, 1, atom_entry(one)).encode()

    def _matching(self, query: str) -> list[Version]:
        wanted = {term.strip().removeprefix("cat:") for term in query.split(" OR ") if term.strip()}
        return [p for p in self.papers.values() if wanted.intersection(p.categories)]

    def _feed(self, params: dict, total: int, start: int, count: int, entries: str) -> str:
        query = escape(f"search_query={params.get('search_query', '')}&id_list=&start={start}"
                       f"&max_results={params.get('max_results', 10)}")
        today = datetime.now(UTC).strftime("%Y-%m-%dT00:00:00-05:00")
        return (f'<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="{ATOM}">\n'
                f'  <link href="http://arxiv.org/api/query?{query}" rel="self" type="application/atom+xml"/>\n'
                f'  <title type="html">ArXiv Query: {query}</title>\n'
                f'  <id>http://arxiv.org/api/{abs(hash(query)) % 10**12:012d}</id>\n  <updated>{today}</updated>\n'
                f'  <opensearch:totalResults xmlns:opensearch="{OPENSEARCH}">{total}</opensearch:totalResults>\n'
                f'  <opensearch:startIndex xmlns:opensearch="{OPENSEARCH}">{start}</opensearch:startIndex>\n'
                f'  <opensearch:itemsPerPage xmlns:opensearch="{OPENSEARCH}">{count}</opensearch:itemsPerPage>\n'
                f'{entries}</feed>\n')

    def _error(self, message: str, params: dict) -> tuple[int, dict[str, str], bytes]:
        slug = message.replace(" ", "_")
        entry = (f'  <entry>\n    <id>http://arxiv.org/api/errors#{escape(slug)}</id>\n    <title>Error</title>\n'
                 f'    <summary>{escape(message)}</summary>\n    <updated>{_stamp(datetime.now(UTC))}</updated>\n'
                 f'    <link href="http://arxiv.org/api/errors#{escape(slug)}" rel="alternate" type="text/html"/>\n'
                 f'    <author><name>arXiv api core</name></author>\n  </entry>\n')
        return 400, {"Content-Type": "application/atom+xml; charset=utf-8"}, self._feed(params, 1, 0, 1, entry).encode()

    # ---- serving ----------------------------------------------------------------------------------
    def start(self) -> str:
        self._httpd = serve(self, _Handler)
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/api/query"

    def stop(self) -> None:
        shutdown(getattr(self, "_httpd", None))


def _stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def atom_entry(p: Version) -> str:
    """One entry as the manual's examples show it (title and summary broken over lines, as arXiv sends them)."""
    vid = f"{p.base}v{p.version}"
    authors = "".join(f"    <author>\n      <name>{escape(a)}</name>\n    </author>\n" for a in p.authors)
    doi = (f'    <arxiv:doi xmlns:arxiv="{ARXIV}">{escape(p.doi)}</arxiv:doi>\n'
           f'    <link title="doi" href="http://dx.doi.org/{escape(p.doi)}" rel="related"/>\n') if p.doi else ""
    categories = "".join(f'    <category term={quoteattr(c)} scheme="{ARXIV}"/>\n' for c in p.categories)
    return (f"  <entry>\n    <id>http://arxiv.org/abs/{vid}</id>\n    <updated>{_stamp(p.updated)}</updated>\n"
            f"    <published>{_stamp(p.published)}</published>\n    <title>{escape(p.title)}</title>\n"
            f"    <summary>  {escape(p.abstract)}\n</summary>\n{authors}{doi}"
            f'    <link href="http://arxiv.org/abs/{vid}" rel="alternate" type="text/html"/>\n'
            f'    <link title="pdf" href="http://arxiv.org/pdf/{vid}" rel="related" type="application/pdf"/>\n'
            f'    <arxiv:primary_category xmlns:arxiv="{ARXIV}" term={quoteattr(p.primary)} scheme="{ARXIV}"/>\n'
            f"{categories}  </entry>\n")


class _Handler(QuietDispatcher):
    def _dispatch(self, method: str) -> None:
        url = urlparse(self.path)
        if method != "GET" or url.path != "/api/query":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, headers, body = self.fake.answer(parse_qs(url.query, keep_blank_values=True))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def days_ago(now: datetime, days: float) -> datetime:
    return now - timedelta(days=days)


def private_data(tmp_path, monkeypatch, pause: str) -> Path:
    """zotrec's data folder inside the test's tmp_path, and arXiv's pause (seconds) for the test."""
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    monkeypatch.setenv("ZOTREC_ARXIV_PAUSE_S", pause)
    return tmp_path / "zotrec-data"
