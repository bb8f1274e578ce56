"""What keeps the triage page the user's alone: it listens on 127.0.0.1 only, answers only a Host naming that
address and port (no DNS rebinding), only a request carrying the session's token (in the first URL, then an
HttpOnly SameSite=Strict cookie), and changes something only on a POST with the page's CSRF token from the
page's own origin. No CORS header is ever sent; the Content-Security-Policy allows only the page's own files."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie

HOST = "127.0.0.1"
COOKIE = "zotrec_serve"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


@dataclass(frozen=True)
class Guard:
    """One server's secrets: `token` (the URL's and the cookie's), `csrf` (every POST's); `port` once bound."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        """The address to open: the token in it, once; the page then lives on the cookie."""
        return f"{self.origin}/?token={self.token}"

    def host_ok(self, host: str | None) -> bool:
        """The Host header names this server (127.0.0.1 or localhost, this port): a rebinding name never does."""
        return (host or "").lower() in {f"{HOST}:{self.port}", f"localhost:{self.port}"}

    def token_ok(self, cookie_header: str | None, query_token: str | None = None) -> bool:
        if query_token is not None and hmac.compare_digest(query_token.encode(), self.token.encode()):
            return True
        try:
            morsel = SimpleCookie(cookie_header or "").get(COOKIE)
        except CookieError:
            return False
        return morsel is not None and hmac.compare_digest(morsel.value.encode(), self.token.encode())

    def post_ok(self, headers: Mapping[str, str], sent_csrf: str | None) -> bool:
        """A POST counts only with the page's CSRF token and, when the browser names one, the page's origin."""
        origin = headers.get("Origin")
        if origin is not None and origin != self.origin and origin != f"http://localhost:{self.port}":
            return False
        return sent_csrf is not None and hmac.compare_digest(sent_csrf.encode(), self.csrf.encode())

    def cookie(self) -> str:
        return f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
