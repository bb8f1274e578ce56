"""The library as the Web API cache holds it (`Snapshot`), and the read that brings the cache up to the
server's library version.

The first read pages through `/items/top` and `/collections` (100 per request) and checks the pages against
every key's version (zotero_api/consistent.py), so it is one snapshot. Later reads ask only what
changed since the cached library version: `/items/top?since=V&format=versions` (one request, and the only one
when nothing changed), the changed items in batches of 50, `/collections?since=V` and `/deleted?since=V`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from recommender.words import plural
from zotero_bridge.errors import SourceError
from zotero_bridge.zotero_api.cache import WebCache
from zotero_bridge.zotero_api.client import WebSession
from zotero_bridge.zotero_api.collection_path import collection_paths
from zotero_bridge.zotero_api.paging import every_page

log = logging.getLogger(__name__)

PAGE_SIZE = 100
KEYS_PER_REQUEST = 50
MAX_SYNC_ROUNDS = 3
PROGRESS_EVERY_PAGES = 10


@dataclass
class Snapshot:
    """The library as of `version`: top-level item data (trash flagged) and collection data, by key."""

    version: int
    items: dict[str, dict] = field(default_factory=dict)
    collections: dict[str, dict] = field(default_factory=dict)
    full_read: bool = False
    fetched: int = 0

    def collection_paths(self) -> dict[str, str]:
        """key → 'Parent/Child' for every collection not in the trash."""
        return collection_paths(self.collections)


def sync_snapshot(session: WebSession, cache: WebCache) -> Snapshot:
    """Bring the cache up to the server's library version and return what it now holds."""
    for _ in range(MAX_SYNC_ROUNDS):
        since = cache.library_version
        if since == 0:
            snapshot = _full_read(session, cache)
        else:
            snapshot = _incremental_read(session, cache, since)
        if snapshot is not None:
            return snapshot
    raise SourceError(f"{session.credentials.describe()} kept changing while zotrec read it; try again")


def _objects(session: WebSession, what: str, answer: Any) -> list[dict]:
    """A page of Zotero objects, each {'key', 'data': {…}}; anything else (an HTML page, a proxy's error
    text, JSON of another shape) is one clear error, never a traceback or one 'item' per character."""
    if not isinstance(answer, list) or not all(
            isinstance(o, dict) and isinstance(o.get("data"), dict) and isinstance(o["data"].get("key"), str)
            for o in answer):
        raise SourceError(f"{session.credentials.endpoint} answered {what} with something that is not Zotero "
                          f"API data ({type(answer).__name__}); is --endpoint the Zotero Web API?")
    return answer


def _all_pages(session: WebSession, what: str, first: Callable[[], list]) -> tuple[list[dict], int]:
    """Every page of a read (bounded: zotero_api/paging.py), and the library version the first page
    reported (a safe sync point)."""
    objects = _objects(session, what, session.call(what, first))
    version = session.last_version or 0

    def progress(pages: int, total: int | None) -> None:
        if pages % PROGRESS_EVERY_PAGES == 0:
            log.info("…%s: %d pages of %s", what, pages, f"{total:,} objects" if total is not None else "?")

    objects = every_page(session.zot, what, objects, run=lambda request: session.call(what, request),
                         check=lambda page: _objects(session, what, page), progress=progress)
    return objects, version


def _full_read(session: WebSession, cache: WebCache) -> Snapshot | None:
    """Every page, then checked against the versions in one answer (consistent.py): a first read is one
    snapshot even when the user works in Zotero meanwhile or a page comes back short."""
    from zotero_bridge.zotero_api.consistent import Listing, read_consistent

    zot = session.zot
    log.info("Reading %s from Zotero (first time: everything)…", session.credentials.describe())
    def item_pages() -> list[dict]:
        return _all_pages(session, "reading items", lambda: zot.top(limit=PAGE_SIZE, includeTrashed=1))[0]

    def collection_pages() -> list[dict]:
        return _all_pages(session, "reading collections", lambda: zot.collections(limit=PAGE_SIZE))[0]

    items = Listing("reading items", item_pages, lambda: zot.top(format="versions", includeTrashed=1, limit=None),
                    lambda keys: zot.items(itemKey=",".join(keys), includeTrashed=1, limit=KEYS_PER_REQUEST))
    collections = Listing("reading collections", collection_pages,
                          lambda: zot.collections(format="versions", limit=None))
    rows, folders, version = read_consistent(session, items, collections,
                                             lambda what, answer: _objects(session, what, answer))
    cache.replace_all(rows, folders, version)
    log.info("Read %s and %s (library version %d).", plural(len(rows), "item"), plural(len(folders), "collection"),
             version)
    return Snapshot(version, cache.items(), cache.collections(), full_read=True, fetched=len(rows))


def _incremental_read(session: WebSession, cache: WebCache, since: int) -> Snapshot | None:
    zot = session.zot
    changed = session.call("checking for changes", lambda: zot.top(since=since, format="versions",
                                                                     includeTrashed=1, limit=None))
    version = session.last_version or since
    if version == since:
        log.info("%s is unchanged since the last read (version %d).", session.credentials.describe(), since)
        return Snapshot(since, cache.items(), cache.collections())
    if not isinstance(changed, dict) or not all(isinstance(k, str) for k in changed):
        raise SourceError(f"{session.credentials.endpoint} answered 'checking for changes' with something that is "
                          "not Zotero API data; is --endpoint the Zotero Web API?")
    keys = sorted(changed)
    items: list[dict] = []
    for start in range(0, len(keys), KEYS_PER_REQUEST):
        batch = ",".join(keys[start:start + KEYS_PER_REQUEST])
        items.extend(_objects(session, "reading changed items", session.call(
            "reading changed items", lambda b=batch: zot.items(itemKey=b, includeTrashed=1, limit=KEYS_PER_REQUEST))))
    if missing := set(keys) - {o["data"]["key"] for o in items}:  # a short answer, or deleted meanwhile: again
        log.info("%s of the changed items did not come back; reading the changes again.", plural(len(missing), "item"))
        return None
    collections, _ = _all_pages(session, "reading changed collections",
                             lambda: zot.collections(since=since, limit=PAGE_SIZE))
    deleted: Any = session.call("reading deletions", lambda: zot.deleted(since=since))
    if not isinstance(deleted, dict) or not all(isinstance(deleted.get(k, []), list)
                                                for k in ("items", "collections")):
        raise SourceError(f"{session.credentials.endpoint} answered 'reading deletions' with something that is "
                          "not Zotero API data; is --endpoint the Zotero Web API?")
    cache.apply_changes([o["data"] for o in items], [o["data"] for o in collections],
                        deleted.get("items", []), deleted.get("collections", []), version)
    log.info("Updated %s, %s, %s (library version %d → %d).", plural(len(items), "item"),
             plural(len(collections), "collection"),
             plural(len(deleted.get("items", [])) + len(deleted.get("collections", [])), "deletion"), since, version)
    return Snapshot(version, cache.items(), cache.collections(), fetched=len(items))
