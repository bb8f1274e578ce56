"""The running Zotero desktop's view of zotrec's recommendations, through its local API (read-only, no key).

Every item (children included), the trash and the collections, as pyzotero reads them from
http://localhost:23119/api; the library is named as sync names it (feedback/identity.py: the items' own
`library` field, and the Zotero-Server-ID for a desktop with no account), so the memory `sync` wrote is found.
Deletions are not visible here: a missing item keeps its last known fate.
"""

from __future__ import annotations

from typing import Any

from zotero_bridge.errors import SourceError
from zotero_bridge.feedback.fates import LibraryView, lift_children
from zotero_bridge.feedback.identity import library_identity
from zotero_bridge.feedback.sqlite_view import SqliteLibrary
from zotero_bridge.zotero_api.collection_path import collection_paths

DEFAULT_ENDPOINT = "http://localhost:23119/api"


def read_local_view(endpoint: str, group: str | None) -> SqliteLibrary:
    from zotero_bridge.sources.local import _client, every_page_of

    endpoint = (endpoint or DEFAULT_ENDPOINT).rstrip("/")
    library_type, library_id = ("group", group.strip()) if group and group.strip().isdigit() else ("user", "0")
    client = _client(endpoint, library_id, library_type)
    try:
        rows = every_page_of(client, endpoint, "reading items", client.items)
        trash = every_page_of(client, endpoint, "reading the trash", client.trash)
        collections = every_page_of(client, endpoint, "reading collections", client.collections)
    except Exception as error:  # pyzotero and httpx errors alike: one line, the list is still made
        raise SourceError(f"could not read zotrec's items from the local API at {endpoint}: "
                          f"{str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__}"
                          ) from None
    data = [_data(row) for row in rows] + [{**_data(row), "deleted": 1} for row in trash]
    items = {d["key"]: d for d in data if d.get("key") and not d.get("parentItem")}
    owner = next((row.get("library") for row in rows + trash if isinstance(row, dict) and row.get("library")), {})
    name = library_identity(owner.get("type", library_type), owner.get("id", library_id), _server_id(client))
    paths = collection_paths({c["key"]: _data(c) for c in collections if isinstance(c, dict) and c.get("key")})
    view = LibraryView(items=items, children=lift_children([d for d in data if d.get("parentItem")]),
                       collections=paths)
    return SqliteLibrary(name, f"{library_type} library {library_id} (local API)", view)


def _server_id(client: Any) -> str | None:
    """This database's Zotero-Server-ID (Zotero 10 sends it on every answer; 7–9 have none)."""
    request = client.request  # pyzotero keeps the last answer
    return request.headers.get("Zotero-Server-ID") if request is not None else None


def _data(row: Any) -> dict:
    return dict(row.get("data", row)) if isinstance(row, dict) else {}
