"""The triage page's HTTP server: the standard library's ThreadingHTTPServer (no framework: four routes, and
every security rule is ours to read in guard.py), bound to 127.0.0.1 only.

GET / (the page; `?token=` once, then the cookie), GET /static/triage.js|css, POST /act (one click; JSON for
the script, a redirect back to the page without it). A request failing a check gets 403/400 and changes nothing.
"""

from __future__ import annotations

import json
import logging
import re
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from urllib.parse import parse_qs, urlsplit

from recommender.errors import RecommenderError
from zotero_bridge.render.html_page import PAGE_STYLE
from zotero_bridge.serve.guard import HEADERS, HOST, Guard
from zotero_bridge.serve.page import filter_query, paper_list, render_page

log = logging.getLogger(__name__)

STATIC = {"/static/triage.js": "text/javascript; charset=utf-8", "/static/triage.css": "text/css; charset=utf-8"}
MAX_BODY = 16 * 1024  # a click is a few fields


class TriageServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, session, library: str, corpus: str, port: int = 0) -> None:
        super().__init__((HOST, port), TriageHandler)
        self.session, self.library, self.corpus = session, library, corpus
        self.guard = Guard(self.server_address[1])

    def handle_error(self, request, client_address) -> None:
        """A broken connection or a bug in one answer: one line, never a traceback on the terminal."""
        import sys

        log.error("serve: a request failed (%s)", sys.exc_info()[1])


class TriageHandler(BaseHTTPRequestHandler):
    server: TriageServer
    server_version = "zotrec"
    sys_version = ""

    def log_message(self, format: str, *args) -> None:  # noqa: A002 — http.server's name
        """At -v only, and never the token: the request line loses its query."""
        log.debug("serve: " + format, *(re.sub(r"\?\S*", "", arg) if isinstance(arg, str) else arg for arg in args))

    def _send(self, status: int, body: bytes = b"", kind: str = "text/plain; charset=utf-8",
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {**HEADERS, "Content-Type": kind, "Content-Length": str(len(body)), **(extra or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _refuse(self, status: int, why: str) -> None:
        log.debug("serve: refused %s %s: %s", self.command, self.path.split("?")[0], why)
        self._send(status, (why + "\n").encode())

    def _checked(self) -> dict[str, list[str]] | None:
        """The query when Host and token pass (else the refusal is sent and None returned)."""
        guard = self.server.guard
        if not guard.host_ok(self.headers.get("Host")):
            self._refuse(HTTPStatus.FORBIDDEN, "wrong Host")
            return None
        query = parse_qs(urlsplit(self.path).query)
        if not guard.token_ok(self.headers.get("Cookie"), (query.get("token") or [None])[0]):
            self._refuse(HTTPStatus.FORBIDDEN, "open the address `zotrec serve` printed (it holds the token)")
            return None
        return query

    def do_GET(self) -> None:  # noqa: N802 — http.server's name
        query = self._checked()
        if query is None:
            return
        path = urlsplit(self.path).path
        if path in STATIC:
            body = files("zotero_bridge.serve").joinpath("static", path.rsplit("/", 1)[1]).read_bytes()
            if path.endswith(".css"):  # the reading list's own look first, the page's additions after
                body = PAGE_STYLE.encode() + body
            self._send(HTTPStatus.OK, body, STATIC[path])
            return
        if path == "/favicon.ico":  # the browser asks for one; the page has none
            self._send(HTTPStatus.NO_CONTENT)
            return
        if path != "/":
            self._refuse(HTTPStatus.NOT_FOUND, "not here")
            return
        if "token" in query:  # the token moves to the cookie, out of the address bar and the history
            rest = {key: values for key, values in query.items() if key != "token"}
            self._send(HTTPStatus.SEE_OTHER, extra={"Location": "/" + filter_query(
                (rest.get("interest") or [""])[0], (rest.get("source") or [""])[0]),
                "Set-Cookie": self.server.guard.cookie()})
            return
        interest, source = (query.get("interest") or [""])[0], (query.get("source") or [""])[0]
        try:
            recs, interests, sources = self.server.session.page(interest, source)
        except (RecommenderError, OSError) as error:
            log.warning("%s", error)
            self._refuse(HTTPStatus.INTERNAL_SERVER_ERROR, f"zotrec could not make the list: {error}")
            return
        body = render_page(recs, csrf=self.server.guard.csrf, library=self.server.library, corpus=self.server.corpus,
                           interests=interests, sources=sources, interest=interest, source=source)
        self._send(HTTPStatus.OK, body.encode(), "text/html; charset=utf-8")

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802
        if self._checked() is None:
            return
        if urlsplit(self.path).path != "/act":
            self._refuse(HTTPStatus.NOT_FOUND, "not here")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY or "form-urlencoded" not in (self.headers.get("Content-Type") or ""):
            self._refuse(HTTPStatus.BAD_REQUEST, "a click is a small form")
            return
        form = {key: values[0] for key, values in parse_qs(self.rfile.read(length).decode("utf-8", "replace")).items()}
        if not self.server.guard.post_ok(self.headers, self.headers.get("X-CSRF-Token") or form.get("csrf")):
            self._refuse(HTTPStatus.FORBIDDEN, "the page's CSRF token is missing or wrong (reload the page)")
            return
        interest, source = form.get("interest", ""), form.get("source", "")
        try:
            said, status = self.server.session.act(form.get("id", ""), form.get("action", "")), HTTPStatus.OK
        except (RecommenderError, OSError) as error:
            said, status = str(error), HTTPStatus.CONFLICT
            log.warning("%s", error)
        if "application/json" not in (self.headers.get("Accept") or ""):
            self._send(HTTPStatus.SEE_OTHER, extra={"Location": "/" + filter_query(interest, source)})
            return
        try:
            recs, _, _ = self.server.session.page(interest, source)
        except (RecommenderError, OSError) as error:
            said, recs, status = f"{said}; the list could not be made again: {error}", [], HTTPStatus.CONFLICT
        answer = {"said": said, "list": paper_list(recs, self.server.guard.csrf, interest, source)}
        self._send(status, json.dumps(answer).encode(), "application/json")

    def _no(self) -> None:
        self._refuse(HTTPStatus.METHOD_NOT_ALLOWED, "GET or POST only")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _no


def run_server(server: TriageServer) -> None:
    """Serve until Ctrl-C; every click is its own finished transaction, so stopping leaves no half-written memory."""
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        log.info("Stopping; every click so far is remembered.")
    finally:
        server.server_close()
        server.session.close()  # a click being recorded finishes first
