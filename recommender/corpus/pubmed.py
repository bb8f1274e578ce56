"""`pubmed:QUERY`: PubMed's new records for a query, through NCBI's E-utilities.

One esearch over the window (`datetype=edat`: the date a record entered PubMed, so a late-indexed old article
counts as new; `usehistory=y`, `retmax=0`) leaves the matches on NCBI's history server; efetch then reads
them by WebEnv and query_key, 500 a page, as PubMed XML (pubmed_parse.py). NCBI's terms: at most 3 requests a
second without an API key, 10 with one (NCBI_API_KEY, or the config's [ncbi] api_key that the command line
hands in); every request names the tool (`tool=zotrec`) and, when one is set, a contact (`email`, NCBI_EMAIL);
the key is never printed. A 429 ("API rate limit exceeded") is waited out and asked again.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, ClassVar

from recommender.corpus.http import FetchError
from recommender.corpus.pubmed_parse import parse_articles, parse_search
from recommender.corpus.stream import AnswerError, Lister, StreamPage, StreamSource
from recommender.corpus.web_rows import ServiceKey, first_day
from recommender.errors import InputError

API = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
API_ENV = "ZOTREC_PUBMED_API"
KEY_ENV, EMAIL_ENV = "NCBI_API_KEY", "NCBI_EMAIL"
TOOL = "zotrec"
PAGE_SIZE = 500
MAX_RECORDS = 10_000  # a day's query that matches more is too broad to rank: said, not cut silently


class PubmedStream(ServiceKey, StreamSource):
    prefix: ClassVar[str] = "pubmed"
    service: ClassVar[str] = "PubMed"
    api: ClassVar[str] = API
    pause_s: ClassVar[float] = 0.34  # NCBI: at most 3 requests a second without a key
    pause_env: ClassVar[str] = "ZOTREC_PUBMED_PAUSE_S"
    page_size: ClassVar[int] = PAGE_SIZE
    max_records: ClassVar[int] = MAX_RECORDS
    newest_first: ClassVar[bool] = False  # the window is asked whole (mindate..maxdate)

    def __init__(self, query: str) -> None:
        self.query = query
        self.keyed(query, API_ENV, API, KEY_ENV, EMAIL_ENV)
        self.label = f"PubMed “{query[:80]}”"

    @classmethod
    def from_name(cls, name: str) -> PubmedStream:
        query = name.partition(":")[2].strip()
        if not query:
            raise InputError("pubmed: needs a query, e.g. 'pubmed:cardiac MRI' or 'pubmed:\"Radiology\"[Journal]'")
        return cls(query)

    def pause(self) -> float:
        """10 requests a second with a key, 3 without (or the environment's pause)."""
        if self._key and not os.environ.get(self.pause_env, "").strip():
            return 0.1
        return super().pause()

    def parse(self, body: bytes, where: str) -> StreamPage:
        return parse_articles(body, where)

    def provenance(self) -> dict[str, Any]:
        return {"query": self.query, "datetype": "edat", "api_key": bool(self._key)}

    def listing(self, lister: Lister, url: str, since: datetime) -> Iterator[StreamPage]:
        base = url if url.endswith("/") else url + "/"
        common = {"db": "pubmed", "tool": TOOL, **({"email": self.email} if self.email else {}),
                  **({"api_key": self._key} if self._key else {})}
        start, end = first_day(since, lister.report.window_start), lister.now.astimezone(UTC).date()
        answer = lister.get_json(base + "esearch.fcgi", {
            **common, "term": self.query, "datetype": "edat", "mindate": start.strftime("%Y/%m/%d"),
            "maxdate": end.strftime("%Y/%m/%d"), "usehistory": "y", "retmax": 0, "retmode": "json"})
        try:
            search = parse_search(answer, f"{base}esearch.fcgi")
        except AnswerError as error:
            raise FetchError(str(error)) from None
        if search.count > MAX_RECORDS:
            raise FetchError(f"PubMed: “{self.query}” matches {search.count:,} records from {start} on, more than "
                             f"{MAX_RECORDS:,}; narrow the query (a journal, a MeSH term) or use fewer --days")
        for retstart in range(0, search.count, PAGE_SIZE):
            yield lister.get(base + "efetch.fcgi", {
                **common, "query_key": search.query_key, "WebEnv": search.webenv, "retstart": retstart,
                "retmax": PAGE_SIZE, "retmode": "xml"})
