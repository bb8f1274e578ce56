"""The Web API's view of a library for reading fates: the synced snapshot plus the child items that changed.

Children (notes, attachments, annotations) are not in the incremental cache, and adding one does not change
its parent's version, so when the library moved since the last run zotrec asks once for every item changed
since then (`/items?since=V`, paged) and keeps the children of the papers it remembers. An unchanged library
costs nothing more. Only reads: nothing is written to learn a fate.

A paper zotrec remembers that the read does not hold is deleted only on the API's word: asked for by key
(`/items/KEY`, trash included) it answers 404. Anything else (an answer, an error) leaves its last fate.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from zotero_bridge.errors import BridgeError
from zotero_bridge.feedback.fates import LibraryView, lift_children
from zotero_bridge.zotero_api.client import WebSession
from zotero_bridge.zotero_api.snapshot import Snapshot

log = logging.getLogger(__name__)

PAGE_SIZE = 100
KEYS_PER_REQUEST = 50
MAX_DELETION_CHECKS = 50  # requests a run spends asking after missing papers; the rest are asked next run


def web_view(session: WebSession, snapshot: Snapshot, since: int, parents: Iterable[str],
             unsure: Iterable[str] = ()) -> LibraryView:
    """The library as the Web API shows it now; `since` is the library version of the previous read;
    `unsure`: keys of remembered papers not yet known to be dismissed (asked after when the read lacks them)."""
    wanted = set(parents)
    children: dict = {}
    if wanted and since and snapshot.version != since:
        rows = _changed_items(session, since)
        missing = sorted({str(r.get("parentItem")) for r in rows if r.get("itemType") == "annotation"}
                         - {str(r.get("key")) for r in rows})
        rows += _items_by_key(session, missing)
        children = {key: found for key, found in lift_children(rows).items() if key in wanted}
    missing = sorted(set(unsure) - set(snapshot.items))
    return LibraryView(items=snapshot.items, children=children, collections=snapshot.collection_paths(),
                       deleted=deleted_for_good(session, missing))


def deleted_for_good(session: WebSession, keys: list[str]) -> frozenset[str]:
    """Of `keys`, those the API says are gone: `GET /items/KEY` answers 404 (the trash still answers)."""
    from pyzotero import errors

    if len(keys) > MAX_DELETION_CHECKS:
        log.info("%d of zotrec's papers were not in the read; asking after %d now, the rest next run.",
                 len(keys), MAX_DELETION_CHECKS)
    zot, gone = session.zot, set()
    for key in keys[:MAX_DELETION_CHECKS]:
        def absent(k: str = key) -> bool:
            try:
                zot.item(k)
            except errors.ResourceNotFoundError:
                return True
            return False

        try:
            if session.call("asking after a missing paper", absent):
                gone.add(key)
        except BridgeError as error:  # no word from the API: the paper keeps its last fate
            log.info("Could not ask Zotero after item %s (%s); it keeps its last fate.", key, error)
    return frozenset(gone)


def _changed_items(session: WebSession, since: int) -> list[dict]:
    from zotero_bridge.zotero_api.paging import every_page, listing

    zot, what = session.zot, "reading changed notes and attachments"
    check = listing(session.credentials.endpoint, what)
    objects = every_page(zot, what, check(session.call(what, lambda: zot.items(since=since, limit=PAGE_SIZE))),
                         run=lambda request: session.call(what, request), check=check)
    return [o["data"] for o in objects if isinstance(o, dict) and isinstance(o.get("data"), dict)]


def _items_by_key(session: WebSession, keys: list[str]) -> list[dict]:
    """The attachments that hold new annotations, so each annotation counts for its top-level paper."""
    zot, rows = session.zot, []
    for start in range(0, len(keys), KEYS_PER_REQUEST):
        batch = ",".join(keys[start:start + KEYS_PER_REQUEST])
        found = session.call("reading annotated attachments",
                             lambda b=batch: zot.items(itemKey=b, limit=KEYS_PER_REQUEST))
        rows += [o["data"] for o in found if isinstance(o, dict) and isinstance(o.get("data"), dict)]
    return rows
