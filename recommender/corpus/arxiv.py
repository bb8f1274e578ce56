"""`zotrec corpus fetch arxiv:cs.LG,stat.ML`: arXiv as a stream (recommender/corpus/stream.py), the first adapter.

Why the query API (export.arxiv.org/api/query) and not the daily listing feeds or OAI-PMH: it alone answers
"the categories' papers by date, newest first" with paging, so a run can stop where the last run's papers
begin and a missed day is caught up; a listing feed holds only today's announcements, OAI-PMH is for bulk
harvests and answers another XML. Its Atom answer is also what users save, so `--from FILE` reads the same.

One query for all categories (`cat:cs.LG OR cat:stat.ML`, `sortBy=lastUpdatedDate`, descending), page after
page, 3 s apart (arXiv's terms: one request every three seconds, one connection). Paging ends at the reported
total, on an empty answer, or at arXiv's 30,000 cap; fetch_stream stops it sooner at the window. arXiv
sometimes answers a page inside the result set with no entries: it is asked again, up to three times. A paper
cross-listed in two of the categories is one entry, one row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from recommender.corpus.arxiv_atom import parse_answer
from recommender.corpus.http import FetchError
from recommender.corpus.stream import Lister, StreamPage, StreamSource
from recommender.errors import InputError

API = "https://export.arxiv.org/api/query"
PAUSE_ENV = "ZOTREC_ARXIV_PAUSE_S"
MAX_RESULTS = 30_000  # arXiv's cap on one result set (more is an HTTP 400)
EMPTY_PAGE_TRIES = 3  # arXiv sometimes answers a page inside the result set with no entries: asked again
_CATEGORY = re.compile(r"^[a-z][a-z-]{1,15}(\.[A-Za-z][A-Za-z-]{0,7})?$")
# The feed's <updated> before its first entry, a plain ASCII date: nothing in it can change how the rest parses.
_FEED_UPDATED = re.compile(rb"\A((?:(?!<entry[\s>]).)*?)<updated>[0-9A-Za-z:+. -]{0,40}</updated>", re.DOTALL)


@dataclass(frozen=True)
class ArxivStream(StreamSource):
    """`arxiv:cs.LG,stat.ML`: the categories (sorted, each once) and the stored corpus they live under."""

    categories: tuple[str, ...]

    prefix = "arxiv"
    service = "arXiv"
    api = API
    pause_s = 3.0  # arXiv's terms of use: at most one request every three seconds
    pause_env = PAUSE_ENV
    page_size = 500  # arXiv serves at most 2,000 a slice and recommends smaller ones
    max_page_size = 2_000
    max_records = MAX_RESULTS
    keeps_pages = True  # parse_answer reads only the bytes and `where`

    @classmethod
    def from_name(cls, name: str) -> ArxivStream:
        """`arxiv:CATEGORY[,CATEGORY…]` → its stream; a malformed category is one line."""
        categories = sorted({c.strip() for c in name.partition(":")[2].split(",") if c.strip()})
        bad = [c for c in categories if not _CATEGORY.match(c)]
        if not categories or bad:
            raise InputError(f"'{name}': arXiv categories look like arxiv:cs.LG,stat.ML"
                             + (f" ('{bad[0]}' is not one)" if bad else ""))
        if len(categories) > 8:
            raise InputError(f"'{name}': at most 8 arXiv categories in one corpus")
        return cls(tuple(categories))

    @property
    def name(self) -> str:
        """The stored corpus name: `arxiv-cs.lg_stat.ml` (the same whatever order the categories were given)."""
        joined = "_".join(c.lower() for c in self.categories)
        if len(joined) > 58:  # a corpus name is a file name of at most 64 characters
            import hashlib

            joined = hashlib.sha256(joined.encode()).hexdigest()[:16]
        return f"arxiv-{joined}"

    @property
    def label(self) -> str:
        return "arXiv " + ", ".join(self.categories)

    def query(self) -> str:
        return " OR ".join(f"cat:{category}" for category in self.categories)

    def parse(self, body: bytes, where: str) -> StreamPage:
        return parse_answer(body, where)

    def answer_key(self, body: bytes) -> bytes:
        """The answer without the feed's own `<updated>` (the day it was asked, which parse_answer does not
        read): a day with nothing new then finds yesterday's page kept (stream_pages.py)."""
        return _FEED_UPDATED.sub(rb"\1", body, count=1)

    def listing(self, lister: Lister, url: str, since: datetime) -> Iterator[StreamPage]:
        start, total, empty = 0, None, 0
        while start < MAX_RESULTS:
            params = {"search_query": self.query(), "sortBy": "lastUpdatedDate", "sortOrder": "descending",
                      "start": start, "max_results": min(lister.page_size, MAX_RESULTS - start)}
            page = lister.get(url, params)
            total = page.total if page.total is not None else total
            if not page.rows and not page.skipped and total is not None and start < total:
                empty += 1  # a known quirk of the API: asked again after the pause
                if empty >= EMPTY_PAGE_TRIES:
                    raise FetchError(f"{url} start={start}: arXiv answered an empty page {empty} times inside a "
                                     f"result set of {total:,}; the stored corpus is kept, try again later")
                continue
            empty = 0
            yield page
            start += len(page.rows) + len(page.skipped)
            if not page.rows or (total is not None and start >= total):
                return

    def wanted(self, row: dict[str, Any]) -> bool:
        return not row.get("categories") or bool(set(self.categories).intersection(row["categories"]))

    def cross_listed(self, row: dict[str, Any]) -> bool:
        return len(set(self.categories).intersection(row.get("categories") or ())) > 1

    def provenance(self) -> dict[str, Any]:
        return {"categories": list(self.categories)}
