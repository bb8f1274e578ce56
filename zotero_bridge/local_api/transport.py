"""`zotrec sync --library zotero:local[:URL]`: how the one sync plan reaches the desktop (web/sync.py
`Transport`).

`open` gives a LocalSession and the sync cache of this database (partitioned by Zotero-Server-ID: local
versions mean nothing in another database); `snapshot` reads the whole library each run, trash included, as
one consistent snapshot, and stores it in that cache, so the plan sees the desktop exactly as the Web API path
sees a synced library.
"""

from __future__ import annotations

import logging
from typing import Any

from recommender.words import plural
from zotero_bridge.local_api.session import LocalSession
from zotero_bridge.sources.base import SourceOptions

log = logging.getLogger(__name__)

PAGE_SIZE = 100


def open_local(endpoint: str, options: SourceOptions) -> tuple[LocalSession, Any]:
    """The session (Zotero found, server id known, library chosen) and its cache."""
    from zotero_bridge.zotero_api.cache import WebCache, cache_path

    session = LocalSession(endpoint, options)
    try:
        library_type, path_id = "user", "0"
        if options.group and options.group.strip().casefold() not in ("user", "my library"):
            from zotero_bridge.sources.local import _group_id

            library_type, path_id = "group", _group_id(session.zot, session.endpoint, options.group.strip())
        session.use_library(library_type, path_id)
    except BaseException:
        session.close()
        raise
    target = session.credentials
    cache = WebCache(cache_path(f"zotero-local:{target.server_id}", target.library_type, target.path_id,
                                options.cache_dir))
    return session, cache


def _every_page(session: LocalSession, what: str, first: Any) -> list[dict]:
    """Every page of one listing, bounded (zotero_api/paging.py: Total-Results, next-link loops, the page cap)."""
    from zotero_bridge.sources.local import _objects
    from zotero_bridge.zotero_api.paging import every_page

    def run(request: Any) -> Any:
        return session.call(what, request)

    def check(page: Any) -> list[dict]:
        return _objects(session.endpoint, page)

    return every_page(session.zot, what, check(run(first)), run=run, check=check)


def read_snapshot(session: LocalSession, cache: Any):
    """Every top-level item (trash flagged) and collection, as one consistent Snapshot at the library's local
    version (zotero_api/consistent.py: edits between pages and short pages are read again, never concluded)."""
    from zotero_bridge.sources.local import _objects
    from zotero_bridge.zotero_api.consistent import Listing, read_consistent
    from zotero_bridge.zotero_api.snapshot import Snapshot

    zot = session.zot
    items = Listing("reading items", lambda: _every_page(session, "reading items",  # bounded paging (paging.py)
                                                        lambda: zot.top(limit=PAGE_SIZE, includeTrashed=1)),
                    lambda: zot.top(format="versions", includeTrashed=1, limit=None),
                    lambda keys: zot.items(itemKey=",".join(keys), includeTrashed=1, limit=len(keys)))
    collections = Listing("reading collections", lambda: _every_page(session, "reading collections",
                                                                    lambda: zot.collections(limit=PAGE_SIZE)),
                          lambda: zot.collections(format="versions", limit=None))
    rows, folders, version = read_consistent(session, items, collections,
                                             lambda what, answer: _objects(session.endpoint, answer))
    for data in rows:
        if data.get("deleted") is True:  # Zotero's item.toJSON writes true where the Web API sends 1
            data["deleted"] = 1
    cache.replace_all(rows, folders, version)
    log.info("Read %s and %s from the desktop (local version %d).", plural(len(rows), "item"),
             plural(len(folders), "collection"), version)
    return Snapshot(version, cache.items(), cache.collections(), full_read=True, fetched=len(rows))
