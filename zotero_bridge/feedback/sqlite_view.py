"""zotero.sqlite's view of zotrec's recommendations, read-only (a private copy, as the library reader does).

It looks at the items zotrec created (the `zotrec` tag, or a key the memory holds): trash, collections, tags,
the fields a user edits, child notes, attachments and annotations, and, in a group library, which member
saved each item (`groupItems.createdByUserID`) for the group signal. Deletions are not visible here (an
item missing may simply not be synced yet), so a missing item keeps its last known fate.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from zotero_bridge.errors import SourceError
from zotero_bridge.feedback.fates import ZOTREC_TAG, LibraryView
from zotero_bridge.zotero_api.collection_path import join_path

FIELDS = ("title", "abstractNote", "DOI", "url", "extra")


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


def read_sqlite_view(path: Path, group: str | None, keys: Iterable[str] = ()) -> SqliteLibrary:
    """The view of zotrec's items (and `keys`) in the user library, or in `group` (id or name)."""
    from zotero_bridge.sources.sqlite_paths import open_snapshot

    with open_snapshot(path) as snapshot:
        try:
            return _read(snapshot.connection, path, group, set(keys))
        except sqlite3.DatabaseError as error:
            raise SourceError(f"{path}: could not read zotrec's items ({error})") from None


def _read(db: sqlite3.Connection, path: Path, group: str | None, keys: set[str]) -> SqliteLibrary:
    library_id, name, label = _library(db, path, group)
    collections = _collection_paths(db, library_id)
    tagged = {key for (key,) in db.execute(
        "SELECT i.key FROM items i JOIN itemTags it ON it.itemID = i.itemID JOIN tags t ON t.tagID = it.tagID "
        "WHERE i.libraryID = ? AND t.name = ?", (library_id, ZOTREC_TAG))}
    wanted = tagged | keys
    rows = db.execute("SELECT i.itemID, i.key, it.typeName, i.itemID IN (SELECT itemID FROM deletedItems) "
                      "FROM items i JOIN itemTypes it ON it.itemTypeID = i.itemTypeID WHERE i.libraryID = ?",
                      (library_id,)).fetchall()
    ids = {item_id: key for item_id, key, _, _ in rows}
    items: dict[str, dict] = {}
    for item_id, key, type_name, trashed in rows:
        if key in wanted:
            items[key] = {"key": key, "itemType": type_name, "deleted": 1 if trashed else 0, "_id": item_id}
    by_id = {data["_id"]: data for data in items.values()}
    _fill(db, by_id, collections)
    children = _children(db, by_id, ids)
    view = LibraryView(items={k: {n: v for n, v in d.items() if n != "_id"} for k, d in items.items()},
                       children=children, collections=collections)
    user = db.execute("SELECT value FROM settings WHERE setting = 'account' AND key = 'userID'").fetchone()
    result = SqliteLibrary(name, label, view, me=int(user[0]) if user and str(user[0]).isdigit() else None)
    if name.startswith("group:"):
        result.members, result.all_items = _group_members(db, library_id)
    return result


def _library(db: sqlite3.Connection, path: Path, group: str | None) -> tuple[int, str, str]:
    """(libraryID, 'user:ID' or 'group:ID', a label) of the library asked for."""
    if group and group.strip().casefold() not in ("user", "my library"):
        for library_id, group_id, group_name in db.execute("SELECT libraryID, groupID, name FROM groups"):
            if group.strip() == str(group_id) or group.strip().casefold() == str(group_name).casefold():
                return int(library_id), f"group:{group_id}", str(group_name)
        raise SourceError(f"{path}: no group library '{group}'")
    row = db.execute("SELECT libraryID FROM libraries WHERE type = 'user' ORDER BY libraryID").fetchone()
    if row is None:
        raise SourceError(f"{path}: no user library in this Zotero database")
    user = db.execute("SELECT value FROM settings WHERE setting = 'account' AND key = 'userID'").fetchone()
    return int(row[0]), f"user:{user[0] if user else 0}", "My Library"


def _collection_paths(db: sqlite3.Connection, library_id: int) -> dict[str, str]:
    trashed = {cid for (cid,) in db.execute("SELECT collectionID FROM deletedCollections")} if db.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'deletedCollections'").fetchone() else set()
    rows = {cid: (key, name, parent) for cid, key, name, parent in db.execute(
        "SELECT collectionID, key, collectionName, parentCollectionID FROM collections WHERE libraryID = ?",
        (library_id,))}
    def path_of(cid: int | None) -> str | None:
        names, seen = [], set()
        while cid is not None:
            if cid in trashed or cid in seen or cid not in rows:
                return None
            seen.add(cid)
            names.append(rows[cid][1])
            cid = rows[cid][2]
        return join_path(reversed(names))

    return {key: path for cid, (key, _, _) in rows.items() if (path := path_of(cid)) is not None}


def _fill(db: sqlite3.Connection, by_id: dict[int, dict], collections: dict[str, str]) -> None:
    """Collections (keys), tags, creators and the edited fields of the items in `by_id`."""
    if not by_id:
        return
    marks = ",".join("?" * len(by_id))
    ids = list(by_id)
    for data in by_id.values():
        data.update(collections=[], tags=[], creators=[])
    for item_id, key in db.execute(f"SELECT ci.itemID, c.key FROM collectionItems ci JOIN collections c "
                                   f"ON c.collectionID = ci.collectionID WHERE ci.itemID IN ({marks})", ids):
        if key in collections:
            by_id[item_id]["collections"].append(key)
    for item_id, name in db.execute(f"SELECT it.itemID, t.name FROM itemTags it JOIN tags t ON t.tagID = it.tagID "
                                    f"WHERE it.itemID IN ({marks}) ORDER BY t.name", ids):
        by_id[item_id]["tags"].append({"tag": name})
    for item_id, first, last, mode in db.execute(
            f"SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode FROM itemCreators ic JOIN creators c "
            f"ON c.creatorID = ic.creatorID WHERE ic.itemID IN ({marks}) ORDER BY ic.itemID, ic.orderIndex", ids):
        by_id[item_id]["creators"].append({"name": last or ""} if mode == 1
                                          else {"firstName": first or "", "lastName": last or ""})
    for item_id, name, value in db.execute(
            f"SELECT d.itemID, COALESCE(bf.fieldName, f.fieldName), v.value FROM itemData d "
            f"JOIN items i ON i.itemID = d.itemID JOIN fields f ON f.fieldID = d.fieldID "
            f"JOIN itemDataValues v ON v.valueID = d.valueID LEFT JOIN baseFieldMappings bm "
            f"ON bm.itemTypeID = i.itemTypeID AND bm.fieldID = d.fieldID LEFT JOIN fields bf "
            f"ON bf.fieldID = bm.baseFieldID WHERE d.itemID IN ({marks})", ids):
        if name in FIELDS:
            by_id[item_id][name] = str(value)


def _children(db: sqlite3.Connection, by_id: dict[int, dict], keys: dict[int, str]) -> dict[str, list[dict]]:
    """Parent key → its notes, attachments and annotations (an annotation counts for the attachment's parent)."""
    children: dict[str, list[dict]] = defaultdict(list)
    if not by_id:
        return children
    marks = ",".join("?" * len(by_id))
    tags = defaultdict(list)
    for item_id, name in db.execute("SELECT itemID, t.name FROM itemTags it JOIN tags t ON t.tagID = it.tagID"):
        tags[item_id].append({"tag": name})
    trashed = {item_id for (item_id,) in db.execute("SELECT itemID FROM deletedItems")}
    attachments: dict[int, int] = {}
    for kind, table in (("note", "itemNotes"), ("attachment", "itemAttachments")):
        for item_id, parent in db.execute(f"SELECT itemID, parentItemID FROM {table} WHERE parentItemID IN ({marks})",
                                          list(by_id)):
            children[by_id[parent]["key"]].append({"key": keys.get(item_id, ""), "itemType": kind,
                                                   "tags": tags[item_id], "deleted": int(item_id in trashed)})
            if kind == "attachment":
                attachments[item_id] = parent
    if attachments:
        marks = ",".join("?" * len(attachments))
        for item_id, attachment in db.execute(
                f"SELECT itemID, parentItemID FROM itemAnnotations WHERE parentItemID IN ({marks})", list(attachments)):
            children[by_id[attachments[attachment]]["key"]].append(
                {"key": keys.get(item_id, ""), "itemType": "annotation", "tags": tags[item_id],
                 "deleted": int(item_id in trashed)})
    return children


def _group_members(db: sqlite3.Connection, library_id: int) -> tuple[dict[str, set[int]], dict[str, dict]]:
    """Item key → the users who created it, and the fields that match it to a corpus paper (the notes,
    attachments and annotations of a paper are not papers)."""
    members: dict[str, set[int]] = defaultdict(set)
    items: dict[str, dict] = {}
    rows = db.execute(
        "SELECT i.itemID, i.key, g.createdByUserID FROM items i JOIN groupItems g ON g.itemID = i.itemID "
        "WHERE i.libraryID = ? AND i.itemID NOT IN (SELECT itemID FROM deletedItems) "
        "AND i.itemID NOT IN (SELECT itemID FROM itemNotes) AND i.itemID NOT IN (SELECT itemID FROM itemAttachments) "
        "AND i.itemID NOT IN (SELECT itemID FROM itemAnnotations)",
        (library_id,)).fetchall()
    by_id = {}
    for item_id, key, user in rows:
        if user is not None:
            members[key].add(int(user))
        by_id[item_id] = items.setdefault(key, {"key": key})
    _fill(db, by_id, {})
    return dict(members), items
