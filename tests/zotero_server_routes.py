"""The endpoints of the fake Zotero Web API (tests/zotero_server.py): reads, paging, versions and writes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.zotero_server import Library, _Handler

MAX_WRITE_OBJECTS = 50
MAX_LIMIT = 100
DEFAULT_LIMIT = 25
ALWAYS_ALLOWED = {"key", "version", "itemType", "creators", "tags", "collections", "relations", "dateAdded",
                  "dateModified", "parentItem", "deleted", "note", "accessDate"}


class HttpError(Exception):
    """A plain-text error answer, as the real server sends."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def route(h: _Handler, method: str, lib: Library, rest: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
    parts = rest.strip("/").split("/")
    if method == "GET":
        if parts == ["deleted"]:
            return _deleted(h, lib)
        if parts[0] in ("items", "collections"):
            return _read(h, lib, parts, rest)
    elif method == "POST" and len(parts) == 1 and parts[0] in ("items", "collections"):
        return _post(h, lib, parts[0], raw)
    elif method == "PATCH" and len(parts) == 2 and parts[0] == "items":
        return _patch(h, lib, parts[1], raw)
    raise HttpError(405 if parts[0] in ("items", "collections") else 404, "Not found")


# ---- reads ------------------------------------------------------------------------------------------------
def _read(h: _Handler, lib: Library, parts: list[str], rest: str) -> tuple[int, Any, dict[str, str]]:
    kind, q = parts[0], h.query
    store = lib.items if kind == "items" else lib.collections
    if len(parts) == 2 and parts[1] not in ("top", "trash"):
        obj = store.get(parts[1])
        if obj is None:
            raise HttpError(404, "Not found")
        return 200, h.fake.wrap(lib, obj, kind), {"Last-Modified-Version": str(obj["version"])}
    since_header = h.headers.get("If-Modified-Since-Version")
    if since_header is not None and lib.version <= int(since_header):
        return 304, b"", {"Last-Modified-Version": str(lib.version)}
    if int(q.get("start") or 0) > 0 and h.fake.between_pages:
        h.fake.between_pages(h.fake, int(q["start"]))  # the user at work between two pages
    objects = _select(lib, kind, parts, q)
    field_name = q.get("sort") or "dateModified"
    newest_first = (q.get("direction") or ("desc" if field_name.startswith("date") else "asc")) == "desc"
    objects.sort(key=lambda o: str(o.get(field_name) or ""), reverse=newest_first)  # stable for ties
    fmt = q.get("format", "json")
    if fmt == "versions":
        return 200, {o["key"]: o["version"] for o in objects}, {"Last-Modified-Version": str(lib.version),
                                                                 "Total-Results": str(len(objects))}
    if fmt == "keys":
        return 200, "\n".join(o["key"] for o in objects) + "\n", {"Last-Modified-Version": str(lib.version)}
    limit = int(q.get("limit") or 0)
    limit = DEFAULT_LIMIT if limit <= 0 else min(limit, MAX_LIMIT)
    start = int(q.get("start") or 0)
    page = objects[start:start + limit]
    if start and h.fake.short_pages > 0:
        h.fake.short_pages -= 1
        page = []
    headers = h.page_headers(lib, len(objects), limit, start, "/" + f"{lib.type}s/{lib.id}" + rest)
    return 200, [h.fake.wrap(lib, o, kind) for o in page], headers


def _select(lib: Library, kind: str, parts: list[str], q: dict[str, str]) -> list[dict]:
    if kind == "collections":
        objects = list(lib.collections.values())
        if parts[1:] == ["top"]:
            objects = [c for c in objects if not c.get("parentCollection")]
        elif len(parts) == 3 and parts[2] == "collections":
            objects = [c for c in objects if c.get("parentCollection") == parts[1]]
        elif len(parts) >= 3 and parts[2] == "items":
            objects = [i for i in lib.items.values() if parts[1] in i.get("collections", [])]
            if parts[3:] == ["top"]:
                objects = [i for i in objects if not i.get("parentItem")]
        keys = q.get("collectionKey")
    else:
        objects = list(lib.items.values())
        trashed = parts[1:] == ["trash"]
        if parts[1:] == ["top"]:
            objects = [i for i in objects if not i.get("parentItem")]
        elif len(parts) == 3 and parts[2] == "children":
            objects = [i for i in objects if i.get("parentItem") == parts[1]]
        if trashed:
            objects = [i for i in objects if i.get("deleted")]
        elif q.get("includeTrashed") not in ("1", "true"):
            objects = [i for i in objects if not i.get("deleted")]
        keys = q.get("itemKey")
    if keys:
        wanted = set(keys.split(","))
        objects = [o for o in objects if o["key"] in wanted]
    if q.get("since"):
        objects = [o for o in objects if o["version"] > int(q["since"])]
    return objects


def _deleted(h: _Handler, lib: Library) -> tuple[int, Any, dict[str, str]]:
    if not h.query.get("since"):
        raise HttpError(400, "'since' parameter must be provided")
    since = int(h.query["since"])
    body = {kind: [k for k, v in lib.deleted[kind].items() if v > since] for kind in ("collections", "items")}
    body.update(searches=[], tags=[], settings=[])
    return 200, body, {"Last-Modified-Version": str(lib.version)}


# ---- writes -----------------------------------------------------------------------------------------------
def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _post(h: _Handler, lib: Library, kind: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
    fake = h.fake
    try:
        body = json.loads(raw or b"null")
    except ValueError:
        raise HttpError(400, "Invalid JSON") from None
    if not isinstance(body, list):
        raise HttpError(400, "Uploaded data must be a JSON array")
    if len(body) > MAX_WRITE_OBJECTS:
        raise HttpError(413, f"Cannot add more than {MAX_WRITE_OBJECTS} {kind} at a time")
    if fake.before_write:
        hook, fake.before_write = fake.before_write, None
        hook(fake)
    token = h.headers.get("Zotero-Write-Token")
    if token and token in fake.write_tokens:
        raise HttpError(412, "Write token already used")
    _check_library_version(h, lib)
    new_version = lib.version + 1
    result: dict[str, dict] = {"successful": {}, "success": {}, "unchanged": {}, "failed": {}}
    for index, obj in enumerate(body):
        outcome = _write_one(h, lib, kind, obj, new_version)
        slot = str(index)
        if isinstance(outcome, tuple):
            code, message = outcome
            result["failed"][slot] = {"key": obj.get("key"), "code": code, "message": message}
            if not obj.get("key"):
                del result["failed"][slot]["key"]
        elif outcome.get("_unchanged"):
            result["unchanged"][slot] = outcome["key"]
        else:
            result["success"][slot] = outcome["key"]
            result["successful"][slot] = fake.wrap(lib, outcome, kind)
    if result["success"]:
        lib.version = new_version
    if token:
        fake.write_tokens.add(token)
    if fake.after_write:
        fake.after_write(fake, result)
    return 200, result, {"Last-Modified-Version": str(lib.version)}


def _check_library_version(h: _Handler, lib: Library) -> None:
    expected = h.headers.get("If-Unmodified-Since-Version")
    if expected is not None and int(expected) != lib.version:
        raise HttpError(412, f"Library has been modified since specified version "
                             f"(expected {expected}, found {lib.version})")


def _write_one(h: _Handler, lib: Library, kind: str, obj: Any, new_version: int) -> dict | tuple[int, str]:
    if not isinstance(obj, dict):
        return 400, "Object must be a JSON object"
    store = lib.items if kind == "items" else lib.collections
    key = obj.get("key")
    existing = store.get(key) if key else None
    if kind == "items" and h.fake.fail_objects:
        return h.fake.fail_objects.pop(0)
    if existing is not None:
        return _update_one(h, existing, obj, new_version)
    if int(obj.get("version") or 0) > 0:
        return 404, f"{kind[:-1].capitalize()} {key} doesn't exist"
    problem = _item_problem(h, lib, obj) if kind == "items" else _collection_problem(lib, obj)
    if problem:
        return problem
    key = key or h.fake.new_key()
    stamp = _now()
    if kind == "items":
        data = {"key": key, "version": new_version, "tags": [], "collections": [], "relations": {}, **obj}
        data.update(key=key, version=new_version, dateAdded=obj.get("dateAdded") or stamp,
                    dateModified=obj.get("dateModified") or stamp)
        if data.get("itemType") != "note":
            data.setdefault("creators", [])
    else:
        data = {"key": key, "version": new_version, "name": obj["name"],
                "parentCollection": obj.get("parentCollection") or False, "relations": obj.get("relations") or {}}
    store[key] = data
    if kind == "items":
        lib.created_by[key] = h.access.user_id
    return data


def _update_one(h: _Handler, existing: dict, obj: dict, new_version: int) -> dict | tuple[int, str]:
    header = h.headers.get("If-Unmodified-Since-Version")
    if "version" not in obj and header is None:
        return 428, "Either If-Unmodified-Since-Version or object version must be provided"
    if "version" in obj and int(obj["version"]) != existing["version"]:
        return 412, (f"Object has been modified since specified version "
                     f"(expected {obj['version']}, found {existing['version']})")
    changes = {k: v for k, v in obj.items() if k not in ("key", "version")}
    if "deleted" in changes:  # the dataserver: a boolean or 0/1; the item JSON says `deleted: 1` only when trashed
        if not isinstance(changes["deleted"], bool) and changes["deleted"] not in (0, 1):
            return 400, "'deleted' must be a boolean"
        changes["deleted"] = 1 if changes["deleted"] else None
    if all(existing.get(k) == v for k, v in changes.items()):
        return {"key": existing["key"], "_unchanged": True}
    if changes.get("itemType", existing.get("itemType")) != existing.get("itemType"):  # Zotero's item.setType:
        fields = h.fake.fields.get(changes["itemType"])  # the fields the new type lacks are dropped
        if fields is None:
            return 400, f"'itemType' is invalid: {changes['itemType']!r}"
        bad = [name for name in changes if name not in fields and name not in ALWAYS_ALLOWED]
        if bad:
            return 400, f"'{bad[0]}' is not a valid field for type '{changes['itemType']}'"
        for name in [n for n in existing if n not in fields and n not in ALWAYS_ALLOWED]:
            existing.pop(name)
    existing.update(changes, version=new_version, dateModified=_now())
    if existing.get("deleted") is None:
        existing.pop("deleted", None)
    return existing


def _item_problem(h: _Handler, lib: Library, obj: dict) -> tuple[int, str] | None:
    item_type = obj.get("itemType")
    fields = h.fake.fields.get(item_type or "")
    if fields is None:
        return 400, f"'itemType' is invalid: {item_type!r}"
    for name in obj:
        if name not in fields and name not in ALWAYS_ALLOWED:
            return 400, f"'{name}' is not a valid field for type '{item_type}'"
    if obj.get("parentItem") and obj["parentItem"] not in lib.items:
        return 400, f"Parent item {obj['parentItem']} doesn't exist"
    for collection in obj.get("collections") or []:
        if collection not in lib.collections:
            return 409, f"Collection {collection} doesn't exist"
    return None


def _collection_problem(lib: Library, obj: dict) -> tuple[int, str] | None:
    if not str(obj.get("name") or "").strip():
        return 400, "Collection name cannot be empty"
    parent = obj.get("parentCollection")
    if parent and parent not in lib.collections:
        return 409, f"Parent collection {parent} doesn't exist"
    return None


def _patch(h: _Handler, lib: Library, key: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
    existing = lib.items.get(key)
    if existing is None:
        raise HttpError(404, "Not found")
    body = json.loads(raw or b"{}")
    header = h.headers.get("If-Unmodified-Since-Version")
    expected = header if header is not None else body.get("version")
    if expected is None:
        raise HttpError(428, "If-Unmodified-Since-Version not provided")
    if int(expected) != existing["version"]:
        raise HttpError(412, f"Item has been modified since specified version "
                             f"(expected {expected}, found {existing['version']})")
    outcome = _update_one(h, existing, {**body, "version": existing["version"]}, lib.version + 1)
    if isinstance(outcome, dict) and not outcome.get("_unchanged"):
        lib.version += 1
    return 204, b"", {"Last-Modified-Version": str(lib.version)}
