"""Which library a memory belongs to: one key per library identity, whichever source reads it.

A zotero.org library is `user:<id>` or `group:<id>` (the Web API, a logged-in desktop and its zotero.sqlite
all name it so, and share its memory). A desktop database with no zotero.org account is "user 0" to the
local API on every computer, so its identity is its Zotero-Server-ID: `local:<server id>`. A second
database (another computer, a new profile, a restored copy) is a new library with a memory of its own,
never the first one's. History written before this rule named such a database `user:0`; the first run
that can show the database is the one it wrote (its collection or items are there) takes it over.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping

log = logging.getLogger(__name__)

LEGACY_LOCAL = "user:0"  # how history from before per-database identities named an unaccounted desktop
TABLES_WITH_LIBRARY = ("runs", "papers", "group_state", "group_members", "ratings")


def library_identity(library_type: str, library_id: str | int, server_id: str | None = None) -> str:
    """The memory's key for a library: 'user:123', 'group:456', or 'local:<Zotero-Server-ID>' for a desktop
    library with no zotero.org account (user 0) when the server id is known (the local API tells it)."""
    kind = "group" if str(library_type).rstrip("s") == "group" else "user"
    number = str(library_id).strip() or "0"
    if kind == "user" and number == "0" and server_id:
        return f"local:{server_id}"
    return f"{kind}:{number}"


def legacy_history(db: sqlite3.Connection, identity: str, collections: Mapping[str, object],
                   items: Mapping[str, object]) -> str | None:
    """`user:0` when `identity` (a desktop database) has no history and the history kept as `user:0` was
    written in this database (the collection zotrec made there, or one of its items, is in this library)."""
    if not identity.startswith("local:"):
        return None
    if db.execute("SELECT 1 FROM papers WHERE library = ? LIMIT 1", (identity,)).fetchone():
        return None
    rows = db.execute("SELECT item_key, collection_key FROM papers WHERE library = ?", (LEGACY_LOCAL,)).fetchall()
    if rows and any(key in items or collection in collections for key, collection in rows):
        return LEGACY_LOCAL
    return None


def desktop_history(db: sqlite3.Connection, items: Mapping[str, object]) -> str | None:
    """For a zotero.sqlite with no account ('user:0': the database does not tell its Zotero-Server-ID), the
    `local:<server id>` history whose papers are in it (the most of its item keys), so reading-list and score
    find what sync learned through the local API."""
    counts: dict[str, int] = {}
    for library, key in db.execute("SELECT library, item_key FROM papers WHERE library LIKE 'local:%'"):
        counts[library] = counts.get(library, 0) + (key in items)
    found = [(count, library) for library, count in counts.items() if count]
    return max(found)[1] if found else None


def move_history(db: sqlite3.Connection, old: str, identity: str) -> None:
    """Keep `old`'s runs, papers and group state as `identity`'s, in one transaction (nothing is lost)."""
    with db:
        for table in TABLES_WITH_LIBRARY:
            db.execute(f"UPDATE {table} SET library = ? WHERE library = ?", (identity, old))
    log.info("zotrec's history of this desktop library (kept as '%s') is now kept as %s.", old, identity)


def say_if_new(db: sqlite3.Connection, identity: str, describe: str) -> bool:
    """One line when `identity` has no history but another library does (a new database, a new account):
    its recommendations start afresh. True when it is new."""
    if db.execute("SELECT 1 FROM runs WHERE library = ? LIMIT 1", (identity,)).fetchone():
        return False
    others = [name for (name,) in db.execute("SELECT DISTINCT library FROM runs WHERE library != ?", (identity,))]
    if others:
        log.warning("%s is a library zotrec has not synced before (%s): its history starts here; what you did "
                    "with recommendations in %s stays with %s.", describe[0].upper() + describe[1:], identity,
                    "another library" if len(others) == 1 else "other libraries", ", ".join(sorted(others)[:3]))
    return True
