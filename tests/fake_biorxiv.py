"""A local stand-in for api.biorxiv.org's details endpoint (bioRxiv and medRxiv), on 127.0.0.1 over real HTTP.

It answers as the API page (api.biorxiv.org) and saved real answers (tests/data/web/medrxiv-details.json)
show: `/details/{server}/{from}/{to}/{cursor}/json?category=radiology_and_imaging`, 30 records a page,
oldest first, one record per version posted in the interval; a `messages` block with `cursor`, `count`,
`total` and `count_new_papers` as strings, and "no posts found" with an empty collection for a quiet
interval. Faults can be injected by request number: a 503 with Retry-After, a body cut short, an HTML page.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import date

from tests.loopback import AnswerDispatcher, serve, shutdown

PAGE = 30
SUBJECTS = {"radiology and imaging", "oncology", "neuroscience", "genomics", "bioinformatics", "cell biology"}


@dataclass
class Preprint:
    doi: str
    title: str
    posted: date
    category: str = "radiology and imaging"
    server: str = "medrxiv"
    version: int = 1
    abstract: str = "We measured something in patients."
    authors: str = "Okafor, C. N.; Lindqvist, M."

    def record(self) -> dict:
        site = "www.medrxiv.org" if self.server == "medrxiv" else "www.biorxiv.org"
        return {"title": self.title, "authors": self.authors, "author_corresponding": self.authors.split(";")[0],
                "author_corresponding_institution": "A university", "doi": self.doi,
                "date": self.posted.isoformat(), "version": str(self.version),
                "type": "PUBLISHAHEADOFPRINT" if self.server == "medrxiv" else "new results",
                "license": "cc_by", "category": self.category,
                "jatsxml": f"https://{site}/content/early/{self.posted:%Y/%m/%d}/{self.doi[8:]}.source.xml",
                "abstract": self.abstract, "funder": "NA", "published": "NA",
                "server": "medRxiv" if self.server == "medrxiv" else "bioRxiv"}


@dataclass
class FakeBiorxiv:
    preprints: list[Preprint] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    faults: dict[int, tuple] = field(default_factory=dict)  # request number → ("503", s) | ("cut",) | ("html",)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        parts = path.strip("/").split("/")
        with self.lock:
            self.requests.append({"path": path, **{k: v[-1] for k, v in query.items()}})
            fault = self.faults.pop(len(self.requests), None)
        if fault and fault[0] == "503":
            return 503, {"Retry-After": str(fault[1])}, b"Service Unavailable"
        if fault and fault[0] == "html":
            return 200, {"Content-Type": "text/html"}, b"<html><head><title>Just a moment...</title></head></html>"
        if len(parts) != 6 or parts[0] != "details" or parts[5] != "json":
            return 404, {"Content-Type": "text/plain"}, b"not found"
        _, server, start, end, cursor, _ = parts
        try:
            first, last, offset = date.fromisoformat(start), date.fromisoformat(end), int(cursor)
        except ValueError:
            return 200, _JSON, json.dumps({"messages": [{"status": "interval or cursor not valid"}],
                                           "collection": []}).encode()
        category = query.get("category", ["all"])[-1].replace("_", " ").lower()
        if category not in SUBJECTS:  # the live API's quirk: an unknown subject silently answers all of them
            category = "all"
        matching = sorted((p for p in self.preprints if p.server == server and first <= p.posted <= last
                           and category in ("all", p.category)), key=lambda p: (p.posted, p.doi, p.version))
        page = matching[offset:offset + PAGE]
        if not page:
            body = {"messages": [{"status": "no posts found"}], "collection": []}
        else:
            body = {"messages": [{"status": "ok", "category": category, "interval": f"{start}:{end}",
                                  "funder": "all", "cursor": offset, "count": len(page),
                                  "count_new_papers": str(sum(p.version == 1 for p in matching)),
                                  "total": str(len(matching))}],
                    "collection": [p.record() for p in page]}
        data = json.dumps(body).encode()
        if fault and fault[0] == "cut":
            data = data[: len(data) // 2]
        return 200, _JSON, data

    def start(self) -> str:
        self._httpd = serve(self, AnswerDispatcher)
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        shutdown(getattr(self, "_httpd", None))


_JSON = {"Content-Type": "application/json; charset=UTF-8"}
