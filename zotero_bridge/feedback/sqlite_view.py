"""zotero.sqlite's view of zotrec's recommendations, read-only (a private copy, as the library reader does).

The one zotero.sqlite reader (sources/sqlite.py `read_database`) gives every item as Zotero's item JSON; this
turns it into the fates' LibraryView — top-level items with trash, collections, tags and the fields a user
edits, their child notes, attachments and annotations — and, in a group library, which member saved each
item (`groupItems.createdByUserID`) for the group signal. Deletions are not visible here (an item missing
may simply not be synced yet), so a missing item keeps its last known fate.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from zotero_bridge.errors import SourceError
from zotero_bridge.feedback.fates import LibraryView, lift_children

PAPERLESS = ("note", "attachment", "annotation")  # child items and standalone files: not papers


@dataclass
class SqliteLibrary:
    """One library of a zotero.sqlite: its memory name, its view, and the group counts (group libraries)."""

    name: str
    label: str
    view: LibraryView
    members: dict[str, set[int]] = field(default_factory=dict)  # item key → users who created it (groups only)
    all_items: dict[str, dict] = field(default_factory=dict)  # every live top-level item (group libraries)
    me: int | None = None  # this computer's Zotero user id

    def saved_by_others(self) -> frozenset[str]:
        """Group items only other members created: candidates for this user, not items they own."""
        return frozenset(key for key, users in self.members.items() if users and self.me not in users)


def read_sqlite_view(path: Path, group: str | None) -> SqliteLibrary:
    """The view of the user library, or of `group` (id or name)."""
    from zotero_bridge.sources.sqlite import read_database
    from zotero_bridge.sources.sqlite_paths import open_snapshot

    with open_snapshot(path) as snapshot:
        try:
            library = read_database(snapshot.connection, path, group, warn=False)
        except sqlite3.DatabaseError as error:
            raise SourceError(f"{path}: could not read zotrec's items ({error})") from None
    top = {data["key"]: data for data in library.items if not data.get("parentItem")}
    view = LibraryView(items=top, children=lift_children([d for d in library.items if d.get("parentItem")]),
                       collections=library.paths)
    label = library.group_name or "My Library"
    result = SqliteLibrary(library.name, label, view, me=library.me)
    if library.name.startswith("group:"):
        papers = {key: data for key, data in top.items()
                  if not data.get("deleted") and data["itemType"] not in PAPERLESS}
        result.members = {key: {library.created_by[key]} for key in papers if key in library.created_by}
        result.all_items = papers
    return result
