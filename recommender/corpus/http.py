"""Polite HTTP for corpus fetches: retries with backoff, Retry-After, resumable downloads, a progress bar.

One bounded httpx2 client (recommender/bounded_http.py: byte caps, the deadline while a body streams,
redirects, JSON depth) per fetch, at most `concurrency` connections. 429 and 5xx
answers, dropped connections and bodies cut short are retried by the one retry rule (recommender/retry.py);
`Retry-After` (seconds or an HTTP date) is obeyed up to `max_wait`, and so are rate-limit headers (`ratelimit-remaining: 0` with `ratelimit-reset`
seconds, or `x-ratelimit-reset` as a Unix time): the next request waits for the window. An HTML
page where JSON was asked for (OpenReview's browser check) is a refusal, not a retry. Downloads
resume with a Range request when the server sent a validator.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from recommender import progress
from recommender.bounded_http import Limits as HttpLimits
from recommender.bounded_http import bounded_client, loads, not_json, server_name, with_deadline
from recommender.errors import RecommenderError, ServerLimitError
from recommender.retry import (
    DEADLINE_ENV,
    RETRY_STATUS,
    GaveUp,
    Retry,
    RetryPolicy,
    default_deadline,
    retry_after,
    unresolved_host,
    with_retries,
)
from recommender.store import private_dir, write_bytes

log = logging.getLogger(__name__)

USER_AGENT = "zotrec (Zotero paper recommender; corpus fetch)"
MAX_BODY_BYTES = 64 * 1024 * 1024  # one answer of a listing API (an arXiv page of 2,000 entries is ~5 MB)


NOT_MODIFIED = object()  # get_bytes's answer to a conditional GET that the server answered 304


class FetchError(RecommenderError):
    """A download failed for good (the stored corpus, if any, is kept)."""

    def __init__(self, message: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status, self.detail = status, detail


class AccessRefused(FetchError):
    """The service wants a login (401/403) or a browser (an HTML challenge page instead of JSON)."""


@dataclass
class FetchSettings:
    """How hard and how fast to ask. `sleep` is injectable so tests can record waits instead of waiting."""

    page_size: int = 1000
    concurrency: int = 2
    retries: int = 5
    backoff: float = 1.0
    max_wait: float = 300.0
    timeout: float = 60.0
    deadline: float = field(default_factory=default_deadline)  # tries of a server that does not answer, in all
    show_progress: bool = False
    sleep: Callable[[float], None] = time.sleep
    bounds: HttpLimits | None = None  # bytes, JSON depth, redirects, pages (bounded_http); deadline from above
    min_wait: float = 0.0  # the service's pause between requests: no retry waits less, whatever Retry-After says

    def retry_policy(self) -> RetryPolicy:
        """These settings as the shared retry rule's policy (`retries` counts the tries after the first)."""
        return RetryPolicy(attempts=self.retries + 1, max_wait_s=self.max_wait, first_wait_s=self.backoff,
                           sleep=self.sleep, deadline_s=self.deadline, jitter=0.25,
                           min_wait_s=self.min_wait)


@dataclass
class FetchStats:
    requests: int = 0
    retries: int = 0
    bytes: int = 0
    waits: list[float] = field(default_factory=list)


class Http:
    """The fetch's HTTP client: counting, retrying, and driving one progress bar."""

    def __init__(self, settings: FetchSettings, stats: FetchStats) -> None:
        import httpx2

        self.settings, self.stats = settings, stats
        self._lock = threading.Lock()
        # each answer must be in within the deadline of its request, however slowly it streams
        self.client = bounded_client(
            bounds=replace(settings.bounds or HttpLimits(), deadline_s=settings.deadline),
            timeout=min(settings.timeout, settings.deadline), headers={"User-Agent": USER_AGENT},
            limits=httpx2.Limits(max_connections=max(1, settings.concurrency)),
        )
        self._bar: contextlib.ExitStack | None = None  # the progress bar now shown (recommender/progress.py)
        self._advance: Callable[[int], None] | None = None
        self.page_size = settings.page_size  # lowered when the API says it takes fewer
        self._pending_wait = 0.0  # seconds the rate limit asks to wait before the next request
        self.last_headers: Any = {}  # the headers of the last get_bytes answer (ETag, Last-Modified, …)

    def authorize(self, token: str) -> None:
        """Send `Authorization: Bearer <token>` from now on (the token is never logged)."""
        self.client.headers["Authorization"] = f"Bearer {token}"

    def post_json(self, url: str, body: dict[str, Any]) -> Any:
        """POST a JSON body once (a login: not retried, so a wrong password is not tried six times)."""
        import httpx2

        with self._lock:
            self.stats.requests += 1
        try:
            response = self.client.post(url, json=body)
        except httpx2.HTTPError as error:
            raise FetchError(f"{url}: {type(error).__name__}: {error}") from None
        except ServerLimitError as error:
            raise FetchError(str(error), detail=error.limit) from None
        try:
            self._check_status(response)
            return self._json_body(response, url)
        except Retry as problem:
            raise FetchError(f"{url}: {problem.reason}", response.status_code) from None

    def __enter__(self) -> Http:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self._end_bar()

    def start_progress(self, label: str, total: int | None) -> None:
        """A progress bar through the front end's reporter (only when asked: the CLI turns it off for pipes and
        -q), under its status line, never a second live display beside it."""
        if not self.settings.show_progress:
            return
        self._end_bar()
        self._bar = contextlib.ExitStack()
        self._advance = self._bar.enter_context(progress.bar(label, total))

    def _end_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = self._advance = None

    def advance(self, amount: int) -> None:
        if self._advance is not None:
            self._advance(amount)

    def get_json(self, url: str, params: dict[str, Any] | None = None) -> Any:
        """GET and parse JSON; a body that is cut short or not JSON counts as a failed try."""
        return self._with_retries(url, lambda: self._json_body(self._get_once(url, params), url))

    def _get_once(self, url: str, params: dict[str, Any] | None) -> Any:
        self._wait_for_rate_limit()
        response = self.client.get(url, params=params)
        self._note_rate_limit(response.headers)
        self._check_status(response)
        self.stats.bytes += len(response.content)
        return response

    def get_bytes(self, url: str, params: dict[str, Any] | None = None, *, max_bytes: int = MAX_BODY_BYTES,
                  check: Callable[[bytes], Any] | None = None, headers: dict[str, str] | None = None,
                  is_json: bool = False) -> Any:
        """GET one answer's bytes (Atom or XML: no JSON depth check unless `is_json`), retried and bounded like
        every other read (the bounded client's caps and deadline), and at most `max_bytes` (a longer one is a
        FetchError); `check(body)` turns it into the answer and may raise `Retry` for a body that is cut short
        (retried like a dropped connection). `headers` are sent with it (a conditional GET's validators): a 304
        answer is NOT_MODIFIED. The answer's headers stay in `last_headers`."""
        return self._with_retries(url, lambda: self._get_bytes_once(url, params, max_bytes, check, headers,
                                                                    is_json))

    def _get_bytes_once(self, url: str, params: dict[str, Any] | None, max_bytes: int,
                        check: Callable[[bytes], Any] | None, headers: dict[str, str] | None,
                        is_json: bool) -> Any:
        self._wait_for_rate_limit()
        body = bytearray()
        extensions = {} if is_json else not_json()
        with self.client.stream("GET", url, params=params, headers=headers, extensions=extensions) as response:
            self._note_rate_limit(response.headers)
            self.last_headers = response.headers
            if response.status_code == 304:
                return NOT_MODIFIED
            if check is not None and 400 <= response.status_code not in RETRY_STATUS:
                check(response.read()[:max_bytes])  # an API that answers errors in its own format says why
            self._check_status(response)
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise FetchError(f"{url}: the answer is over {max_bytes:,} bytes; refused")
        self.stats.bytes += len(body)
        return check(bytes(body)) if check else bytes(body)

    def _json_body(self, response: Any, url: str) -> Any:
        kind = response.headers.get("content-type", "")
        if "html" in kind or response.content.lstrip()[:1] == b"<":
            title = re.search(rb"<title>(.*?)</title>", response.content, re.IGNORECASE | re.DOTALL)
            page = title.group(1).decode("utf-8", "replace").strip() if title else "a web page"
            raise AccessRefused(f"{url}: answered with an HTML page ('{page}') instead of JSON: "
                                "the service wants a browser or a login", response.status_code)
        try:
            return loads(response.content, server_name(response.request.url))
        except ValueError as error:
            raise Retry(f"the answer is not complete JSON ({error})") from None

    def _note_rate_limit(self, headers: Any) -> None:
        """When the window's requests are used up, the next request waits until it resets."""
        remaining = headers.get("ratelimit-remaining") or headers.get("x-ratelimit-remaining")
        if remaining is None or remaining.strip() != "0":
            return
        wait = rate_limit_reset(headers)
        if wait is not None:
            with self._lock:
                self._pending_wait = max(self._pending_wait, wait)

    def _wait_for_rate_limit(self) -> None:
        with self._lock:
            wait, self._pending_wait = self._pending_wait, 0.0
        if wait <= 0:
            return
        if wait > self.settings.max_wait:
            raise FetchError(f"the rate limit is used up for {wait:.0f} s more; try again later")
        log.info("Rate limit reached; waiting %.0f s for the next window", wait)
        with self._lock:
            self.stats.waits.append(wait)
        self.settings.sleep(wait)

    def download_text(self, url: str, part: Path) -> str:
        """Download to `part` (resuming a previous partial download when the server allows), as text."""
        self.start_progress("PMLR BibTeX", None)
        self._with_retries(url, lambda: self._download_once(url, part))
        return part.read_bytes().decode("utf-8-sig", errors="replace")

    def _download_once(self, url: str, part: Path) -> None:
        """One try; a limit hit (the file cap, the deadline) removes what was downloaded, it cannot be resumed."""
        validator_file = part.with_name(part.name + ".validator")
        try:
            self._download_into(url, part, validator_file)
        except ServerLimitError:
            part.unlink(missing_ok=True)
            validator_file.unlink(missing_ok=True)
            raise

    def _download_into(self, url: str, part: Path, validator_file: Path) -> None:
        headers = {}
        if part.is_file() and part.stat().st_size and validator_file.is_file():
            headers = {"Range": f"bytes={part.stat().st_size}-", "If-Range": validator_file.read_text()}
        with self.client.stream("GET", url, headers=headers, extensions=with_deadline(None, download=True)) as response:
            self._check_status(response)
            resumed = response.status_code == 206
            if not resumed:
                validator = response.headers.get("etag") or response.headers.get("last-modified")
                private_dir(part.parent)
                if validator:
                    write_bytes(validator_file, validator.encode("utf-8"))  # the one private writer
                else:
                    validator_file.unlink(missing_ok=True)
            else:
                log.info("%s: resuming at byte %d", url, part.stat().st_size)
            with _private_part(part, resumed) as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    self.stats.bytes += len(chunk)
                    self.advance(len(chunk))

    def _check_status(self, response: Any) -> None:
        status = response.status_code
        if status in RETRY_STATUS:
            wait = retry_after(response.headers.get("retry-after"))
            if wait is None and status == 429:
                wait = rate_limit_reset(response.headers)
            raise Retry(f"HTTP {status}", wait)
        if status >= 400:
            detail = _error_message(response)
            where = f"{response.request.url.copy_with(query=None)}: HTTP {status}"
            kind = AccessRefused if status in (401, 403) else FetchError
            raise kind(f"{where} {detail or response.reason_phrase}", status, detail)

    def _with_retries(self, url: str, attempt: Callable[[], Any]) -> Any:
        """`attempt` under the shared retry rule; what is left when it gives up is one FetchError."""
        import httpx2

        settings = self.settings

        def counted() -> Any:
            with self._lock:
                self.stats.requests += 1
            try:
                return attempt()
            except ServerLimitError as error:  # too big, too deep, too slow, a redirect loop: not retried
                raise FetchError(str(error), detail=error.limit) from None
            except (httpx2.InvalidURL, httpx2.UnsupportedProtocol) as error:
                raise FetchError(f"{url}: {error}") from None
            except httpx2.ConnectError as error:
                if unresolved_host(error):  # no such host: retrying would only spend the deadline
                    host = httpx2.URL(url).host or url
                    raise FetchError(f"{host}: the host name does not resolve (offline, or a wrong name?)") from None
                raise Retry(f"{type(error).__name__}: {error}") from None
            except httpx2.TransportError as error:  # refused, timed out, or the body was cut short
                raise Retry(f"{type(error).__name__}: {error}") from None

        def note(reason: str, wait: float, tries: int) -> None:
            log.info("%s: %s; trying again in %.1f s", url, reason, wait)
            with self._lock:
                self.stats.retries += 1
                self.stats.waits.append(wait)

        try:
            return with_retries(counted, settings.retry_policy(), note)
        except GaveUp as end:
            if end.why == "wait":
                raise FetchError(f"{url}: the server asks to wait {end.wait:.0f} s (Retry-After); "
                                 "try again later") from None
            if end.why == "deadline":
                raise FetchError(f"{url}: {end.reason}; gave up after {end.spent:.0f} s of {end.tries} tries "
                                 f"(the deadline is {settings.deadline:.0f} s; {DEADLINE_ENV} changes it)") from None
            raise FetchError(f"{url}: {end.reason} after {end.tries} tries") from None


def _error_message(response: Any) -> str:
    """The `message` of a JSON error answer (OpenReview: {"name": …, "message": …}), if any."""
    try:
        response.read()
        data = json.loads(response.content)
    except (ValueError, Exception):  # noqa: BLE001 - any body that is not a JSON error has no message
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return str(message)[:300] if message else ""


def rate_limit_reset(headers: Any) -> float | None:
    """Seconds until the rate-limit window resets: `ratelimit-reset` (seconds) or `x-ratelimit-reset` (Unix time)."""
    value = headers.get("ratelimit-reset")
    if value and value.strip().isdigit():
        return float(value)
    value = headers.get("x-ratelimit-reset")
    if value and value.strip().isdigit():
        return max(0.0, float(value) - time.time())
    return None


def _private_part(part: Path, resumed: bool):
    """The partial download opened for writing as this user's own file (0600, whatever the umask), never through
    a link planted at its name; appended to when the server resumes it."""
    import os

    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_APPEND if resumed else os.O_TRUNC)
    descriptor = os.open(part, flags, 0o600)
    if hasattr(os, "fchmod"):
        os.fchmod(descriptor, 0o600)
    return os.fdopen(descriptor, "ab" if resumed else "wb")
