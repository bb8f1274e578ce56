"""A stateful local fake of the Zotero Web API v3, so that real pyzotero can talk real HTTP to it in tests.

It keeps libraries (items, collections, versions, deletions), checks keys, versions, write tokens and the
50-object limit, pages like the real server (`limit` ≤ 100, `start`, `Link`, `Total-Results`), and has switches
to inject faults: 429/503 with Retry-After, `Backoff` on success, 5xx, per-object `failed`, hooks that run
before or after a write, and the user at work while a client pages (`between_pages(fake, start)` before a page
after the first; `short_pages`: the next such pages come back empty). Lists are sorted as the server sorts them,
`sort=dateModified` newest first by default, so an item edited while a client pages moves across the pages.
Shapes follow ../shared/fixtures/pyzotero-api-responses and docs/zotero-web-api.md.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.loopback import QuietDispatcher, serve, shutdown
from tests.zotero_server_routes import HttpError as _HttpError
from tests.zotero_server_routes import route

SCHEMA = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "zotero-schema" / "schema.json"
KEY_CHARS = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"


# Zotero 6 (2021) added the preprint type, after pyzotero's recording: its fields as Zotero's schema.json lists them
# (a type change drops the fields the new type lacks, so this one list is exact, not "any field").
PREPRINT_FIELDS = {"title", "abstractNote", "genre", "repository", "archiveID", "place", "date", "series",
                   "seriesNumber", "DOI", "citationKey", "url", "accessDate", "archive", "archiveLocation",
                   "shortTitle", "language", "libraryCatalog", "callNumber", "rights", "extra"}


def _fields_by_type() -> dict[str, set[str]]:
    """Each item type's fields, from Zotero's schema.json in ../shared; without it, from pyzotero's recorded
    /itemTypes and /itemFields answers (tests/data: 2021's lists, and any field allowed for any type; the preprint
    type zotrec writes for stream papers added as schema.json has it)."""
    if not SCHEMA.is_file():
        recorded = Path(__file__).resolve().parent / "data" / "pyzotero-api-responses"
        types = [row["itemType"] for row in json.loads((recorded / "item_types.json").read_text(encoding="utf-8"))]
        fields = {row["field"] for row in json.loads((recorded / "item_fields.json").read_text(encoding="utf-8"))}
        return {**{name: set(fields) for name in types}, "note": set(), "attachment": {"title", "url"},
                "preprint": set(PREPRINT_FIELDS)}
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return {t["itemType"]: {f["field"] for f in t["fields"]} for t in schema["itemTypes"]}


@dataclass
class Fault:
    """An injected answer for the next `times` requests that match."""

    status: int
    times: int = 1
    method: str | None = None
    path_contains: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""


@dataclass
class KeyAccess:
    """What one API key may do: its user id, group ids, and whether it can write."""

    user_id: int
    groups: tuple[int, ...] = ()
    write: bool = True


@dataclass
class Library:
    type: str
    id: int
    version: int = 1
    items: dict[str, dict] = field(default_factory=dict)
    collections: dict[str, dict] = field(default_factory=dict)
    deleted: dict[str, dict[str, int]] = field(default_factory=lambda: {"items": {}, "collections": {}})
    created_by: dict[str, int] = field(default_factory=dict)  # item key → the user who created it (groups)


class FakeZotero:
    """The server state and its switches; `url` is what `zot.endpoint` should be set to."""

    def __init__(self, keys: dict[str, KeyAccess] | None = None) -> None:
        self.keys = keys if keys is not None else {}
        self.libraries: dict[tuple[str, int], Library] = {}
        self.write_tokens: set[str] = set()
        self.faults: list[Fault] = []
        self.backoff_next: tuple[int, str] = (0, "0")  # (how many successful responses, seconds)
        self.fail_objects: list[tuple[int, str]] = []  # (code, message) for the next posted item objects
        self.before_write: Callable[[FakeZotero], None] | None = None
        self.after_write: Callable[[FakeZotero, dict], None] | None = None
        self.between_pages: Callable[[FakeZotero, int], None] | None = None
        self.short_pages = 0
        self._last_stamp = 0
        self.requests: list[tuple[str, str]] = []  # (method, path?query) of every request seen
        self.fields = _fields_by_type()
        self.lock = threading.RLock()
        self._counter = 0
        self._httpd: ThreadingHTTPServer | None = None

    # ---- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> FakeZotero:
        self._httpd = serve(self, _Handler)
        return self

    def stop(self) -> None:
        shutdown(self._httpd)

    @property
    def url(self) -> str:
        assert self._httpd, "start() the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # ---- helpers for tests -----------------------------------------------------------------------------
    def library(self, library_type: str = "user", library_id: int = 1) -> Library:
        return self.libraries.setdefault((library_type, int(library_id)), Library(library_type, int(library_id)))

    def new_key(self) -> str:
        with self.lock:
            self._counter += 1
            number, chars = self._counter, []
            for _ in range(8):
                number, digit = divmod(number, len(KEY_CHARS))
                chars.append(KEY_CHARS[digit])
            return "".join(reversed(chars))

    def add_collection(self, lib: Library, name: str, parent: str | bool = False) -> str:
        """A collection the user made (bumps the library version)."""
        with self.lock:
            lib.version += 1
            key = self.new_key()
            lib.collections[key] = {"key": key, "version": lib.version, "name": name,
                                    "parentCollection": parent, "relations": {}}
            return key

    def add_item(self, lib: Library, created_by: int | None = None, **data: Any) -> str:
        """An item the user (in a group: member `created_by`) made (bumps the library version)."""
        with self.lock:
            lib.version += 1
            key = data.pop("key", None) or self.new_key()
            if created_by is not None:
                lib.created_by[key] = created_by
            item = {"key": key, "version": lib.version, "itemType": "journalArticle", "title": "", "creators": [],
                    "tags": [], "collections": [], "relations": {}, "dateAdded": "2025-01-01T00:00:00Z",
                    "dateModified": "2025-01-01T00:00:00Z", **data}
            lib.items[key] = item
            return key

    def edit_item(self, lib: Library, key: str, **changes: Any) -> None:
        """A user's edit in another client: the item gets the next library version."""
        with self.lock:
            lib.version += 1
            lib.items[key].update(changes, version=lib.version, dateModified=self.now())

    def now(self) -> str:
        """A dateModified stamp a second after the last one (and not before the clock): the newest sorts first."""
        import time

        self._last_stamp = max(int(time.time()), self._last_stamp + 1)
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._last_stamp))

    def delete_item(self, lib: Library, key: str) -> None:
        with self.lock:
            lib.version += 1
            del lib.items[key]
            lib.deleted["items"][key] = lib.version

    # ---- what a user does in their Zotero client (each is one synced change, as the real server records it)
    def trash_item(self, lib: Library, key: str) -> None:
        """Move to the trash: the item stays, with `deleted: 1` in its data and a new version."""
        self.edit_item(lib, key, deleted=1)

    def tag_item(self, lib: Library, key: str, tag: str) -> None:
        self.edit_item(lib, key, tags=[*lib.items[key].get("tags", []), {"tag": tag}])

    def file_item(self, lib: Library, key: str, add: str | None = None, remove: str | None = None) -> None:
        """Add the item to collection `add` and/or take it out of `remove` (one edit of `collections`)."""
        collections = [c for c in lib.items[key].get("collections", []) if c != remove]
        self.edit_item(lib, key, collections=collections + ([add] if add and add not in collections else []))

    def add_child(self, lib: Library, parent: str, item_type: str = "note", **data: Any) -> str:
        """A child note/attachment (or an annotation, whose parent is an attachment); the parent's own
        version does not change, as on the real server."""
        base = {"note": {"note": "<p>my note</p>"},
                "attachment": {"linkMode": "imported_file", "title": "paper.pdf", "contentType": "application/pdf"},
                "annotation": {"annotationType": "highlight", "annotationText": "key result"}}[item_type]
        return self.add_item(lib, itemType=item_type, parentItem=parent, **{**base, **data})

    def inject(self, status: int, times: int = 1, **kwargs: Any) -> None:
        """Answer the next `times` matching requests with `status` (headers/body/method/path_contains)."""
        self.faults.append(Fault(status, times, **kwargs))

    def writes(self) -> list[tuple[str, str]]:
        return [r for r in self.requests if r[0] != "GET"]

    # ---- wrapping objects as the API shows them --------------------------------------------------------
    def wrap(self, lib: Library, data: dict, kind: str) -> dict:
        prefix = f"{self.url}/{lib.type}s/{lib.id}/{kind}/{data['key']}"
        wrapped = {"key": data["key"], "version": data["version"],
                   "library": {"type": lib.type, "id": lib.id, "name": f"library {lib.id}", "links": {}},
                   "links": {"self": {"href": prefix, "type": "application/json"}}, "data": data}
        if kind == "collections":
            wrapped["meta"] = {
                "numCollections": sum(c.get("parentCollection") == data["key"] for c in lib.collections.values()),
                "numItems": sum(data["key"] in i.get("collections", []) for i in lib.items.values())}
        else:
            wrapped["meta"] = {"numChildren": sum(i.get("parentItem") == data["key"] for i in lib.items.values())}
            if lib.type == "group" and data["key"] in lib.created_by:  # as the dataserver's Zotero_Users::toJSON
                user = lib.created_by[data["key"]]
                wrapped["meta"]["createdByUser"] = {
                    "id": user, "username": f"user{user}", "name": "",
                    "links": {"alternate": {"href": f"https://www.zotero.org/user{user}", "type": "text/html"}}}
        return wrapped


class _Handler(QuietDispatcher):
    fake: FakeZotero
    protocol_version = "HTTP/1.1"

    def _send(self, status: int, body: Any = b"", headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else (
            body.encode() if isinstance(body, str) else json.dumps(body).encode())
        self.send_response(status)
        content_type = "application/json" if not isinstance(body, (str, bytes)) else "text/plain"
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Zotero-API-Version", "3")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _dispatch(self, method: str) -> None:
        fake = self.fake
        parts = urlsplit(self.path)
        self.query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        with fake.lock:
            fake.requests.append((method, self.path))
            if self._injected_fault(method, parts.path):
                return
            try:
                status, body, headers = self._route(method, parts.path, raw)
            except _HttpError as error:
                status, body, headers = error.status, error.message, {}
            if status < 300 and fake.backoff_next[0] > 0:
                fake.backoff_next = (fake.backoff_next[0] - 1, fake.backoff_next[1])
                headers = {**headers, "Backoff": fake.backoff_next[1]}
        self._send(status, body, headers)

    def _injected_fault(self, method: str, path: str) -> bool:
        for fault in self.fake.faults:
            if fault.times > 0 and (fault.method in (None, method)) and (
                    fault.path_contains is None or fault.path_contains in path):
                fault.times -= 1
                self._send(fault.status, fault.body or f"injected {fault.status}", fault.headers)
                return True
        return False

    def _key(self) -> str | None:
        auth = self.headers.get("Authorization") or ""
        if auth.startswith("Bearer "):
            return auth[len("Bearer "):]
        return self.headers.get("Zotero-API-Key") or self.query.get("key")

    def _access(self, library_type: str, library_id: int, write: bool) -> KeyAccess:
        key = self._key()
        if not key:
            raise _HttpError(403, "Forbidden")
        access = self.fake.keys.get(key)
        if access is None:
            raise _HttpError(403, "Invalid key")
        allowed = access.user_id == library_id if library_type == "user" else library_id in access.groups
        if not allowed:
            raise _HttpError(403, "Forbidden")
        if write and not access.write:
            raise _HttpError(403, "Write access denied")
        return access

    def _route(self, method: str, path: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
        if path.startswith("/keys/"):
            return self._key_info(path.rsplit("/", 1)[-1])
        if path == "/items/new":
            return self._template()
        match = re.fullmatch(r"/(users|groups)/(\d+)(/.*)", path)
        if not match:
            raise _HttpError(404, "Not found")
        library_type = match.group(1)[:-1]
        self.access = self._access(library_type, int(match.group(2)), write=method != "GET")
        lib = self.fake.libraries.get((library_type, int(match.group(2))))
        if lib is None:
            raise _HttpError(404, "Not found")
        return route(self, method, lib, match.group(3).rstrip("/"), raw)

    def _key_info(self, which: str) -> tuple[int, Any, dict[str, str]]:
        key = self._key() if which == "current" else which
        access = self.fake.keys.get(key or "")
        if access is None:
            raise _HttpError(403, "Invalid key")
        groups = {str(g): {"library": True, "write": access.write} for g in access.groups}
        return 200, {"key": "redacted", "userID": access.user_id, "username": f"user{access.user_id}",
                     "access": {"user": {"library": True, "files": True, "notes": True, "write": access.write},
                                "groups": groups}}, {}

    def _template(self) -> tuple[int, Any, dict[str, str]]:
        item_type = self.query.get("itemType", "")
        fields = self.fake.fields.get(item_type)
        if fields is None:
            raise _HttpError(400, f"Invalid item type '{item_type}'")
        template = {"itemType": item_type, **{name: "" for name in sorted(fields)}, "tags": [],
                    "collections": [], "relations": {}}
        if item_type != "note":
            template["creators"] = [{"creatorType": "author", "firstName": "", "lastName": ""}]
        return 200, template, {}

    def page_headers(self, lib: Library, total: int, limit: int | None, start: int, path: str) -> dict[str, str]:
        headers = {"Last-Modified-Version": str(lib.version), "Total-Results": str(total)}
        if limit and total > limit:
            base = {k: v for k, v in self.query.items() if k not in ("start", "key")}
            links = []
            for rel, at in (("first", 0), ("prev", max(start - limit, 0) if start else None),
                            ("next", start + limit if start + limit < total else None),
                            ("last", ((total - 1) // limit) * limit)):
                if at is not None:
                    query = urlencode({**base, "limit": limit, "start": at})
                    links.append(f'<{self.fake.url}{path}?{query}>; rel="{rel}"')
            headers["Link"] = ", ".join(links)
        return headers

