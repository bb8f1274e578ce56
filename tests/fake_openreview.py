"""A local stand-in for api2.openreview.net `/notes` and `/login`, and a PMLR BibTeX file (tests, benchmarks).

It answers the way recorded real answers do (uw-share-lab/openproceedings,
backend/tests/fixtures/http/openreview/v2/: errors/anonymous-challenge.json,
errors/limit-over-1000.json, iclr-2024/notes-count.json, icml-2025/notes-position.json, …):

- an anonymous `GET /notes` gets HTTP 200 with an HTML "Verifying your browser | OpenReview" page
  (unless `challenge=False`); `POST /login` with {"id", "password"} gives {"token", "user"}, and
  `Authorization: Bearer <token>` opens the listing (a wrong password: 400 JSON; not recorded);
- `limit` over 1000 is HTTP 400 {"name": "ValidationError", "message": "limit must be <= 1000 (…)"};
- `count` is in the answer only when asked with `count=true`; `sort=number:asc` orders by number;
- every JSON answer carries `ratelimit-*` and `x-ratelimit-*` headers; when the window's requests
  are used up the answer is 429 until the window resets. The fake's clock moves only through
  `sleep` (give it to FetchSettings), so a client that does not wait gets 429s;
- `late_notes` become visible right after the first page of a listing is served: the listing
  shifts between pages, as a live one can;
- faults (status, headers, a body, a body cut short) can be injected per path and offset.
"""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

VENUE_ID = "ICML.cc/2025/Conference"
POSITION_ID = "ICML.cc/2025/Position_Paper_Track"
CHALLENGE = (b"<!DOCTYPE html>\n<html><head><title>Verifying your browser | OpenReview</title></head>"
             b"<body>\xe2\x80\xa6</body></html>\n")


def make_note(number: int, *, title: str | None = None, abstract: str | None = "", venue: str = "poster",
              authors: list[str] | None = None, note_id: str | None = None,
              venue_id: str = VENUE_ID) -> dict[str, Any]:
    """One note in the API v2 shape (every content field wrapped as {"value": …}, a `number`)."""
    note_id = note_id or f"note{number:06d}"
    label = "ICML 2025 Position Paper Track" if venue_id == POSITION_ID else "ICML 2025"
    content = {
        "title": {"value": title or f"Paper {number}: Learning Things Number {number}"},
        "authors": {"value": authors or [f"Author {number}", "Rodrı́guez Second"]},
        "abstract": {"value": abstract if abstract != "" else f"We study problem {number} and solve it."},
        "venue": {"value": f"{label} {venue}"},
        "venueid": {"value": venue_id},
        "pdf": {"value": f"/pdf/{number:040d}.pdf"},
    }
    return {"id": note_id, "forum": note_id, "number": number, "content": content,
            "cdate": 1738000000000 + number, "readers": ["everyone"]}


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
                 count: int | None = None, challenge: bool = True,
                 accounts: dict[str, str] | None = None, rate_limit: int = 500, window: int = 3600,
                 late_notes: list[dict] | None = None) -> None:
        self.notes, self.bibtex, self.max_limit, self.count = list(notes), bibtex, max_limit, count
        self.challenge, self.accounts = challenge, dict(accounts or {})
        self.rate_limit, self.window = rate_limit, window
        self.late_notes = list(late_notes or [])
        self.tokens: set[str] = set()
        self.clock = 0.0
        self._window_end = float(window)
        self._remaining = rate_limit
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

    def sleep(self, seconds: float) -> None:
        """The client's wait: moves the fake's clock (rate-limit windows reset on it)."""
        with self._lock:
            self.clock += seconds

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

    def rate_headers(self) -> tuple[bool, dict[str, str]]:
        """Spend one request of the window; False when none is left (then the answer is 429)."""
        with self._lock:
            if self.clock >= self._window_end:
                self._window_end, self._remaining = self.clock + self.window, self.rate_limit
            allowed = self._remaining > 0
            self._remaining = max(0, self._remaining - 1)
            reset = max(0, int(self._window_end - self.clock + 0.999))
            headers = {"ratelimit-policy": f"{self.rate_limit};w={self.window}",
                       "ratelimit-limit": str(self.rate_limit), "ratelimit-remaining": str(self._remaining),
                       "ratelimit-reset": str(reset), "x-ratelimit-limit": str(self.rate_limit),
                       "x-ratelimit-remaining": str(self._remaining),
                       "x-ratelimit-reset": str(1790540000 + int(self._window_end))}
        return allowed, headers

    def notes_answer(self, query: dict[str, str]) -> tuple[int, dict]:
        limit = int(query.get("limit", 1000))
        if limit > self.max_limit:
            return 400, {"name": "ValidationError", "message": f"limit must be <= {self.max_limit} (fake-1)",
                         "status": 400, "details": {"path": "limit", "comparison": "<=",
                                                    "limit": self.max_limit, "invalidValue": limit}}
        offset = int(query.get("offset", 0))
        wanted = query.get("content.venueid")
        with self._lock:
            notes = [n for n in self.notes if not wanted or n["content"]["venueid"]["value"] == wanted]
            if query.get("sort", "").startswith("number"):
                notes.sort(key=lambda n: n.get("number", 0), reverse=query["sort"].endswith(":desc"))
            if offset == 0 and self.late_notes:  # they show up once this first page is out
                self.notes, self.late_notes = self.late_notes + self.notes, []
        answer: dict[str, Any] = {"notes": notes[offset:offset + limit]}
        if query.get("count") == "true":
            answer["count"] = self.count if self.count is not None else len(notes)
        return 200, answer

    def login_answer(self, body: bytes) -> tuple[int, dict]:
        try:
            sent = json.loads(body)
        except ValueError:
            sent = {}
        if not isinstance(sent, dict) or self.accounts.get(sent.get("id")) != sent.get("password"):
            return 400, {"name": "Error", "message": "Invalid username or password", "status": 400}
        token = secrets.token_hex(8)
        self.tokens.add(token)
        return 200, {"token": token, "user": {"profile": {"id": f"~{sent['id']}1"}}}

    def _authorized(self, headers: Any) -> bool:
        value = headers.get("Authorization", "")
        return not self.challenge or (value.startswith("Bearer ") and value[7:] in self.tokens)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        conference = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                parsed = urlparse(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with conference._lock:
                    conference.requests.append((parsed.path, {}, dict(self.headers)))
                if parsed.path != "/login":
                    self._send(404, {}, b"not found", None)
                    return
                status, answer = conference.login_answer(body)
                self._send(status, {"Content-Type": "application/json; charset=utf-8"},
                           json.dumps(answer).encode(), None)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                parsed = urlparse(self.path)
                query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
                with conference._lock:
                    conference.requests.append((parsed.path, query, dict(self.headers)))
                fault = conference._fault_for(parsed.path, query)
                if parsed.path == "/notes":
                    status, headers, body = self._notes(query)
                elif parsed.path == "/icml25.bib":
                    body, status, headers = self._bibtex()
                else:
                    body, status, headers = b"not found", 404, {}
                if fault is not None:
                    status = fault.status if fault.status != 200 else status
                    headers = {**headers, **fault.headers}
                    body = fault.body if fault.body is not None else body
                self._send(status, headers, body, fault.cut_at if fault else None)

            def _notes(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
                if not conference._authorized(self.headers):
                    return 200, {"Content-Type": "text/html; charset=utf-8"}, CHALLENGE
                allowed, headers = conference.rate_headers()
                headers["Content-Type"] = "application/json; charset=utf-8"
                if not allowed:
                    return 429, headers, json.dumps({"name": "RateLimitError", "message": "Too many requests",
                                                     "status": 429}).encode()
                status, answer = conference.notes_answer(query)
                return status, headers, json.dumps(answer).encode()

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
