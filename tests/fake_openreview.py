"""A local stand-in for the OpenReview API v2 `/notes` listing and a PMLR BibTeX file (tests, benchmarks).

Threaded `http.server` on 127.0.0.1. It pages like OpenReview (`offset`, `limit` capped at
`max_limit`, `count`), serves `/icml25.bib` with an ETag and Range support, records every request,
and can be told to misbehave once: answer with a status (429 + Retry-After, 500), cut a body short,
or answer in another shape.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

VENUE_ID = "ICML.cc/2025/Conference"


def make_note(number: int, *, title: str | None = None, abstract: str | None = "", venue: str = "poster",
              authors: list[str] | None = None) -> dict[str, Any]:
    """One note in the API v2 shape (every content field wrapped as {"value": …})."""
    note_id = f"note{number:06d}"
    content = {
        "title": {"value": title or f"Paper {number}: Learning Things Number {number}"},
        "authors": {"value": authors or [f"Author {number}", "Rodrı́guez Second"]},
        "abstract": {"value": abstract if abstract != "" else f"We study problem {number} and solve it."},
        "venue": {"value": f"ICML 2025 {venue}"},
        "venueid": {"value": VENUE_ID},
        "pdf": {"value": f"/pdf/{number:040d}.pdf"},
    }
    return {"id": note_id, "forum": note_id, "content": content, "cdate": 1738000000000 + number}


def make_bibtex(entries: list[dict[str, str]]) -> bytes:
    """PMLR-style BibTeX (like mlresearch/v267 icml25.bib) from dicts with key, title, author, …"""
    parts = ["@Proceedings{ICML-2025,\n    booktitle = {Proceedings of ICML},\n    volume = {267},\n"
             "    year = {2025}\n}\n"]
    for entry in entries:
        fields = ",\n".join(f"    {k} = {{{v}}}" for k, v in entry.items() if k != "key")
        parts.append(f"@InProceedings{{{entry['key']},\n{fields}\n}}\n")
    return "\n".join(parts).encode()


@dataclass
class Fault:
    """Misbehave once for requests whose path (and offset, if given) match."""

    path: str
    offset: int | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    cut_at: float | None = None  # send this share of the real body, then close
    times: int = 1


class FakeConference:
    """Start with `with FakeConference(notes, bibtex) as server:`; `server.url` is the base URL."""

    def __init__(self, notes: list[dict], bibtex: bytes = b"", *, max_limit: int = 1000,
                 count: int | None = None) -> None:
        self.notes, self.bibtex, self.max_limit, self.count = notes, bibtex, max_limit, count
        self.requests: list[tuple[str, dict[str, str], dict[str, str]]] = []
        self.faults: list[Fault] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeConference:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def hits(self, path: str) -> int:
        return sum(1 for p, _, _ in self.requests if p == path)

    def _fault_for(self, path: str, query: dict[str, str]) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                offset_ok = fault.offset is None or str(fault.offset) == query.get("offset")
                if fault.path == path and offset_ok and fault.times > 0:
                    fault.times -= 1
                    return fault
        return None

    def notes_body(self, query: dict[str, str]) -> bytes:
        offset = int(query.get("offset", 0))
        limit = min(int(query.get("limit", 1000)), self.max_limit)
        wanted = query.get("content.venueid")
        notes = [n for n in self.notes if not wanted or n["content"]["venueid"]["value"] == wanted]
        count = self.count if self.count is not None else len(notes)
        return json.dumps({"notes": notes[offset:offset + limit], "count": count}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        conference = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                parsed = urlparse(self.path)
                query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
                with conference._lock:
                    conference.requests.append((parsed.path, query, dict(self.headers)))
                fault = conference._fault_for(parsed.path, query)
                if parsed.path == "/notes":
                    body, status, headers = conference.notes_body(query), 200, {"Content-Type": "application/json"}
                elif parsed.path == "/icml25.bib":
                    body, status, headers = self._bibtex()
                else:
                    body, status, headers = b"not found", 404, {}
                if fault is not None:
                    status = fault.status if fault.status != 200 else status
                    headers = {**headers, **fault.headers}
                    body = fault.body if fault.body is not None else body
                self._send(status, headers, body, fault.cut_at if fault else None)

            def _bibtex(self) -> tuple[bytes, int, dict[str, str]]:
                data, etag = conference.bibtex, '"bib-v1"'
                wanted = self.headers.get("Range", "")
                if wanted.startswith("bytes=") and self.headers.get("If-Range") == etag:
                    start = int(wanted[6:].split("-")[0])
                    return data[start:], 206, {"ETag": etag, "Content-Range":
                                               f"bytes {start}-{len(data) - 1}/{len(data)}"}
                return data, 200, {"ETag": etag, "Content-Type": "text/x-bibtex"}

            def _send(self, status: int, headers: dict[str, str], body: bytes, cut_at: float | None) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if cut_at is not None:
                    self.wfile.write(body[: int(len(body) * cut_at)])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        return Handler
