"""The group signal through the Web API: which member created each item of a group library.

The Web API shows it in each item's `meta.createdByUser` = {id, username, name, links.alternate}, in group
libraries only (the dataserver's Zotero_Users::toJSON; the id may come as a number or a digit string, both are
read). The sync cache keeps only `data`, so zotrec keeps
its own list in the memory and brings it up to date like the cache: nothing when the library version did not
move, else one paged `/items/top?since=V`. The key's own user id (`/keys/current`, asked once) tells the
user's own items from the other members'.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from zotero_bridge.feedback.memory import Memory
from zotero_bridge.zotero_api.client import WebSession
from zotero_bridge.zotero_api.snapshot import Snapshot

log = logging.getLogger(__name__)
PAGE_SIZE = 100


def group_creators(session: WebSession, memory: Memory, library: str, snapshot: Snapshot
                   ) -> tuple[dict[str, int], int | None, str]:
    """(item key → the member who created it, this key's user id, the group's name)."""
    version, me, name = memory.group_state(library)
    if version == snapshot.version and me is not None:
        return memory.group_members(library), me, name
    if me is None:
        me = _my_user_id(session)
    zot = session.zot
    kwargs = {"since": version} if version else {}
    from zotero_bridge.zotero_api.paging import every_page, listing

    what = "reading who saved what"
    check = listing(session.credentials.endpoint, what)
    rows = every_page(zot, what, check(session.call(what, lambda: zot.top(limit=PAGE_SIZE, **kwargs))),
                      run=lambda request: session.call(what, request), check=check)
    created = {}
    for row in rows:
        user = (row.get("meta") or {}).get("createdByUser") if isinstance(row, Mapping) else None
        if isinstance(user, Mapping) and str(user.get("id", "")).isdigit():
            created[str(row["key"])] = int(user["id"])
        name = name or str(((row.get("library") or {}) if isinstance(row, Mapping) else {}).get("name") or "")
    memory.store_group(library, snapshot.version, me, name, created, set(snapshot.items))
    return memory.group_members(library), me, name


def _my_user_id(session: WebSession) -> int | None:
    creds = session.credentials
    url = f"{creds.endpoint}/keys/current"
    response = session.call("reading the key's user", lambda: session.zot.client.get(
        url, headers=session.zot.default_headers()))
    try:
        user = response.json().get("userID") if response.status_code < 300 else None
    except ValueError:
        user = None
    return int(user) if str(user or "").isdigit() else None
