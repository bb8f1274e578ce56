"""`openalex:FILTER`: OpenAlex works from the window's first day on, for a topic, a journal (ISSN), an
institution, a search, or any OpenAlex filter (openalex_parse.py reads the forms and the answers).

`/works?filter=…,from_publication_date:DAY&cursor=*&per_page=200`, page after page by `meta.next_cursor`
until it is null. OpenAlex has required a free API key since February 2026 (100 credits a day without one,
enough for a test; 100,000 with it; a list page costs one, a search ten): OPENALEX_API_KEY, or the config's
[openalex] api_key or the keyring that the command line hands in, sent as `api_key` and never printed. Its
limit is a 429: past 100 requests a second it is waited out (Retry-After) and asked again; when the day's
credits are used up it says so in one line, and the stored corpus is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, ClassVar

from recommender.corpus.http import FetchError
from recommender.corpus.openalex_parse import api_filter, parse_works
from recommender.corpus.stream import Lister, StreamPage, StreamSource
from recommender.corpus.web_rows import ServiceKey, first_day
from recommender.errors import InputError

API = "https://api.openalex.org/works"
API_ENV = "ZOTREC_OPENALEX_API"
KEY_ENV, EMAIL_ENV = "OPENALEX_API_KEY", "OPENALEX_EMAIL"
PER_PAGE = 200  # OpenAlex's largest page: the fewest credits


class OpenAlexStream(ServiceKey, StreamSource):
    prefix: ClassVar[str] = "openalex"
    service: ClassVar[str] = "OpenAlex"
    api: ClassVar[str] = API
    pause_s: ClassVar[float] = 0.1  # well under OpenAlex's 100 requests a second
    pause_env: ClassVar[str] = "ZOTREC_OPENALEX_PAUSE_S"
    page_size: ClassVar[int] = PER_PAGE
    max_records: ClassVar[int] = 20_000
    newest_first: ClassVar[bool] = False  # the filter asks from the window's first day

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.filter, self.search = api_filter(spec)
        self.keyed(spec, API_ENV, API, KEY_ENV, EMAIL_ENV)
        self.label = f"OpenAlex {spec[:80]}"

    @classmethod
    def from_name(cls, name: str) -> OpenAlexStream:
        spec = name.partition(":")[2].strip()
        if not spec:
            raise InputError("openalex: needs a filter, e.g. openalex:topic:T10017, openalex:journal:0028-0836, "
                             "openalex:institution:I27837315 or 'openalex:search:cardiac MRI'")
        return cls(spec)

    def parse(self, body: bytes, where: str) -> StreamPage:
        return parse_works(body, where)

    def provenance(self) -> dict[str, Any]:
        return {"filter": self.filter, "search": self.search, "api_key": bool(self._key)}

    def listing(self, lister: Lister, url: str, since: datetime) -> Iterator[StreamPage]:
        start = first_day(since, lister.report.window_start).isoformat()
        params: dict[str, Any] = {
            "filter": ",".join(part for part in (self.filter, f"from_publication_date:{start}") if part),
            "per_page": PER_PAGE, "cursor": "*"}
        if self.search:
            params["search"] = self.search
        if self._key:
            params["api_key"] = self._key
        if self.email:
            params["mailto"] = self.email
        while True:
            try:
                page = lister.get(url, params, is_json=True)
            except FetchError as error:
                raise self._explained(error) from None
            yield page
            if not page.cursor or not (page.rows or page.skipped):
                return
            params["cursor"] = page.cursor

    def _explained(self, error: FetchError) -> FetchError:
        """A 429 that asks to wait past the fetch's patience is the day's credits used up: said so."""
        text = str(error).replace(self._key, "[redacted]") if self._key else str(error)
        if "(Retry-After)" in text or "rate limit is used up" in text:
            hint = ("the free key's 100,000 credits a day are used up" if self._key else
                    "without an API key OpenAlex allows 100 credits a day; set OPENALEX_API_KEY (free at "
                    "openalex.org/settings/api)")
            return FetchError(f"OpenAlex refused with 429: {hint}; the stored corpus is kept, try again after "
                              "midnight UTC", error.status, error.detail)
        return FetchError(text, error.status, error.detail)
