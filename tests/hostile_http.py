"""A hostile HTTP server on 127.0.0.1, for the bounded read (recommender/bounded_http.py): each answer is one
way a server can make a client hang or blow up — a gzip body that inflates a thousandfold, an endless
chunked body, a body dripped a byte at a time, a redirect to itself or to file:, JSON nested 100,000 deep, a
listing that never ends (OpenReview's count=10**12 with one note a page; Zotero's `Link: rel="next"`
pointing back at the same page, on the Web API and on the desktop's local API). `answer` says which;
every request is counted. Real sockets, real chunked encoding, real gzip: what a client sees from a real
server that misbehaves.
"""

from __future__ import annotations

import json
import time
import zlib
from functools import cache

from tests.loopback import QuietDispatcher, serve, shutdown

MiB = 2**20


@cache
def gzip_bomb_pieces() -> tuple[bytes, bytes]:
    """(head, block): head then block repeated is a gzip stream of zeros, 1 MiB more per block (~1 KB).
    After a full flush the compressor starts afresh, so every later 1 MiB block compresses to the same bytes."""
    zeros = bytes(MiB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH) == block
    return head, block


def note(number: int = 1) -> dict:
    return {"id": f"note{number:06d}", "number": number, "content": {"title": {"value": f"Paper {number}"}}}


def zotero_item(key: str = "AAAA1111") -> dict:
    return {"key": key, "version": 5, "library": {"type": "user", "id": 1},
            "data": {"key": key, "version": 5, "itemType": "journalArticle", "title": "Looping paper",
                     "creators": [], "collections": [], "tags": []}}


class Hostile(QuietDispatcher):
    fake: HostileServer

    def _dispatch(self, method: str) -> None:
        server = self.fake
        server.requests.append(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        getattr(self, "_" + server.answer.replace("-", "_"))()

    # ---- helpers ------------------------------------------------------------------------------------------
    def _head(self, status: int = 200, headers: dict[str, str] | None = None, chunked: bool = False) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _json(self, value, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(value).encode()
        self._head(200, {"Content-Type": "application/json", "Content-Length": str(len(body)), **(headers or {})})
        self.wfile.write(body)

    # ---- the answers --------------------------------------------------------------------------------------
    def _gzip_bomb(self) -> None:
        """~1 MB on the wire that inflates to 1 GiB (chunked, so no Content-Length gives it away)."""
        head, block = gzip_bomb_pieces()
        self._head(200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, chunked=True)
        try:
            self._chunk(head)
            for _ in range(1023):
                self._chunk(block)
            self._chunk(b"")
        except OSError:
            pass

    def _endless(self) -> None:
        """Spaces (valid JSON whitespace, valid BibTeX) for as long as the client reads."""
        self._head(200, {"Content-Type": self.fake.content_type}, chunked=True)
        piece = b" " * 65536
        try:
            while True:
                self._chunk(piece)
        except OSError:
            pass

    def _drip(self) -> None:
        """One byte every `drip_s` seconds, forever; never silent long enough for a read timeout."""
        self._head(200, {"Content-Type": self.fake.content_type}, chunked=True)
        try:
            while True:
                self._chunk(b" ")
                time.sleep(self.fake.drip_s)
        except OSError:
            pass

    def _self_redirect(self) -> None:
        self._head(302, {"Location": self.path, "Content-Length": "0"})

    def _file_redirect(self) -> None:
        self._head(302, {"Location": "file:///etc/passwd", "Content-Length": "0"})

    def _deep_json(self) -> None:
        body = b"[" * 100_000 + b"]" * 100_000
        self._head(200, {"Content-Type": "application/json", "Content-Length": str(len(body))})
        self.wfile.write(body)

    def _endless_notes(self) -> None:
        """OpenReview claiming 10**12 notes and sending the same one on every page."""
        self._json({"notes": [note(1)], "count": 10**12})

    def _zotero_loop(self) -> None:
        """A Zotero listing (Web or local API) whose next link is the page itself; Total-Results says more."""
        if self.path.rstrip("/").endswith("/api"):  # the local API's root: its server id
            self._head(200, {"Zotero-Server-ID": "hostile-server", "Content-Length": "0"})
            return
        here = f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"
        self._json([zotero_item()], {"Link": f'<{here}>; rel="next", <{here}>; rel="last"',
                                     "Total-Results": self.fake.total, "Last-Modified-Version": "5"})


class HostileServer:
    """`with HostileServer("gzip-bomb") as server:` … `server.url`; `answer` may be changed while it runs."""

    def __init__(self, answer: str, *, content_type: str = "application/json", drip_s: float = 0.2) -> None:
        self.answer, self.content_type, self.drip_s = answer, content_type, drip_s
        self.total = "1000000"  # the Total-Results a Zotero listing reports
        self.requests: list[str] = []
        self._httpd = None

    def __enter__(self) -> HostileServer:
        self._httpd = serve(self, Hostile)
        return self

    def __exit__(self, *exc: object) -> None:
        shutdown(self._httpd)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"
