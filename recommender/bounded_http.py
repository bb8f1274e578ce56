"""The one bounded HTTP read for every server zotrec asks (the Zotero Web API, the desktop's local API,
OpenReview, PMLR): an httpx2 client whose every answer stops at a byte cap (decoded by httpx2's own
decoders, gzip/deflate, br and zstd when installed, and on the wire), at the deadline while the body
streams, after a few redirects (http and https only), and whose JSON may nest only so deep; and the guard
every paged listing pages under. A limit hit is one `ServerLimitError` line naming the server and the
limit, never retried: the server would send the same again. pyzotero reads through this client too (it
takes a client), so no answer escapes it. A redirect to another site is followed only for a request that
carries no key, token, login or cookie, and never for a stream (`Limits.same_site`): such an answer is bounded
like any other and read as untrusted data, so another site can send only what the asked one could have sent.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from recommender.errors import ServerLimitError
from recommender.retry import DEADLINE_ENV, default_deadline

MAX_ANSWER_BYTES = 64 * 2**20  # one API answer, decoded (and on the wire): a Zotero page is < 1 MB
MAX_DOWNLOAD_BYTES = 256 * 2**20  # one downloaded file (a PMLR volume's BibTeX is ~10 MB)
MAX_JSON_DEPTH = 100  # Zotero and OpenReview JSON nest about 6 deep
MAX_REDIRECTS = 5
MAX_PAGES = 5000  # pages of one listing: 500,000 Zotero items, 5 million OpenReview notes

DEADLINE = "zotrec.deadline"  # request extension: time.monotonic() by which the whole answer must be in
DOWNLOAD = "zotrec.download"  # request extension: a file, not an API answer (the larger cap, no JSON check)
_HOPS = "zotrec.redirects"  # request extension: redirects followed so far (httpx2 hands it to each hop)
NOT_JSON = "zotrec.not_json"  # request extension: an XML/Atom answer, so no JSON depth check (its parser bounds it)
_ORIGIN = "zotrec.origin"  # request extension: the host first asked (for same-site redirects)


@dataclass(frozen=True)
class Limits:
    """What one answer may cost; tests and callers may lower them, never switch them off."""

    answer_bytes: int = MAX_ANSWER_BYTES
    download_bytes: int = MAX_DOWNLOAD_BYTES
    json_depth: int = MAX_JSON_DEPTH
    redirects: int = MAX_REDIRECTS
    pages: int = MAX_PAGES
    deadline_s: float = field(default_factory=default_deadline)  # when the caller sets no DEADLINE
    same_site: bool = False  # redirects only to the asked host, its subdomains and its parent domain's


def server_name(url: Any) -> str:
    """'https://api.zotero.org', 'http://127.0.0.1:23119': the server, never a path, query or key."""
    import httpx2

    url = httpx2.URL(str(url))
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}" if url.host else str(url.copy_with(query=None))


def _megabytes(count: int) -> str:
    return f"{count / 2**20:,.0f} MB" if count >= 2**20 else f"{count:,} bytes"


def bounded_client(*, bounds: Limits | None = None, event_hooks: dict[str, list] | None = None,
                   **options: Any) -> Any:
    """An httpx2.Client (options as httpx2's, `limits` its connection limits) whose every answer is read
    under `bounds`; the bounding hook runs before the caller's response hooks, so they see a bounded body."""
    import httpx2

    limits = bounds or Limits()
    hooks = {"request": list((event_hooks or {}).get("request", [])),
             "response": [lambda response: bound(response, limits), *(event_hooks or {}).get("response", [])]}
    options.setdefault("follow_redirects", True)
    # ours stops first (one line); httpx2's own TooManyRedirects is a traceback nobody catches
    return httpx2.Client(max_redirects=limits.redirects + 1, event_hooks=hooks, **options)


def bound(response: Any, limits: Limits) -> None:
    """A response hook: check a redirect, then read the body through the caps and the deadline."""
    import httpx2

    request = response.request
    server = server_name(request.url)
    if response.has_redirect_location:
        try:
            target = request.url.join(response.headers["Location"].strip())
        except httpx2.InvalidURL as error:  # as httpx2 itself words it when it follows the redirect
            raise httpx2.RemoteProtocolError(f"Invalid URL in location header: {error}.", request=request) from None
        if target.scheme not in ("http", "https"):
            raise ServerLimitError(f"{server} redirected to a {target.scheme or 'relative'}: address; zotrec "
                                   "follows http and https only", server=server, limit="redirects")
        origin = request.extensions.setdefault(_ORIGIN, request.url.host)
        if not same_site(origin, target.host) and (limits.same_site or _carries_credentials(request)):
            why = "within that site only" if limits.same_site else "that carry a key or a login within its site only"
            raise ServerLimitError(f"{server} redirected to {target.host or 'no host'}, another site than the "
                                   f"{origin} asked; zotrec follows requests {why}",
                                   server=server, limit="redirects")
        hops = request.extensions.get(_HOPS, 0) + 1
        if hops > limits.redirects:
            raise ServerLimitError(f"{server} redirected more than {limits.redirects} times (a redirect loop?); "
                                   "zotrec stopped following", server=server, limit="redirects")
        request.extensions[_HOPS] = hops
    download = bool(request.extensions.get(DOWNLOAD))
    deadline = request.extensions.get(DEADLINE) or time.monotonic() + limits.deadline_s
    kind = response.headers.get("content-type", "").lower()
    plain = download or request.extensions.get(NOT_JSON) or "html" in kind
    depth = None if plain else JsonDepth(limits.json_depth, server)
    # decode through a twin response (httpx2's own decoders), count both sides, hand on plain bytes
    twin = httpx2.Response(response.status_code, headers=response.headers, stream=response.stream, request=request)
    cap = limits.download_bytes if download else limits.answer_bytes
    kind_of_body = "download" if download else "answer"
    response.stream = _bounded_body_class()(twin, server, cap, deadline, depth, kind_of_body)
    for name in ("content-encoding", "content-length"):
        if name in response.headers:
            del response.headers[name]


@functools.cache
def _bounded_body_class() -> type:
    """_BoundedBody as an httpx2.SyncByteStream (made on first use: httpx2 is imported only when needed)."""
    import httpx2

    return type("BoundedBody", (_BoundedBody, httpx2.SyncByteStream), {})


class _BoundedBody:
    """The decoded body, piece by piece (httpx2 decodes at most 1 MiB at a time), stopped at a limit."""

    def __init__(self, twin: Any, server: str, cap: int, deadline: float, depth: JsonDepth | None,
                 kind: str) -> None:
        self.twin, self.server, self.cap, self.deadline = twin, server, cap, deadline
        self.depth, self.kind = depth, kind
        self.seconds = max(0.0, deadline - time.monotonic())

    def __iter__(self) -> Iterator[bytes]:
        import httpx2

        decoded = 0
        try:
            for piece in self.twin.iter_bytes():
                decoded += len(piece)
                if decoded > self.cap or self.twin.num_bytes_downloaded > self.cap:
                    raise ServerLimitError(f"{self.server} sent more than {_megabytes(self.cap)} (zotrec's limit "
                                           f"for one {self.kind}); nothing of it was kept",
                                           server=self.server, limit="bytes")
                if time.monotonic() > self.deadline:
                    raise ServerLimitError(f"{self.server} was still sending its {self.kind} at the deadline "
                                           f"({self.seconds:.0f} s); nothing of it was kept ({DEADLINE_ENV} "
                                           "changes the deadline)",
                                           server=self.server, limit="time")
                if self.depth is not None:
                    self.depth.feed(piece)
                yield piece
        except httpx2.DecodingError as error:  # a broken gzip stream: like a body cut short, worth a retry
            raise httpx2.RemoteProtocolError(f"the answer could not be decoded ({error})") from None

    def close(self) -> None:
        self.twin.close()


_NOT_BRACKETS_OR_QUOTES = bytes(c for c in range(256) if c not in b'[]{}"')


class JsonDepth:
    """How deep a JSON text nests, fed in pieces (brackets inside strings do not count); past `limit` it
    stops the read, before any parser recurses that deep. Escapes go first (`\\\\`, then `\\"`, left to
    right as JSON pairs them), then all but brackets and quotes, so the walk is at C speed but for the
    brackets between strings."""

    def __init__(self, limit: int, server: str) -> None:
        self.limit, self.server = limit, server
        self.depth = 0
        self.in_string = False
        self._carry = b""  # a backslash that escapes the first byte of the next piece

    def feed(self, piece: bytes) -> None:
        piece = (self._carry + piece).replace(b"\\\\", b"")
        self._carry = b"\\" if piece.endswith(b"\\") else b""
        parts = piece[: len(piece) - len(self._carry)].replace(b'\\"', b"").translate(
            None, _NOT_BRACKETS_OR_QUOTES).split(b'"')
        brackets = b"".join(parts[1 if self.in_string else 0::2])  # the parts between strings, in order
        if brackets:
            self._walk(brackets)
        self.in_string ^= len(parts) % 2 == 0  # an odd number of quotes

    def _walk(self, brackets: bytes) -> None:
        """Brackets between strings, in windows too short to pass the limit (counted, not walked one by one)."""
        depth, at = self.depth, 0
        while at < len(brackets):
            room = self.limit - depth
            if room <= 0 and brackets[at] in b"[{":
                raise ServerLimitError(f"{self.server} sent JSON nested more than {self.limit} deep (zotrec's "
                                       "limit); nothing of it was read", server=self.server, limit="depth")
            window = brackets[at:at + max(room, 1)]
            at += len(window)
            opens = window.count(b"[") + window.count(b"{")
            depth = max(0, depth + 2 * opens - len(window))  # below 0 only in text that is not JSON
        self.depth = depth


def loads(body: bytes | str, server: str) -> Any:
    """JSON from a body read through bounded_client (its depth is checked as it streams); a body that is
    not JSON raises ValueError."""
    try:
        return json.loads(body)
    except RecursionError:  # not reached after the streaming check; kept so no parser shows a traceback
        raise ServerLimitError(f"{server} sent JSON nested too deep", server=server, limit="depth") from None


class PageGuard:
    """Ends a paged listing that would not end: done at the reported total; a page or a next link seen
    before, or more than `limits.pages` pages, is one ServerLimitError (a listing read in part is not
    the library, so it is never taken as whole)."""

    def __init__(self, server: str, what: str, total: int | None = None, limits: Limits | None = None) -> None:
        self.server, self.what, self.total = server, what, total
        self.max_pages = (limits or Limits()).pages
        self.pages = 0
        self._pages_seen: set[int] = set()
        self._links_seen: set[str] = set()

    def _stop(self, why: str) -> ServerLimitError:
        return ServerLimitError(f"{self.server} {why} while zotrec was {self.what} (page {self.pages:,}); "
                                "zotrec stopped paging", server=self.server, limit="pages")

    def page(self, keys: tuple[Hashable, ...], link: str | None = None) -> None:
        """Count a page (its objects' keys, and the link it was read from); stop at a limit."""
        self.pages += 1
        if self.pages > self.max_pages:
            raise self._stop(f"kept sending pages past {self.max_pages:,} pages (zotrec's limit for one listing)")
        if keys:
            fingerprint = hash(keys)
            if fingerprint in self._pages_seen:
                raise self._stop("sent the same page again")
            self._pages_seen.add(fingerprint)
        if link is not None:
            self._links_seen.add(link)

    def follow(self, link: str) -> None:
        """Before following a next link: one that points back at a page already read is a loop."""
        if link in self._links_seen:
            raise self._stop("gave a next-page link back to a page already read")

    def done(self, read: int) -> bool:
        """True once `read` objects reach the total the server reported."""
        return self.total is not None and read >= self.total


def same_site(asked: str, target: str) -> bool:
    """`target` is the asked host, or shares its parent domain (export.arxiv.org → arxiv.org, www.arxiv.org;
    never another site, nor from a name to an address)."""
    asked, target = asked.lower().rstrip("."), target.lower().rstrip(".")
    if target == asked:
        return True
    labels = asked.split(".")
    if len(labels) < 2 or labels[-1].isdigit() or ":" in asked:  # an address has no parent domain
        return False
    parent = ".".join(labels[1:]) if len(labels) > 2 else asked
    return target == parent or target.endswith("." + parent)


def _carries_credentials(request: Any) -> bool:
    """A request with a key, token, login or cookie in its headers (Zotero-API-Key, Authorization, …)."""
    return any(name in ("authorization", "cookie", "proxy-authorization") or "key" in name or "token" in name
               for name in (header.lower() for header in request.headers.keys()))


def not_json() -> dict[str, Any]:
    """Request extensions for an answer that is not JSON (Atom, XML): the JSON depth check is off for it."""
    return {NOT_JSON: True}


def with_deadline(at: float | None, download: bool = False) -> dict[str, Any]:
    """Request extensions: the answer must be in by `at` (time.monotonic(); None: the client's deadline_s
    from the answer's first byte); a download takes the file cap and no JSON check."""
    extensions: dict[str, Any] = {DEADLINE: at} if at else {}
    if download:
        extensions[DOWNLOAD] = True
    return extensions
