"""`--library zotero:local[:URL]`: read the running Zotero desktop (7 or later) through its local API.

No API key: Zotero answers on http://localhost:23119/api once the user ticks "Allow other applications on
this computer to communicate with Zotero" (Settings → Advanced). Items go through the same
`item_from_zotero_json` as the Web API and zotero.sqlite, so every source gives the same LibraryItem.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from recommender.items import LibraryItem
from recommender.words import plural
from zotero_bridge.errors import SourceError
from zotero_bridge.sources.base import LibraryRead, SourceOptions
from zotero_bridge.sources.zotero_json import item_from_zotero_json
from zotero_bridge.zotero_api.collection_path import collection_paths

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "http://localhost:23119/api"
LOCAL_USER_ID = "0"  # the local API's name for "the logged-in user"
SWITCH_ON_HINT = ("in Zotero open Settings → Advanced and tick 'Allow other applications on this computer "
                  "to communicate with Zotero', or read the database instead: --library zotero:sqlite")
# Type-specific fields the API shows under their own name; zotero.sqlite maps them to base fields.
T = TypeVar("T")


def read_local_library(argument: str, options: SourceOptions) -> LibraryRead:
    """Every top-level item of My Library (or `options.group`) in the running Zotero desktop app."""
    endpoint = (argument or DEFAULT_ENDPOINT).rstrip("/")
    client = _client(endpoint, LOCAL_USER_ID, "user")
    library_type, library_id = "user", LOCAL_USER_ID
    if options.group and options.group.strip().casefold() not in ("user", "my library"):
        library_type, library_id = "group", _group_id(client, endpoint, options.group.strip())
        client = _client(endpoint, library_id, "group")
    collections = every_page_of(client, endpoint, "reading collections", client.collections)
    rows = every_page_of(client, endpoint, "reading items", client.top)
    paths = collection_paths({row["key"]: row.get("data", row) for row in collections
                              if isinstance(row, dict) and "key" in row})
    label = f"{library_type} library {library_id}"
    read = LibraryRead(sources=[f"zotero:local ({endpoint})"], stats={"zotero:local library": label})
    for row in rows:
        data = row.get("data", row) if isinstance(row, dict) else {}
        kept = [key for key in data.get("collections") or [] if key in paths]
        data = {**data, "collections": kept}
        converted = item_from_zotero_json(data, where=f"zotero:local: {data.get('key', '?')}",
                                          collection_paths=paths, library=label)
        (read.items if isinstance(converted, LibraryItem) else read.skipped).append(converted)
    log.info("Read %s from the running Zotero (%s, %s)", plural(len(read.items), "item"), endpoint, label)
    return read


def _objects(endpoint: str, answer: Any) -> list[dict]:
    """Zotero API objects, or one clear error: an HTML page or other JSON is not 46 skipped 'items'."""
    if not isinstance(answer, list) or not all(isinstance(row, dict) and isinstance(row.get("data", row), dict)
                                               for row in answer):
        raise SourceError(f"{endpoint} answered, but not with Zotero API data ({type(answer).__name__}); is this "
                          "Zotero 7's local API? Else read the database instead: --library zotero:sqlite")
    return answer


def _client(endpoint: str, library_id: str, library_type: str) -> Any:
    """pyzotero in local mode on the bounded client (recommender/bounded_http.py)."""
    from zotero_bridge.zotero_api.paging import make_zotero

    return make_zotero(library_id, library_type, local=True, endpoint=endpoint)


def every_page_of(client: Any, endpoint: str, what: str, first: Callable[[], Any]) -> list[dict]:
    """Every page of one listing as Zotero API objects, bounded (zotero_api/paging.py)."""
    from zotero_bridge.zotero_api.paging import every_page

    def run(request: Callable[[], Any]) -> Any:
        return _call(endpoint, request)

    def check(page: Any) -> list[dict]:
        return _objects(endpoint, page)

    return every_page(client, what, check(run(first)), run=run, check=check)


def _group_id(client: Any, endpoint: str, group: str) -> str:
    """A group's id from its id or its name, as the local API lists the groups on this computer."""
    if group.isdigit():
        return group
    groups = _call(endpoint, client.groups)
    for row in groups:
        data = row.get("data", row) if isinstance(row, dict) else {}
        if str(data.get("name", "")).casefold() == group.casefold():
            return str(data.get("id") or row.get("id"))
    names = ", ".join(f"{g.get('data', g).get('name')} ({g.get('id')})"
                      for g in groups if isinstance(g, dict))
    raise SourceError(f"no group library '{group}' in the running Zotero "
                      + (f"(groups here: {names})" if names else "(it has no group libraries)"))


def _call(endpoint: str, request: Callable[[], T]) -> T:
    """Run one pyzotero request; turn what can go wrong into one line a user can act on."""
    import httpx2
    from pyzotero import errors

    try:
        return request()
    except httpx2.TransportError:
        raise SourceError(f"Zotero is not running, or is older than Zotero 7 (nothing answers at "
                          f"{endpoint}); start Zotero, or read its database instead: --library zotero:sqlite"
                          ) from None
    except errors.UserNotAuthorisedError:
        raise SourceError(f"Zotero's local API is switched off (403 from {endpoint}): {SWITCH_ON_HINT}"
                          ) from None
    except errors.ResourceNotFoundError:
        raise SourceError(f"the Zotero at {endpoint} has no such library (404); the local API needs Zotero 7 "
                          "or later, and a group must be synced to this computer") from None
    except errors.PyZoteroError as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise SourceError(f"Zotero's local API at {endpoint} failed: {first_line}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as error:  # pyzotero choking on a non-Zotero answer
        raise SourceError(f"{endpoint} answered, but not with Zotero API data ({type(error).__name__}); is this "
                          "Zotero 7's local API? Else read the database instead: --library zotero:sqlite") from None
