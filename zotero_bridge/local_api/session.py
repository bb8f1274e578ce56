"""One session with the Zotero desktop's local API for `zotrec sync --library zotero:local[:URL]`.

It offers the calls the sync plan uses, as the Web API session does (`credentials`, `zot`, `call`, `post`,
`last_version`, `stats`, `close`), so the plan and the writer stay one copy. What differs from the Web API:
- no API key to read; a write needs a local key, asked for when a write is answered 401 (the path to ask
  comes from the 401 body), and the Zotero-Server-ID of this database on every write;
- Zotero 7–9 answer reads only: that is found before scoring (no server id on `GET /api/`) and said in one line;
- the whole library is read on every run (no rate limits locally, and there is no `/deleted` to follow).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from recommender.retry import GaveUp, Retry, RetryPolicy, retry_after, with_retries
from zotero_bridge.errors import BridgeError
from zotero_bridge.local_api.keys import KeyStore
from zotero_bridge.sources.base import SourceOptions

log = logging.getLogger(__name__)

T = TypeVar("T")
DEFAULT_ENDPOINT = "http://127.0.0.1:23119/api"
APP_NAME = "zotrec"
DEFAULT_AUTHORIZE_PATH = "/api/local/authorize"  # what Zotero 10.0 names in its 401 body
MAX_PROMPTS = 4  # Zotero shows at most 5 dialogs a minute
AUTHORIZE_TIMEOUT_S = 300.0  # the request waits while the dialog is open
REQUEST_TIMEOUT_S = 20.0
SWITCH_ON = ("in Zotero open Settings → Advanced and tick 'Allow other applications on this computer to "
             "communicate with Zotero'")
READ_ONLY = ("the Zotero at {url} has a read-only local API (Zotero 7–9): nothing was written. Update to Zotero 10, "
             "or import the list with its reasons as new items: zotrec reading-list --library zotero:local "
             "--format ris -o zotrec.ris, then File → Import… in Zotero (or sync through the Web API: zotrec sync "
             "with --library-id and --api-key)")


class LocalAccessError(BridgeError):
    """Zotero refused: the user denied the dialog, the setting is off, or another database answers."""


@dataclass(frozen=True)
class LocalTarget:
    """Which desktop library a session writes to; `library_id` names it in zotrec's memory ('0' when Zotero
    is not logged in to a zotero.org account), `path_id` is what the URLs use."""

    endpoint: str
    server_id: str
    library_type: str = "user"
    library_id: str = "0"
    path_id: str = "0"
    api_key: None = None  # no Web API key; the local key lives in the session only

    def describe(self) -> str:
        return f"the desktop {self.library_type} library ({self.endpoint})"


class LocalSession:
    """A pyzotero client in local mode plus request counting, authorization and one-line errors."""

    def __init__(self, endpoint: str, options: SourceOptions | None = None, keys: KeyStore | None = None) -> None:
        from zotero_bridge.zotero_api.paging import make_zotero

        options = options or SourceOptions()
        self.policy: RetryPolicy = options.extra.get("retry_policy") or RetryPolicy()
        self.endpoint = (endpoint or DEFAULT_ENDPOINT).rstrip("/")
        self.keys = keys or KeyStore(options.extra.get("local_key_file"))
        self.reads = self.writes = self.prompts = 0
        self.waited_s = 0.0
        self.last_version: int | None = None
        self.remembered = False  # the key in use came from "Always Allow"
        # every answer bounded (recommender/bounded_http.py); no rate limits on reads locally, writes wait in post()
        self.zot = make_zotero("0", "user", local=True, endpoint=self.endpoint, timeout=REQUEST_TIMEOUT_S,
                               event_hooks={"request": [self._on_request], "response": [self._on_response]})
        client = self.zot.client
        try:
            server_id = self._server_id()
        except BaseException:
            client.close()
            raise
        self.zot.server_id = server_id
        self.credentials = LocalTarget(self.endpoint, server_id)
        stored = self.keys.get(server_id)
        self.zot.local_api_key, self.remembered = stored, bool(stored)

    # ---- opening ---------------------------------------------------------------------------------------
    def _server_id(self) -> str:
        """This database's id from `GET /api/` — and the one-line answers for Zotero off, switched off, or 7–9."""
        response = self._get_root()
        if response.status_code == 403:
            raise LocalAccessError(f"Zotero's local API is switched off (403 from {self.endpoint}): {SWITCH_ON}")
        if response.status_code >= 300:
            raise LocalAccessError(f"{self.endpoint} answered HTTP {response.status_code}, not as Zotero's local API; "
                                   "is the URL right (default http://127.0.0.1:23119/api)?")
        server_id = response.headers.get("Zotero-Server-ID")
        if not server_id:
            raise LocalAccessError(READ_ONLY.format(url=self.endpoint))
        return server_id

    def _get_root(self) -> Any:
        import httpx2

        try:
            return self.zot.client.get(self.endpoint + "/", headers=self.zot.default_headers())
        except httpx2.TransportError:
            raise LocalAccessError(f"Zotero is not running (nothing answers at {self.endpoint}): start Zotero "
                                   "and run zotrec sync again") from None

    def use_library(self, library_type: str, path_id: str) -> None:
        """Point the session at My Library ('user', '0') or a group; name it as the items do (`library.id`)."""
        self.zot.library_type, self.zot.library_id = library_type + "s", path_id
        first = self.call("reading the library", lambda: self.zot.top(limit=1))
        owner = next((row.get("library") for row in first if isinstance(row, dict) and row.get("library")), {})
        self.credentials = LocalTarget(self.endpoint, self.credentials.server_id, library_type,
                                       str(owner.get("id", path_id)), path_id)

    # ---- counting ---------------------------------------------------------------------------------------
    def _on_request(self, request: Any) -> None:
        if request.method == "GET":
            self.reads += 1
        else:
            self.writes += 1

    def _on_response(self, response: Any) -> None:
        version = response.headers.get("Last-Modified-Version")
        if version and version.isdigit() and response.status_code < 300:
            self.last_version = int(version)

    @property
    def requests(self) -> int:
        return self.reads + self.writes

    def stats(self) -> dict[str, Any]:
        return {"requests": self.requests, "read_requests": self.reads, "write_requests": self.writes,
                "waited_s": round(self.waited_s, 3), "authorization_prompts": self.prompts}

    def close(self) -> None:
        self.zot.client.close()

    # ---- reads ------------------------------------------------------------------------------------------
    def call(self, what: str, function: Callable[..., T], *args: Any, write: bool = False, **kwargs: Any) -> T:
        """One pyzotero read, its failures as one line (the same words as `--library zotero:local`)."""
        from zotero_bridge.sources.local import _call

        self.zot.url_params = None
        return _call(self.endpoint, lambda: function(*args, **kwargs))

    # ---- writes -----------------------------------------------------------------------------------------
    def post(self, path: str, payload: list[dict], what: str, *, write_token: str | None = None,
             library_version: int | None = None) -> dict[str, Any]:
        """POST ≤50 objects to /{users|groups}/{id}/{path}: authorize on 401, wait out a 429's Retry-After;
        returns the successful/unchanged/failed map."""
        from zotero_bridge.zotero_api.client import WriteConflict

        url = f"{self.endpoint}/{self.zot.library_type}/{self.zot.library_id}/{path}"
        headers = {"Content-Type": "application/json", "Zotero-Server-ID": self.credentials.server_id}
        if write_token:
            headers["Zotero-Write-Token"] = write_token
        if library_version is not None:
            headers["If-Unmodified-Since-Version"] = str(library_version)

        def attempt() -> Any:
            response = self._send("POST", url, headers, json.dumps(payload))
            if response.status_code == 401:
                self._authorize(_first_line(response.text), what)
                raise Retry("Zotero asked for permission", 0.0)
            if response.status_code == 429:
                raise Retry("HTTP 429", retry_after(response.headers.get("Retry-After")))
            return response

        response = self._with_retries(attempt, what, MAX_PROMPTS + 3,
                                      f"Zotero kept refusing zotrec's writes while {what}; nothing more was sent")
        status, body = response.status_code, _first_line(response.text)
        if status < 300:
            if not self.remembered:
                self.zot.local_api_key = None  # "Allow" is good for one write; Zotero has consumed it
            try:
                result = response.json()
            except ValueError:
                raise BridgeError(f"Zotero sent a reply that is not JSON while {what}") from None
            return result if isinstance(result, dict) else {}
        if status == 412 and "Zotero-Server-ID" in body:
            raise LocalAccessError(f"another Zotero database now answers at {self.endpoint} (the server id "
                                   "changed: another profile, or a restored database); nothing more was "
                                   "written: run zotrec sync again")
        if status == 428 and "Zotero-Server-ID" in body:
            raise LocalAccessError(f"Zotero at {self.endpoint} wants its server id on every write and did not "
                                   "get it while " + what + "; run zotrec sync again")
        if status == 412:
            raise WriteConflict(f"{self.credentials.describe()} changed while {what} ({body})")
        raise self._refusal(status, body, what)

    def _with_retries(self, attempt: Callable[[], T], what: str, attempts: int, kept_failing: str) -> T:
        """`attempt` under the one retry rule (recommender/retry.py): Retry-After obeyed up to the policy's
        limit (seconds or an HTTP date; nonsense such as 'nan' gets our own backoff)."""
        def note(reason: str, wait: float, tries: int) -> None:
            if wait > 0:
                log.info("Zotero asked zotrec to wait %.0f s (%s); waiting.", wait, reason)
            self.waited_s += wait

        try:
            return with_retries(attempt, dataclasses.replace(self.policy, attempts=attempts), note)
        except GaveUp as end:
            if end.why == "wait":
                raise LocalAccessError(f"Zotero asked zotrec to wait {end.wait:.0f} s while {what}; nothing more "
                                       "was sent, run zotrec sync again later") from None
            raise LocalAccessError(kept_failing) from None

    def _send(self, method: str, url: str, headers: dict[str, str], content: str) -> Any:
        import httpx2

        key = {"Zotero-API-Key": self.zot.local_api_key} if self.zot.local_api_key else {}
        try:
            return self.zot.client.request(method, url, content=content,
                                           headers={**self.zot.default_headers(), **headers, **key})
        except httpx2.TransportError:
            raise LocalAccessError(f"Zotero stopped answering at {self.endpoint} while zotrec wrote to it; start "
                                   "Zotero and run zotrec sync again (what was written stays, the next run "
                                   "carries on)") from None

    def _refusal(self, status: int, body: str, what: str) -> BridgeError:
        if status == 403 and "not enabled" in body:
            return LocalAccessError(f"Zotero's local API is switched off (403 from {self.endpoint}): {SWITCH_ON}")
        if status == 403:
            return LocalAccessError(f"Zotero does not let zotrec write to {self.credentials.describe()} ({body}): "
                                    "a read-only group library?")
        if status in (400, 501) and ("does not support method" in body or "not implemented" in body.lower()):
            return LocalAccessError(READ_ONLY.format(url=self.endpoint))
        return BridgeError(f"Zotero answered HTTP {status} while {what}: {body or 'no details'}")

    # ---- authorization ----------------------------------------------------------------------------------
    def _authorize(self, body: str, what: str) -> None:
        """Ask Zotero for a key (its dialog); keep an "Always Allow" key for this server id."""
        if self.zot.local_api_key:  # unknown or used up: the user cleared it, or it was a one-write "Allow"
            if self.remembered:
                self.keys.forget(self.credentials.server_id)
            self.zot.local_api_key, self.remembered = None, False
        if self.prompts >= MAX_PROMPTS:
            raise LocalAccessError(f"Zotero asked for permission {self.prompts} times while {what}: zotrec writes in "
                                   "several steps, so choose 'Always Allow' in Zotero's dialog; what was written "
                                   "stays, run zotrec sync again")
        found = re.search(r"POST\s+(/\S+)", body)
        path = found.group(1) if found else DEFAULT_AUTHORIZE_PATH
        origin = re.match(r"https?://[^/]+", self.endpoint)
        url = (origin.group(0) if origin else self.endpoint) + path
        log.warning("Zotero is asking whether zotrec may write to your library: answer the dialog in Zotero "
                    "(choose 'Always Allow' so that later syncs do not ask again).")

        def ask() -> Any:
            self.prompts += 1
            response = self._ask(url)
            if response.status_code == 429:
                raise Retry("HTTP 429", retry_after(response.headers.get("Retry-After")))
            return response

        response = self._with_retries(ask, "waiting to ask Zotero for permission", 2,
                                      "Zotero is limiting how often zotrec may ask for permission; wait a minute "
                                      "and run zotrec sync again")
        status = response.status_code
        if status == 403 and "denied" in response.text:
            raise LocalAccessError("you denied zotrec write access in Zotero's dialog: nothing was written (run "
                                   "zotrec sync again and choose 'Always Allow' to let it write the collection)")
        if status == 403:
            raise LocalAccessError(f"Zotero's local API is switched off (403 from {url}): {SWITCH_ON}")
        try:
            answer = response.json()
            key, remember = str(answer["key"]), bool(answer.get("remember"))
        except (ValueError, KeyError, TypeError):
            raise BridgeError(f"Zotero answered the authorization request with HTTP {status}, not a key "
                              f"({_first_line(response.text)})") from None
        self.zot.local_api_key, self.remembered = key, remember
        if remember:
            self.keys.put(self.credentials.server_id, key)
        else:
            log.warning("You chose 'Allow' (one write): Zotero asks again for each of zotrec's writes; choose "
                        "'Always Allow' to be asked once.")

    def _ask(self, url: str) -> Any:
        import httpx2

        try:
            return self.zot.client.post(url, json={"appName": APP_NAME}, timeout=AUTHORIZE_TIMEOUT_S,
                                        headers={**self.zot.default_headers(),
                                                 "Zotero-Server-ID": self.credentials.server_id})
        except httpx2.TransportError:
            raise LocalAccessError("no answer from Zotero's permission dialog (it closed, or nobody answered in "
                                   f"{AUTHORIZE_TIMEOUT_S:.0f} s): run zotrec sync again") from None


def _first_line(text: str) -> str:
    text = (text or "").strip()
    return text.splitlines()[0][:200] if text else ""
