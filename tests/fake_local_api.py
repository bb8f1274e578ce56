"""A stateful fake of the Zotero desktop's local API (http://127.0.0.1:23119/api), for real pyzotero over HTTP.

Made from Zotero's own source (chrome/content/zotero/xpcom/server/server.js and server_localAPI.js: the
read-only 7.x–9.x file and the 10.x one with writes) and the answers recorded against Zotero 10.0 in
../shared/docs/zotero-web-api.md ("Local API writes"). What it keeps from them, quirks included:
- the setting switched off → 403 `Local API is not enabled` on every /api/ path; `/api` without the slash → 404;
- Zotero 10: every answer carries `Zotero-Server-ID`; writes need it (missing → 428, another one → 412), then a
  local key (`Zotero-API-Key`): none → 401 with `WWW-Authenticate` and a body naming the authorize path, unknown
  or used up → 401 `Invalid or expired API key`; an "Allow" key is consumed when a write validates it;
- the authorize endpoint: appName required (400), 5 prompts a minute (429 + Retry-After), the dialog's answers
  Allow / Always Allow / Deny (403 `{"denied": true}`);
- write tokens 5–32 characters (400), reused → 412; `If-Unmodified-Since-Version` against the library's local
  version (412); at most 50 objects (413); POST merges into an existing object (PATCH semantics), per-object
  version check; no `/items/new` template and no `/deleted`; no default page size;
- Zotero 7–9 (`version="9.0"`): reads only, no server id; POST → 400 `Endpoint does not support method`, other
  write methods → 501; the reason phrase is the literal `undefined` for codes Zotero's table lacks;
- a request that looks like a browser's (User-Agent `Mozilla/…` or an Origin) is dropped with no answer;
- lists sorted as the Web API sorts them: `sort=dateModified` by default, newest first (`direction`), so an item
  the user edits while a client pages jumps to the front: it is read twice or not at all (paging is no snapshot);
  every write stamps `dateModified`.
Local versions are this database's own counter (unrelated to zotero.org versions). Switches to change the library
under a client: `between_pages(fake, start)` runs before a page after the first is made (the user at work),
`on_get(fake, path)` before every GET, `before_write(fake)` before a write, `short_pages` makes the next pages after the first come back empty
(headers as usual).
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlencode, urlsplit
from tests.loopback import QuietDispatcher, serve, shutdown

KEY_CHARS = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
MAX_WRITE_OBJECTS = 50
AUTHORIZE_PER_MINUTE = 5
WRITE_TOKEN_SECONDS = 12 * 3600
KNOWN_REASONS = {200: "OK", 201: "Created", 204: "No Content", 300: "Multiple Choices", 304: "Not Modified",
                 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 412: "Precondition Failed",
                 500: "Internal Server Error", 501: "Not Implemented"}
ITEM_TYPES = {"conferencePaper", "journalArticle", "book", "note", "preprint", "attachment", "annotation"}


class Answer(Exception):
    """A plain-text answer, as Zotero's endpoints return them."""

    def __init__(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(body)
        self.status, self.body, self.headers = status, body, headers or {}


@dataclass
class LocalLibrary:
    type: str
    id: int
    name: str = "My Library"
    version: int = 1  # the library's local (client) version
    items: dict[str, dict] = field(default_factory=dict)
    collections: dict[str, dict] = field(default_factory=dict)


class FakeLocalZotero:
    """The desktop's state and switches; `url` is the API root to give zotrec (`zotero:local:<url>`)."""

    def __init__(self, version: str = "10.0", server_id: str = "Q7M3K2R9X4TZ", user_id: int = 0,
                 authorize_path: str = "/api/local/authorize") -> None:
        self.version, self.server_id, self.user_id, self.authorize_path = version, server_id, user_id, authorize_path
        self.enabled = True  # Settings → Advanced → "Allow other applications … to communicate with Zotero"
        self.dialog: list[str] = []  # the user's next answers: "allow", "always" or "deny"
        self.prompts: list[str] = []  # the appName of every dialog shown
        self.keys: dict[str, bool] = {}  # local API key → remember (Always Allow)
        self.libraries: dict[tuple[str, int], LocalLibrary] = {("user", 0): LocalLibrary("user", 0)}
        self.write_tokens: dict[str, float] = {}
        self.authorize_times: list[float] = []
        self.faults: list[list] = []  # [status, times, method, path part, headers, body]
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.clock: Callable[[], float] = time.time
        self.after_write: Callable[[FakeLocalZotero, dict], None] | None = None  # called before the answer
        self.between_pages: Callable[[FakeLocalZotero, int], None] | None = None  # before a page at start > 0
        self.short_pages = 0  # the next pages at start > 0 answer an empty list
        self.on_get: Callable[[FakeLocalZotero, str], None] | None = None  # before every GET (a busy user)
        self.before_write: Callable[[FakeLocalZotero], None] | None = None  # before a write is looked at
        self.lock = threading.RLock()
        self._counter = 0
        self._last_stamp = 0
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def writable(self) -> bool:
        return not self.version.split(".")[0].isdigit() or int(self.version.split(".")[0]) >= 10

    # ---- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> FakeLocalZotero:
        self._httpd = serve(self, _Handler)
        return self

    def stop(self) -> None:
        shutdown(self._httpd)

    @property
    def url(self) -> str:
        assert self._httpd, "start() the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/api"

    # ---- what the user does in the desktop app ---------------------------------------------------------
    def library(self, library_type: str = "user", library_id: int = 0) -> LocalLibrary:
        return self.libraries.setdefault((library_type, library_id), LocalLibrary(library_type, library_id))

    def new_key(self) -> str:
        with self.lock:
            taken = {k for lib in self.libraries.values() for k in (*lib.items, *lib.collections)}
            while (key := "".join(secrets.choice(KEY_CHARS) for _ in range(8))) in taken:
                pass
            return key

    def add_item(self, lib: LocalLibrary, **data: Any) -> str:
        with self.lock:
            lib.version += 1
            key = data.pop("key", None) or self.new_key()
            lib.items[key] = {"key": key, "version": lib.version, "itemType": "journalArticle", "title": "",
                              "creators": [], "tags": [], "collections": [], "relations": {},
                              "dateAdded": "2025-01-01T00:00:00Z", "dateModified": "2025-01-01T00:00:00Z", **data}
            return key

    def add_collection(self, lib: LocalLibrary, name: str, parent: str | bool = False) -> str:
        with self.lock:
            lib.version += 1
            key = self.new_key()
            lib.collections[key] = {"key": key, "version": lib.version, "name": name, "parentCollection": parent,
                                    "relations": {}}
            return key

    def now(self) -> str:
        """dateModified as Zotero stamps it (UTC, to the second); each stamp a second after the last, so the
        newest write sorts first."""
        self._last_stamp = max(int(self.clock()), self._last_stamp + 1)
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._last_stamp))

    def edit_item(self, lib: LocalLibrary, key: str, **changes: Any) -> None:
        with self.lock:
            lib.version += 1
            lib.items[key].update(changes, version=lib.version, dateModified=self.now())

    def trash_item(self, lib: LocalLibrary, key: str) -> None:
        self.edit_item(lib, key, deleted=True)

    def inject(self, status: int, times: int = 1, method: str = "", path_contains: str = "",
               headers: dict[str, str] | None = None, body: str = "") -> None:
        """Answer the next `times` requests that match (method, part of the path) with `status`."""
        self.faults.append([status, times, method, path_contains, headers or {}, body or f"injected {status}"])

    def writes(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p, _ in self.requests if m != "GET"]

    # ---- JSON as the local API shows it ----------------------------------------------------------------
    def wrap(self, lib: LocalLibrary, data: dict, kind: str) -> dict:
        prefix = f"users/{self.user_id}" if lib.type == "user" else f"groups/{lib.id}"
        wrapped = {"key": data["key"], "version": data["version"],
                   "library": {"type": lib.type, "id": self.user_id if lib.type == "user" else lib.id,
                               "name": lib.name, "links": {}},
                   "links": {"self": {"href": f"http://localhost:23119/api/{prefix}/{kind}/{data['key']}",
                                      "type": "application/json"}},
                   "meta": {}, "data": data}
        if kind == "items" and not data.get("parentItem"):
            wrapped["meta"]["numChildren"] = sum(i.get("parentItem") == data["key"] for i in lib.items.values())
        return wrapped


class _Handler(QuietDispatcher):
    fake: FakeLocalZotero
    protocol_version = "HTTP/1.0"  # Zotero's server closes the connection after each answer

    def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body, indent=4).encode()
        self.send_response_only(status, KNOWN_REASONS.get(status, "undefined"))
        self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Zotero-API-Version", "3")
        self.send_header("Zotero-Schema-Version", "37")
        if self.fake.writable:
            self.send_header("Zotero-Server-ID", self.fake.server_id)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _dispatch(self, method: str) -> None:
        fake, parts = self.fake, urlsplit(self.path)
        self.query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        agent = self.headers.get("User-Agent") or ""
        if (agent.startswith("Mozilla/") or self.headers.get("Origin")) and not (
                self.headers.get("Zotero-Allowed-Request") or self.headers.get("X-Zotero-Connector-API-Version")):
            self.close_connection = True  # "Preventing request from browser": no answer at all
            return
        with fake.lock:
            fake.requests.append((method, self.path, dict(self.headers.items())))
            if method == "GET" and fake.on_get:
                fake.on_get(fake, parts.path)
            if method != "GET" and fake.before_write:
                fake.before_write(fake)
            for fault in fake.faults:
                status, times, wanted, part, headers, body = fault
                if times > 0 and wanted in ("", method) and part in parts.path:
                    fault[1] -= 1
                    self._send(status, body, headers)
                    return
            try:
                status, body, headers = self._route(method, parts.path, raw)
            except Answer as answer:
                status, body, headers = answer.status, answer.body, answer.headers
        self._send(status, body, headers)

    # ---- the server.js and LocalAPIEndpoint steps, in their order ------------------------------------------
    def _route(self, method: str, path: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
        fake = self.fake
        if path == "/api" or not path.startswith("/api/"):
            raise Answer(404, "No endpoint found\n")
        if path == fake.authorize_path and fake.writable:
            return self._authorize(method, raw)
        match = re.fullmatch(r"/api/(users|groups)/(\d+)(/.*)?", path)
        if path != "/api/" and not match:
            raise Answer(404, "No endpoint found\n")
        if method not in ("GET", "POST") and not fake.writable:
            raise Answer(501, "Method not implemented\n")
        if method != "GET" and not fake.writable:
            raise Answer(400, "Endpoint does not support method\n")
        if not fake.enabled:
            raise Answer(403, "Local API is not enabled")
        if (self.headers.get("Zotero-API-Version") or "3") != "3" and path != "/api/":
            raise Answer(501, f"API version not implemented: {self.headers.get('Zotero-API-Version')}")
        if path == "/api/":
            return 200, "Nothing to see here.", {}
        kind, number, rest = match.group(1), int(match.group(2)), (match.group(3) or "").rstrip("/")
        if kind == "users" and number not in (0, fake.user_id):
            raise Answer(400, "Only data for the logged-in user is available locally -- use userID 0"
                         + (f" or {fake.user_id}" if fake.user_id else ""))
        lib = fake.libraries.get(("user", 0) if kind == "users" else ("group", number))
        if lib is None:
            raise Answer(404, "Not found")
        if method == "GET":
            return self._read(lib, rest, path)
        self._check_server_id()
        self._authenticate()
        if method == "POST" and rest in ("/items", "/collections"):
            return self._post(lib, rest[1:], raw)
        if method == "DELETE" and rest == "/items":
            return self._delete(lib)
        raise Answer(405, "Method not allowed for this path")

    def _check_server_id(self) -> None:
        sent = self.headers.get("Zotero-Server-ID")
        if not sent:
            raise Answer(428, "Zotero-Server-ID not provided")
        if sent != self.fake.server_id:
            raise Answer(412, "Zotero-Server-ID does not match this Zotero instance")

    def _authenticate(self) -> None:
        key = self.headers.get("Zotero-API-Key") or self.query.get("key") or ""
        if not key:
            raise Answer(401, f"API key required -- POST {self.fake.authorize_path} to obtain one",
                         {"WWW-Authenticate": 'Zotero-API-Key realm="Zotero Local API"'})
        if key not in self.fake.keys:
            raise Answer(401, "Invalid or expired API key")
        if not self.fake.keys[key]:
            del self.fake.keys[key]  # "Allow": consumed by the first write that validates it

    def _authorize(self, method: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
        fake = self.fake
        if method != "POST":
            raise Answer(400, "Endpoint does not support method\n")
        if not fake.enabled:
            raise Answer(403, "Local API is not enabled")
        self._check_server_id()
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            raise Answer(400, "Invalid JSON provided\n") from None
        if not isinstance(body, dict) or not isinstance(body.get("appName"), str) or not body["appName"].strip():
            raise Answer(400, "appName is required")
        now = fake.clock()
        fake.authorize_times = [t for t in fake.authorize_times if now - t < 60]
        if len(fake.authorize_times) >= AUTHORIZE_PER_MINUTE:
            wait = max(1, int(60 - (now - fake.authorize_times[0]) + 0.999))
            raise Answer(429, "Too many authorization requests", {"Retry-After": str(wait)})
        fake.authorize_times.append(now)
        fake.prompts.append(body["appName"].strip())
        answer = fake.dialog.pop(0) if fake.dialog else "deny"  # Deny is the dialog's default button
        if answer == "deny":
            return 403, {"denied": True}, {}
        key = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(32))
        fake.keys[key] = answer == "always"
        return 200, {"key": key, "remember": answer == "always"}, {}

    # ---- reads ------------------------------------------------------------------------------------------
    def _read(self, lib: LocalLibrary, rest: str, path: str) -> tuple[int, Any, dict[str, str]]:
        parts, q = rest.strip("/").split("/"), self.query
        if parts == ["items", "new"] or parts[0] not in ("items", "collections", "groups"):
            raise Answer(404, "Not found" if parts[0] == "items" else "No endpoint found\n")
        if parts[0] == "groups":
            groups = [{"id": l.id, "version": l.version, "data": {"id": l.id, "name": l.name}}
                      for l in self.fake.libraries.values() if l.type == "group"]
            return 200, groups, {}
        store = lib.items if parts[0] == "items" else lib.collections
        if len(parts) == 2 and parts[1] not in ("top", "trash"):
            obj = store.get(parts[1])
            if obj is None:
                raise Answer(404, "Not found")
            return 200, self.fake.wrap(lib, obj, parts[0]), {"Last-Modified-Version": str(obj["version"])}
        if int(q.get("start") or 0) > 0 and self.fake.between_pages:
            self.fake.between_pages(self.fake, int(q["start"]))  # the user at work between two pages
        objects = list(store.values())
        if parts[0] == "items":
            trash = parts[1:] == ["trash"]
            if parts[1:] == ["top"]:
                objects = [o for o in objects if not o.get("parentItem")]
            if trash:
                objects = [o for o in objects if o.get("deleted")]
            elif q.get("includeTrashed") != "1":
                objects = [o for o in objects if not o.get("deleted")]
            if q.get("itemKey"):
                objects = [o for o in objects if o["key"] in q["itemKey"].split(",")]
        elif parts[1:] == ["top"]:
            objects = [o for o in objects if not o.get("parentCollection")]
        if q.get("since"):
            if not q["since"].lstrip("-").isdigit():
                raise Answer(400, f"Invalid 'since' value '{q['since']}'")
            objects = [o for o in objects if o["version"] > int(q["since"])] if int(q["since"]) else objects
        headers = {"Last-Modified-Version": str(lib.version), "Total-Results": str(len(objects))}
        if q.get("format") == "versions":
            return 200, {o["key"]: o["version"] for o in objects}, headers
        if q.get("format") == "keys":
            return 200, "\n".join(o["key"] for o in objects), headers
        field_name = q.get("sort") or "dateModified"
        newest_first = (q.get("direction") or ("desc" if field_name.startswith("date") else "asc")) == "desc"
        objects.sort(key=lambda o: str(o.get(field_name) or ""), reverse=newest_first)  # stable for ties
        start = max(int(q.get("start") or 0), 0)
        limit = int(q.get("limit") or 0) or len(objects) - start  # no default page size locally
        page = objects[start:start + limit]
        if start and self.fake.short_pages > 0:
            self.fake.short_pages -= 1
            page = []
        if start + limit < len(objects):
            base = {k: v for k, v in q.items() if k != "start"}
            query = urlencode({**base, "start": start + limit})
            headers["Link"] = f'<http://localhost:23119{path}?{query}>; rel="next"'
        return 200, [self.fake.wrap(lib, o, parts[0]) for o in page], headers

    # ---- writes -----------------------------------------------------------------------------------------
    def _check_token_and_version(self, lib: LocalLibrary) -> str | None:
        token = self.headers.get("Zotero-Write-Token")
        now = self.fake.clock()
        if token is not None:
            if not 5 <= len(token) <= 32:
                raise Answer(400, "Write token must be 5-32 characters in length")
            if self.fake.write_tokens.get(token, 0) > now:
                raise Answer(412, "Write token already used")
        header = self.headers.get("If-Unmodified-Since-Version")
        if header is not None:
            if not header.isdigit():
                raise Answer(400, "Invalid If-Unmodified-Since-Version value")
            if lib.version > int(header):
                raise Answer(412, f"Library has been modified since specified version (expected {header}, "
                                  f"found {lib.version})")
        return token

    def _post(self, lib: LocalLibrary, kind: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
        token = self._check_token_and_version(lib)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            raise Answer(400, "Invalid JSON provided\n") from None
        if body is None:
            raise Answer(400, "Empty request body")
        if not isinstance(body, list):
            raise Answer(400, "Uploaded data must be a JSON array")
        if not body:
            raise Answer(400, f"No {kind} provided")
        if len(body) > MAX_WRITE_OBJECTS:
            raise Answer(413, f"Cannot add more than {MAX_WRITE_OBJECTS} {kind} at a time")
        store = lib.items if kind == "items" else lib.collections
        result: dict[str, dict] = {"successful": {}, "success": {}, "unchanged": {}, "failed": {}}
        for index, entry in enumerate(body):
            at = str(index)
            key = entry.get("key", "") if isinstance(entry, dict) else ""
            try:
                if not isinstance(entry, dict):
                    raise Answer(400, f"Invalid value for index {index} in uploaded data; expected JSON object")
                if key and not re.fullmatch(f"[{KEY_CHARS}]{{8}}", key):
                    raise Answer(400, f"Invalid key: '{key}'")
                existing = store.get(key) if key else None
                if existing is not None:
                    if entry.get("version") is not None and int(entry["version"]) != existing["version"]:
                        raise Answer(412, f"{kind[:-1]} version mismatch: expected {entry['version']}, "
                                          f"found {existing['version']}")
                    merged = {**existing, **{k: v for k, v in entry.items() if k != "version"}}
                    if "deleted" in entry:  # item.fromJSON: a boolean (0/1 taken); toJSON writes `true` when trashed
                        if not isinstance(entry["deleted"], bool) and entry["deleted"] not in (0, 1):
                            raise Answer(400, "'deleted' must be a boolean")
                        merged["deleted"] = True
                        if not entry["deleted"]:
                            del merged["deleted"]
                    if merged == existing:
                        result["unchanged"][at] = key
                        continue
                elif kind == "items":
                    if not entry.get("itemType"):
                        raise Answer(400, "itemType property not provided")
                    if entry["itemType"] not in ITEM_TYPES:
                        raise Answer(400, f"Unknown itemType '{entry['itemType']}'")
                    if entry.get("parentItem") and entry["parentItem"] not in lib.items:
                        raise Answer(400, f"Parent item {entry['parentItem']} not found")
                    merged = {"tags": [], "collections": [], "relations": {}, **entry,
                              "key": key or self.fake.new_key()}
                else:
                    merged = {"parentCollection": False, "relations": {}, **entry, "key": key or self.fake.new_key()}
                lib.version += 1
                merged["version"] = lib.version
                if kind == "items":
                    merged["dateModified"] = self.fake.now()
                    merged.setdefault("dateAdded", merged["dateModified"])
                store[merged["key"]] = merged
                result["successful"][at] = self.fake.wrap(lib, merged, kind)
                result["success"][at] = merged["key"]
            except Answer as failure:
                result["failed"][at] = {"key": key, "code": failure.status, "message": failure.body}
        if token:
            self.fake.write_tokens[token] = self.fake.clock() + WRITE_TOKEN_SECONDS
        if self.fake.after_write:  # committed; a test may kill the client before it hears so
            self.fake.after_write(self.fake, result)
        return 200, result, {"Last-Modified-Version": str(lib.version)}

    def _delete(self, lib: LocalLibrary) -> tuple[int, Any, dict[str, str]]:
        if self.headers.get("If-Unmodified-Since-Version") is None:
            raise Answer(428, "If-Unmodified-Since-Version not provided")
        self._check_token_and_version(lib)
        keys = [k for k in (self.query.get("itemKey") or "").split(",") if k]
        if not keys:
            raise Answer(400, "'itemKey' not provided")
        for key in keys:
            if lib.items.pop(key, None) is not None:
                lib.version += 1
        return 204, "", {"Last-Modified-Version": str(lib.version)}
