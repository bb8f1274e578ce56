"""A fake service's HTTP server on 127.0.0.1 (a free port), served by daemon threads: the Web API and the
local API fakes share it."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(fake, handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """Start serving `fake` (handlers reach it as `self.fake`) until `shutdown`."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (handler,), {"fake": fake}))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return httpd


def shutdown(httpd: ThreadingHTTPServer | None) -> None:
    if httpd:
        httpd.shutdown()
        httpd.server_close()


class QuietDispatcher(BaseHTTPRequestHandler):
    """Every method a fake answers goes to `self._dispatch(METHOD)`; no request log on stderr."""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")


class AnswerDispatcher(QuietDispatcher):
    """A fake whose `answer(path, query)` returns (status, headers, body): the URL parsed, the answer sent."""

    def _dispatch(self, method: str) -> None:
        from urllib.parse import parse_qs, urlparse

        url = urlparse(self.path)
        status, headers, body = self.fake.answer(url.path, parse_qs(url.query))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
