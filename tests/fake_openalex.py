"""A local stand-in for api.openalex.org/works, on 127.0.0.1 over real HTTP.

It answers as OpenAlex's documentation (developers.openalex.org) and saved real answers
(tests/data/web/openalex-works.json) show: `filter=` of comma-joined `field:value` pairs
(`from_publication_date`, `primary_topic.id`, `primary_location.source.issn`, `institutions.id`), `search=`,
`per_page` (at most 200), `cursor=*` then `meta.next_cursor` (null after the last page), works with
`abstract_inverted_index`. Its limit is credit-based: a day's credits per key (100 without one), one a list
page, ten a search; when they are spent every request is a 429 with {"error": "Rate limit exceeded", …},
`X-RateLimit-Remaining: 0` and a Retry-After to midnight. A per-second burst 429 (Retry-After: 1) and a 503
can be injected by request number. Keys and the filters asked are recorded.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from datetime import date

from tests.loopback import AnswerDispatcher, serve, shutdown


@dataclass
class Work:
    number: int
    title: str
    published: date
    topic: str = "T10017"
    issn: str = "1078-8956"
    institution: str = "I27837315"
    abstract: str = "Chest radiographs are read by a model."
    authors: tuple[str, ...] = ("Maya Rosen", "Kwame Mensah")
    doi: str = ""

    def json(self) -> dict:
        index: dict[str, list[int]] = {}
        for position, word in enumerate(self.abstract.split()):
            index.setdefault(word, []).append(position)
        wid = f"https://openalex.org/W{self.number}"
        return {"id": wid, "doi": f"https://doi.org/{self.doi}" if self.doi else None, "title": self.title,
                "display_name": self.title, "publication_year": self.published.year,
                "publication_date": self.published.isoformat(), "type": "article",
                "primary_location": {"is_oa": False, "pdf_url": None, "source": {
                    "id": "https://openalex.org/S203256638", "display_name": "Nature Medicine",
                    "issn_l": self.issn, "issn": [self.issn], "type": "journal"}},
                "authorships": [{"author_position": "first" if n == 0 else "middle",
                                 "author": {"id": f"https://openalex.org/A{self.number}{n}", "display_name": name},
                                 "institutions": [{"id": f"https://openalex.org/{self.institution}"}]}
                                for n, name in enumerate(self.authors)],
                "primary_topic": {"id": f"https://openalex.org/{self.topic}"},
                "abstract_inverted_index": index or None, "created_date": self.published.isoformat()}


@dataclass
class FakeOpenAlex:
    works: list[Work] = field(default_factory=list)
    credits: dict[str, int] = field(default_factory=dict)  # credits left per key ("" = no key)
    daily_credits: int = 100_000
    keyless_credits: int = 100
    requests: list[dict] = field(default_factory=list)
    faults: dict[int, tuple] = field(default_factory=dict)  # request number → ("burst",) | ("503", s) | ("cut",)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        params = {key: values[-1] for key, values in query.items()}
        key = params.get("api_key", "")
        with self.lock:
            self.requests.append(params)
            fault = self.faults.pop(len(self.requests), None)
            left = self.credits.setdefault(key, self.daily_credits if key else self.keyless_credits)
            cost = 10 if params.get("search") else 1
            spent = left < cost
            if not spent and not fault:
                self.credits[key] = left - cost
        if fault and fault[0] == "burst":
            return 429, {**_JSON, "Retry-After": "1"}, b'{"error": "Rate limit exceeded", "message": "slow down"}'
        if fault and fault[0] == "503":
            return 503, {"Retry-After": str(fault[1])}, b"busy"
        if spent:
            return 429, {**_JSON, "Retry-After": "50000", "X-RateLimit-Limit": str(self.daily_credits),
                         "X-RateLimit-Remaining": "0"}, json.dumps(
                {"error": "Rate limit exceeded", "message": "You have used your daily credits."}).encode()
        if path.rstrip("/") != "/works":
            return 404, _JSON, b'{"error": "Not found", "message": "no such endpoint"}'
        try:
            matching = self._matching(params.get("filter", ""), params.get("search", ""))
        except ValueError as error:
            return 400, _JSON, json.dumps({"error": "Invalid query parameters error.", "message": str(error)}).encode()
        size = min(int(params.get("per_page", 25)), 200)
        offset = _offset(params.get("cursor", "*"))
        page = matching[offset:offset + size]
        following = offset + size if offset + size < len(matching) else None
        body = json.dumps({"meta": {"count": len(matching), "db_response_time_ms": 12, "page": None,
                                    "per_page": size, "next_cursor": _cursor(following), "groups_count": None},
                           "results": [w.json() for w in page], "group_by": []}).encode()
        return 200, _JSON, body[: len(body) // 2] if fault and fault[0] == "cut" else body

    def _matching(self, filters: str, search: str) -> list[Work]:
        works = list(self.works)
        for part in filter(None, filters.split(",")):
            name, _, value = part.partition(":")
            test = {"from_publication_date": lambda w, v: w.published >= date.fromisoformat(v),
                    "primary_topic.id": lambda w, v: w.topic == v.rsplit("/", 1)[-1],
                    "primary_location.source.issn": lambda w, v: w.issn == v,
                    "institutions.id": lambda w, v: w.institution == v.rsplit("/", 1)[-1]}.get(name)
            if test is None:
                raise ValueError(f"{name} is not a valid field")
            works = [w for w in works if test(w, value)]
        words = search.lower().split()
        return sorted((w for w in works if all(word in (w.title + " " + w.abstract).lower() for word in words)),
                      key=lambda w: w.number)

    def start(self) -> str:
        self._httpd = serve(self, AnswerDispatcher)
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/works"

    def stop(self) -> None:
        shutdown(getattr(self, "_httpd", None))


_JSON = {"Content-Type": "application/json"}


def _cursor(offset: int | None) -> str | None:
    return base64.urlsafe_b64encode(f"o{offset}".encode()).decode() if offset is not None else None


def _offset(cursor: str) -> int:
    return 0 if cursor == "*" else int(base64.urlsafe_b64decode(cursor.encode()).decode()[1:])
