"""A local stand-in for NCBI's E-utilities (esearch.fcgi, efetch.fcgi for db=pubmed), on 127.0.0.1 over HTTP.

It answers as the E-utilities manual (NBK25499) and saved real answers (tests/data/web/pubmed-*.{json,xml})
show: esearch with `usehistory=y` keeps the matches under a WebEnv ("MCID_…") and query_key and answers JSON
(`esearchresult` with count as a string); efetch reads them back by WebEnv/query_key, `retstart`, `retmax`, as
a `PubmedArticleSet` with labelled `AbstractText` sections. The term matches records whose title or abstract
holds every word; `datetype=edat` with `mindate`/`maxdate` (YYYY/MM/DD) windows on the Entrez date. NCBI's
rate limit is kept: more than 3 requests in a second (10 with an `api_key`) is a 429 with its JSON
{"error":"API rate limit exceeded",…}. An unknown WebEnv is efetch's error. `tool` and `email` are recorded.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from datetime import date
from xml.sax.saxutils import escape, quoteattr

from tests.loopback import AnswerDispatcher, serve, shutdown


@dataclass
class Record:
    pmid: str
    title: str
    entrez: date
    sections: tuple[tuple[str, str], ...] = (("BACKGROUND", "Native T1 is raised."), ("RESULTS", "It was."))
    authors: tuple[tuple[str, str], ...] = (("Fischer", "Lena"), ("O'Brien", "Sean P"))
    doi: str = ""
    journal: str = "Journal of cardiovascular magnetic resonance"

    def text(self) -> str:
        return (self.title + " " + " ".join(text for _, text in self.sections)).lower()

    def xml(self) -> str:
        abstract = "".join(f"<AbstractText Label={quoteattr(label)} NlmCategory={quoteattr(label)}>"
                           f"{escape(text)}</AbstractText>" if label else f"<AbstractText>{escape(text)}</AbstractText>"
                           for label, text in self.sections)
        authors = "".join(f'<Author ValidYN="Y"><LastName>{escape(last)}</LastName><ForeName>{escape(fore)}'
                          f"</ForeName></Author>" for last, fore in self.authors)
        doi = f'<ELocationID EIdType="doi" ValidYN="Y">{escape(self.doi)}</ELocationID>' if self.doi else ""
        when = f"<Year>{self.entrez.year}</Year><Month>{self.entrez.month}</Month><Day>{self.entrez.day}</Day>"
        return (f'<PubmedArticle><MedlineCitation Status="PubMed-not-MEDLINE" Owner="NLM"><PMID Version="1">'
                f"{self.pmid}</PMID><Article PubModel=\"Electronic\"><Journal><JournalIssue><PubDate>"
                f"<Year>{self.entrez.year}</Year></PubDate></JournalIssue><Title>{escape(self.journal)}</Title>"
                f"</Journal><ArticleTitle>{escape(self.title)}.</ArticleTitle>{doi}<Abstract>{abstract}</Abstract>"
                f'<AuthorList CompleteYN="Y">{authors}</AuthorList></Article></MedlineCitation><PubmedData>'
                f'<History><PubMedPubDate PubStatus="entrez">{when}</PubMedPubDate></History><ArticleIdList>'
                f'<ArticleId IdType="pubmed">{self.pmid}</ArticleId></ArticleIdList></PubmedData></PubmedArticle>\n')


@dataclass
class FakePubmed:
    records: list[Record] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    history: dict[str, list[str]] = field(default_factory=dict)  # WebEnv → the matching PMIDs, newest first
    refused: int = 0  # 429s sent for going over the rate
    rate_limited: bool = True  # off for tests that record the pauses instead of sleeping them
    faults: dict[int, tuple] = field(default_factory=dict)  # request number → ("503", s) | ("cut",) | ("lost",)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _times: dict[str, list[float]] = field(default_factory=dict)

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        params = {key: values[-1] for key, values in query.items()}
        with self.lock:
            self.requests.append({"path": path, **params, "at": time.monotonic()})
            fault = self.faults.pop(len(self.requests), None)
            over = self.rate_limited and self._over_rate(params.get("api_key", ""))
        if over:
            limit = "10" if params.get("api_key") else "3"
            body = json.dumps({"error": "API rate limit exceeded", "api-key": params.get("api_key") or "127.0.0.1",
                               "count": str(int(limit) + 1), "limit": limit}).encode()
            return 429, {"Content-Type": "application/json", "Retry-After": "1"}, body
        if fault and fault[0] == "503":
            return 503, {"Retry-After": str(fault[1])}, b"<html><body>Service unavailable</body></html>"
        if path.endswith("/esearch.fcgi"):
            return self._search(params)
        if path.endswith("/efetch.fcgi"):
            status, headers, body = self._fetch(params, lost=bool(fault and fault[0] == "lost"))
            return status, headers, body[: len(body) // 2] if fault and fault[0] == "cut" else body
        return 404, {}, b"not found"

    def _over_rate(self, key: str) -> bool:
        now = time.monotonic()
        recent = [t for t in self._times.get(key, []) if now - t < 1.0]
        recent.append(now)
        self._times[key] = recent
        if len(recent) > (10 if key else 3):
            self.refused += 1
            return True
        return False

    def _search(self, params: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        words = params.get("term", "").lower().split()
        first, last = _day(params.get("mindate")), _day(params.get("maxdate"))
        hits = sorted((r for r in self.records if all(w in r.text() for w in words)
                       and (first is None or r.entrez >= first) and (last is None or r.entrez <= last)),
                      key=lambda r: (r.entrez, r.pmid), reverse=True)
        webenv = f"MCID_{len(self.history) + 1:024d}"
        self.history[webenv] = [r.pmid for r in hits]
        result = {"count": str(len(hits)), "retmax": "0", "retstart": "0", "idlist": [],
                  "translationset": [], "querytranslation": params.get("term", "")}
        if params.get("usehistory") == "y":
            result.update(querykey="1", webenv=webenv)
        return 200, {"Content-Type": "application/json; charset=UTF-8"}, json.dumps(
            {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result}).encode()

    def _fetch(self, params: dict[str, str], *, lost: bool) -> tuple[int, dict[str, str], bytes]:
        pmids = None if lost else self.history.get(params.get("WebEnv", ""))
        if pmids is None or params.get("query_key") != "1":
            return 400, {"Content-Type": "text/xml"}, (b'<?xml version="1.0" ?>\n<eFetchResult><ERROR>Unable to '
                                                       b"obtain query #1</ERROR></eFetchResult>")
        start, size = int(params.get("retstart", 0)), int(params.get("retmax", 20))
        by_id = {r.pmid: r for r in self.records}
        articles = "".join(by_id[p].xml() for p in pmids[start:start + size])
        return 200, {"Content-Type": "text/xml; charset=UTF-8"}, (
            '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN"'
            ' "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
            f"<PubmedArticleSet>\n{articles}</PubmedArticleSet>\n").encode()

    def start(self) -> str:
        self._httpd = serve(self, AnswerDispatcher)
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/entrez/eutils/"

    def stop(self) -> None:
        shutdown(getattr(self, "_httpd", None))


def _day(text: str | None) -> date | None:
    try:
        return date(*map(int, str(text).split("/"))) if text else None
    except (TypeError, ValueError):
        return None
