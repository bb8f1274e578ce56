"""A whole-library read that is one consistent snapshot, whatever happened while it paged.

Pages (`start` / `Link: rel="next"`) are no snapshot: an item the user edits between two pages moves in the
server's dateModified order and is read twice or not at all, and a page can come back short or empty. So
after the pages zotrec asks for every key and version in one answer (`format=versions`, never paged) and
reads by key whatever the pages missed, held at another version, or held but the answer lacks; the read
is done only when a versions answer agrees with what was read, at that answer's library version. Items and
collections must agree at the same version. A library that keeps changing (or answers that never agree)
is one line after MAX_ROUNDS, and nothing is concluded from it: a short page is a retry, never a deletion.
Used by the local API's read on every sync and by the Web API's first (full) read. The desktop's local API
answers `format=versions` with each object's synced version (Zotero's server_localAPI.js), so there an edit not
yet synced is caught by the key set (the item moved across pages: missed, or read twice) rather than by its
version; a write after the read still carries If-Unmodified-Since-Version (412 → read and plan again).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zotero_bridge.errors import SourceError

log = logging.getLogger(__name__)

MAX_ROUNDS = 4
KEYS_PER_REQUEST = 50


@dataclass(frozen=True)
class Listing:
    """How to read one kind of object: `what` (for messages), `pages()` every page as one list (it makes its
    own requests), `versions()` {key: version} in one request, `by_keys(keys)` ≤50 objects by key in one
    request (None: read every page again)."""

    what: str
    pages: Callable[[], list]
    versions: Callable[[], Any]
    by_keys: Callable[[list[str]], list] | None = None


class Inconsistent(SourceError):
    """The library's answers never agreed: nothing may be concluded from this read."""


def read_consistent(session: Any, items: Listing, collections: Listing,
                    check: Callable[[str, Any], list[dict]]) -> tuple[list[dict], list[dict], int]:
    """(item data, collection data, the library version they agree at). `check(what, answer)` turns an
    answer into Zotero objects or raises the transport's one-line error."""
    held_items: dict[str, dict] = _keyed(check(items.what, items.pages()))
    held_collections: dict[str, dict] = _keyed(check(collections.what, collections.pages()))
    for _ in range(MAX_ROUNDS):
        item_version = _agree(session, items, held_items, check)
        collection_version = _agree(session, collections, held_collections, check)
        if item_version is not None and item_version == collection_version:
            return ([o["data"] for o in held_items.values()], [o["data"] for o in held_collections.values()],
                    item_version)
    raise Inconsistent(f"{session.credentials.describe()} kept changing (or answered pages that did not add up) "
                       f"while zotrec read it, {MAX_ROUNDS} times; nothing was concluded or written: run it again")


def _agree(session: Any, listing: Listing, held: dict[str, dict], check) -> int | None:
    """One round: ask the versions; when they match `held`, their library version; else fix `held` from
    the server (by key, or every page again) and None."""
    truth = session.call(listing.what, listing.versions)
    version = session.last_version
    if not isinstance(truth, dict) or not all(isinstance(k, str) and isinstance(v, int) for k, v in truth.items()):
        raise SourceError(f"{session.credentials.describe()} answered {listing.what} (versions) with something "
                          "that is not Zotero API data")
    stale = sorted(key for key, v in truth.items() if key not in held or _version(held[key]) != v)
    extra = sorted(set(held) - set(truth))
    if not stale and not extra and version is not None:
        return int(version)
    log.info("The library changed (or a page came back short) while zotrec read %s: %d to read again, %d gone; "
             "reading them again.", listing.what.removeprefix("reading "), len(stale), len(extra))
    if listing.by_keys is None:
        held.clear()
        held.update(_keyed(check(listing.what, listing.pages())))
        return None
    for key in extra:
        held.pop(key)
    wanted = stale + extra
    for start in range(0, len(wanted), KEYS_PER_REQUEST):
        batch = wanted[start:start + KEYS_PER_REQUEST]
        held.update(_keyed(check(listing.what, session.call(listing.what, listing.by_keys, batch))))
    return None


def _keyed(objects: list[dict]) -> dict[str, dict]:
    """key → object; an object read twice (it moved between pages) counts once, at its newer version."""
    found: dict[str, dict] = {}
    for obj in objects:
        data = obj.get("data", obj)
        if not isinstance(data, dict) or not isinstance(data.get("key"), str):
            continue  # not an object of this library (the transport's check let it through): not held
        obj = {"data": data, "version": obj.get("version", data.get("version"))}
        key = data["key"]
        if key not in found or _version(obj) >= _version(found[key]):
            found[key] = obj
    return found


def _version(obj: dict) -> int:
    value = obj["version"]
    return int(value) if isinstance(value, int) or (isinstance(value, str) and value.isdigit()) else -1
