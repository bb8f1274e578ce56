"""One Zotero Web API session per command: a pyzotero client aimed at the right endpoint that counts its
requests, honours `Backoff`/`Retry-After` with bounded waits, retries 429/5xx by the one retry rule
(recommender/retry.py), and turns failures into one-line BridgeErrors that never contain the API key.

Reads go through pyzotero's own calls. Writes are multi-object POSTs sent with pyzotero's HTTP client and
headers, because zotrec must choose the `Zotero-Write-Token` (so a retried batch cannot be applied twice)
and must read the per-object `failed` map, which pyzotero's create/update helpers neither expose nor retry.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from recommender.bounded_http import Limits
from recommender.retry import RETRY_STATUS, GaveUp, Retry, RetryPolicy, retry_after, with_retries
from zotero_bridge.errors import BridgeError
from zotero_bridge.zotero_api.credentials import Credentials, redact

log = logging.getLogger(__name__)

T = TypeVar("T")
REQUEST_TIMEOUT_S = 20


class ZoteroAccessError(BridgeError):
    """The key is wrong, lacks a permission, or the library does not exist."""


class ZoteroBusyError(BridgeError):
    """Zotero kept failing or asked for a longer wait than zotrec accepts; nothing more was sent."""


class WriteConflict(BridgeError):
    """412: the library (or a write token) changed under us; the caller re-reads and plans again."""


class _RetryableResponse(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _transport_cause(error: Exception) -> str:
    """'no answer (timed out)', 'connection refused', … from an httpx2 transport error."""
    import httpx2

    if isinstance(error, httpx2.TimeoutException):
        return "no answer (timed out)"
    if isinstance(error, httpx2.ConnectError):
        text = str(error).lower()
        return "connection refused" if "refused" in text else f"could not connect ({str(error) or 'ConnectError'})"
    return f"network error ({type(error).__name__})"


class WebSession:
    """A pyzotero `Zotero` for one library plus request counting and the retry/backoff rules."""

    def __init__(self, credentials: Credentials, policy: RetryPolicy | None = None) -> None:
        from zotero_bridge.zotero_api.paging import make_zotero

        self.credentials = credentials
        self.policy = policy or RetryPolicy()
        self.reads = 0
        self.writes = 0
        self.waited_s = 0.0
        self.last_version: int | None = None
        self._status: int | None = None
        self._body = ""
        self._not_before = 0.0  # time.time() before which the server asked us not to send (Backoff, Retry-After)
        self._asked_wait = 0.0
        self._call_started = 0.0
        self.deadline_s = self.policy.deadline_s
        # every answer bounded (bytes, JSON depth, redirects) and in within the deadline however it streams
        self.zot = make_zotero(credentials.library_id, credentials.library_type, api_key=credentials.api_key,
                               endpoint=credentials.endpoint, bounds=Limits(deadline_s=self.deadline_s),
                               timeout=min(REQUEST_TIMEOUT_S, self.deadline_s),
                               event_hooks={"request": [self._on_request], "response": [self._on_response]})
        # pyzotero sleeps for whatever the server asks, with no upper bound; route its waits through ours
        self.zot._check_backoff = self.wait_if_asked

    @property
    def requests(self) -> int:
        return self.reads + self.writes

    def stats(self) -> dict[str, Any]:
        return {"requests": self.requests, "read_requests": self.reads, "write_requests": self.writes,
                "waited_s": round(self.waited_s, 3)}

    def close(self) -> None:
        self.zot.client.close()

    # ---- hooks -----------------------------------------------------------------------------------------
    def _on_request(self, request: Any) -> None:
        # pyzotero passes its own 30 s timeout with every request; bound it by what is left of the deadline
        left = self.deadline_s - (self.policy.clock() - self._call_started) if self._call_started else self.deadline_s
        seconds = max(1.0, min(REQUEST_TIMEOUT_S, left))
        request.extensions["timeout"] = {"connect": seconds, "read": seconds, "write": seconds, "pool": seconds}
        if request.method == "GET":
            self.reads += 1
        else:
            self.writes += 1

    def _on_response(self, response: Any) -> None:
        self._status = response.status_code
        version = response.headers.get("Last-Modified-Version")
        if version and version.isdigit() and response.status_code < 300:
            self.last_version = int(version)
        if response.status_code >= 400:
            text = response.read().decode("utf-8", "replace").strip()  # not .text: pyzotero sets the encoding later
            self._body = text.splitlines()[0][:200] if text else ""
        asked = response.headers.get("Backoff") or response.headers.get("Retry-After")
        if asked:
            seconds = retry_after(asked)
            seconds = self.policy.first_wait_s if seconds is None else seconds
            self._asked_wait = seconds
            self._not_before = max(self._not_before, time.time() + seconds)

    # ---- waiting and retrying ---------------------------------------------------------------------------
    def wait_if_asked(self) -> None:
        """Before any request: wait out a Backoff/Retry-After, or stop if it is longer than we accept."""
        remaining = self._not_before - time.time()
        if remaining <= 0:
            return
        if self._asked_wait > self.policy.max_wait_s:
            raise self._too_long(self._asked_wait)
        log.info("Zotero asked zotrec to slow down: waiting %.1f s", remaining)
        self.waited_s += remaining
        self.policy.sleep(remaining)
        self._not_before = 0.0

    def _too_long(self, seconds: float) -> ZoteroBusyError:
        return ZoteroBusyError(
            f"Zotero asked zotrec to wait {seconds:.0f} s (more than {self.policy.max_wait_s:.0f} s) "
            f"while working on {self.credentials.describe()}; nothing more was sent, run it again later")

    def _take_asked_wait(self) -> float | None:
        """The rest of what the server asked us to wait (the retry rule waits it), or None."""
        remaining = self._not_before - time.time()
        self._not_before = 0.0
        return remaining if remaining > 0 else None

    def call(self, what: str, function: Callable[..., T], *args: Any, write: bool = False, **kwargs: Any) -> T:
        """Run one API call with bounded retries on 429/5xx/network errors; other failures are raised."""
        import httpx2
        from pyzotero import errors as zerrors

        def attempt() -> T:
            self.zot.url_params = None  # pyzotero keeps a failed call's parameters otherwise
            self._status = None
            try:
                return function(*args, **kwargs)
            except (_RetryableResponse, zerrors.PyZoteroError, httpx2.TransportError, json.JSONDecodeError,
                    ValueError, TypeError, KeyError, AttributeError) as error:
                status = getattr(error, "status", None) or self._status
                transport = isinstance(error, httpx2.TransportError)
                if isinstance(error, httpx2.UnsupportedProtocol):
                    raise BridgeError(f"cannot reach {self.credentials.endpoint}: not an http(s) URL") from None
                if not transport and status is not None and status < 300:  # an answer that is not Zotero's JSON
                    raise BridgeError(f"{self.credentials.endpoint} answered, but not with Zotero API data, while "
                                      f"{what} ({type(error).__name__}); is --endpoint the Zotero API?") from None
                if not transport and status not in RETRY_STATUS:
                    raise self.error_for(status, what, write=write) from None
                cause = f"HTTP {status}" if status and not transport else _transport_cause(error)
                raise Retry(cause, self._take_asked_wait()) from None

        def note(cause: str, wait: float, tries: int) -> None:
            log.info("%s while %s; retrying in %.0f s (%d of %d)", cause[0].upper() + cause[1:], what, wait,
                     tries, self.policy.attempts - 1)
            self.waited_s += wait

        self._call_started = self.policy.clock()
        try:
            return with_retries(attempt, self.policy, note)
        except GaveUp as end:
            if end.why == "wait":
                raise self._too_long(end.wait or 0.0) from None
            raise ZoteroBusyError(f"Zotero kept failing ({end.reason}) while {what} for "
                                  f"{self.credentials.describe()}; gave up after {end.tries} tries in "
                                  f"{end.spent:.0f} s") from None

    def error_for(self, status: int | None, what: str, *, write: bool = False) -> BridgeError:
        """The one-line error a user sees for a failed request (the key is never in it)."""
        library = self.credentials.describe()
        body = redact(self._body, self.credentials.api_key)
        if status == 403:
            if write or "write" in body.lower():
                return ZoteroAccessError(f"the API key cannot write to {library} (read-only key?): create a key "
                                         "with write access at https://www.zotero.org/settings/keys, or use --dry-run")
            if not self.credentials.api_key:
                return ZoteroAccessError(f"{library} needs an API key: pass --api-key or set ZOTERO_API_KEY")
            return ZoteroAccessError(f"Zotero refused the API key for {library} ({body or 'Forbidden'}): check "
                                     "--api-key / ZOTERO_API_KEY and that the key may read this library")
        if status == 404:
            return ZoteroAccessError(f"{library} was not found at {self.credentials.endpoint}: check --library-id "
                                     "and --library-type")
        if status == 412:
            return WriteConflict(f"{library} changed while {what} ({body})")
        return BridgeError(f"Zotero answered HTTP {status} while {what} for {library}: {body or 'no details'}")

    # ---- writes ------------------------------------------------------------------------------------------
    def post(self, path: str, payload: list[dict], what: str, *, write_token: str | None = None,
             library_version: int | None = None) -> dict[str, Any]:
        """POST ≤50 objects to /{type}s/{id}/{path}; returns the parsed successful/unchanged/failed map."""
        creds = self.credentials
        url = f"{creds.endpoint}/{creds.library_type}s/{creds.library_id}/{path}"
        headers = {**self.zot.default_headers(), "Content-Type": "application/json"}
        if write_token:
            headers["Zotero-Write-Token"] = write_token
        if library_version is not None:
            headers["If-Unmodified-Since-Version"] = str(library_version)

        def send() -> Any:
            self.wait_if_asked()
            response = self.zot.client.post(url, content=json.dumps(payload), headers=headers)
            if response.status_code in RETRY_STATUS:
                raise _RetryableResponse(response.status_code)
            return response

        response = self.call(what, send, write=True)
        if response.status_code >= 300:
            raise self.error_for(response.status_code, what, write=response.status_code == 403)
        try:
            result = response.json()
        except ValueError:
            raise BridgeError(f"Zotero sent a reply that is not JSON while {what}") from None
        return result if isinstance(result, dict) else {}
