"""`--library zotero:sqlite[:PATH]` or `--library PATH.sqlite`: read the Zotero desktop database, read-only.

Reads userdata schemas 121 (Zotero 6) to 129 (Zotero 10), joining on item-type, field and creator-type
names (their numeric ids differ between databases). Each item becomes Zotero's own item JSON
(`read_database`: children carry `parentItem`, group items who created them) and goes through
`item_from_zotero_json`, so zotero.sqlite and the local API give the same LibraryItem. This is the one
zotero.sqlite reader: the feedback's view of zotrec's items (feedback/sqlite_view.py) reads the same JSON,
and so do the feeds the user follows in Zotero (`read_sqlite_feeds`: the libraries of type 'feed', each item
with the `guid` and `readTime` of its feedItems row, as Zotero's xpcom/data/feedItem.js stores them).
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from recommender.items import LibraryItem, Skipped
from recommender.words import plural
from zotero_bridge.errors import SourceError
from zotero_bridge.sources.base import LibraryRead, SourceOptions
from zotero_bridge.sources.sqlite_paths import open_snapshot, resolve_database_path
from zotero_bridge.sources.zotero_json import item_from_zotero_json
from zotero_bridge.zotero_api.collection_path import join_path

log = logging.getLogger(__name__)

KNOWN_SCHEMAS = range(121, 130)  # userdata 121 (Zotero 6) … 129 (Zotero 10); older ones with the tables read too
REQUIRED_TABLES = ("version", "libraries", "items", "itemTypes", "fields", "itemData", "itemDataValues",
                   "baseFieldMappings", "creators", "itemCreators", "creatorTypes", "tags", "itemTags",
                   "collections", "collectionItems", "deletedItems")
# Read when present: the collection trash came with Zotero 7; groups and settings may be absent in odd copies.
OPTIONAL_TABLES = ("deletedCollections", "groups", "settings")
# Zotero field (or base field) name → key in Zotero's item JSON
WANTED_BASE_FIELDS = {"title": "title", "date": "date", "publicationTitle": "publicationTitle"}
WANTED_FIELDS = {"abstractNote": "abstractNote", "DOI": "DOI", "url": "url", "extra": "extra", "ISSN": "ISSN"}
_MULTIPART_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2}) (.*)$", re.DOTALL)
_SQL_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$")


def read_sqlite_library(argument: str, options: SourceOptions) -> LibraryRead:
    """Read one library (the user's, or `options.group`) from a zotero.sqlite; never writes to it."""
    path = resolve_database_path(argument)
    with open_snapshot(path) as snapshot:
        try:
            read = _read_database(snapshot.connection, path, options.group)
        except sqlite3.DatabaseError as error:
            raise SourceError(_database_error_line(path, error)) from None
    read.stats["zotero.sqlite read"] = "a private copy" if snapshot.mode == "copy" else "in place (immutable)"
    log.info("Read %s from %s (%s, schema %s, %s)", plural(len(read.items), "item"), path,
             read.stats["zotero.sqlite library"], read.stats["zotero.sqlite schema"],
             "from a copy taken now; works while Zotero is open" if snapshot.mode == "copy"
             else "read in place")
    return read


@dataclass
class DatabaseFeed:
    """One feed the user follows in Zotero: its name, URL and items as Zotero's item JSON, each with the
    feed entry's `guid` and `readTime` ('' while unread)."""

    name: str
    url: str
    items: list[dict] = field(default_factory=list)


@dataclass
class FeedsRead:
    """What `read_sqlite_feeds` read from one snapshot: the feeds and the user's own library beside them."""

    path: Path
    feeds: list[DatabaseFeed]
    library: LibraryRead


def read_sqlite_feeds(argument: str) -> FeedsRead:
    """Every feed of a zotero.sqlite (the default profile's for '') and its user library, in one read-only
    snapshot, so that items already saved can be told from new ones."""
    path = resolve_database_path(argument)
    with open_snapshot(path) as snapshot:
        try:
            library = _read_database(snapshot.connection, path, None)
            feeds = _read_feeds(snapshot.connection)
        except sqlite3.DatabaseError as error:
            raise SourceError(_database_error_line(path, error)) from None
    return FeedsRead(path, feeds, library)


def _read_feeds(connection: sqlite3.Connection) -> list[DatabaseFeed]:
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"feeds", "feedItems"} <= tables:  # a database from before feeds (Zotero 5.0)
        return []
    feeds = []
    for library_id, name, url in connection.execute(
            "SELECT f.libraryID, f.name, f.url FROM feeds f JOIN libraries l ON l.libraryID = f.libraryID "
            "WHERE l.type = 'feed' ORDER BY f.name, f.libraryID").fetchall():
        fields, creators = _item_fields(connection, library_id), _item_creators(connection, library_id)
        feed = DatabaseFeed(str(name), str(url))
        for item_id, key, type_name, date_added, guid, read_time in connection.execute(
                "SELECT i.itemID, i.key, it.typeName, i.dateAdded, fi.guid, fi.readTime FROM items i "
                "JOIN feedItems fi ON fi.itemID = i.itemID LEFT JOIN itemTypes it ON it.itemTypeID = i.itemTypeID "
                "WHERE i.libraryID = ? ORDER BY i.itemID", (library_id,)):
            data: dict[str, Any] = {"key": key, "itemType": type_name or "", "dateAdded": api_timestamp(date_added),
                                    "creators": creators.get(item_id, []), "guid": str(guid or ""),
                                    "readTime": api_timestamp(read_time) if read_time else ""}
            data.update(fields.get(item_id, {}))
            feed.items.append(data)
        feeds.append(feed)
    return feeds


def split_multipart_date(value: str) -> tuple[str, int | None]:
    """'2013-03-00 03/2013' → ('03/2013', 2013); other values come back unchanged with no year."""
    match = _MULTIPART_DATE.match(value or "")
    if not match:
        return value or "", None
    year = int(match.group(1))
    return match.group(4), year or None


def api_timestamp(value: str) -> str:
    """'2024-05-01 10:00:00' (UTC) → '2024-05-01T10:00:00Z', the form the API shows."""
    match = _SQL_TIME.match(value or "")
    return f"{match.group(1)}T{match.group(2)}Z" if match else (value or "")


def _database_error_line(path: Path, error: sqlite3.DatabaseError) -> str:
    text = str(error)
    if "malformed" in text or "not a database" in text or "disk I/O" in text:
        return (f"{path}: the database is damaged or truncated ({text}); Zotero keeps backups next to it "
                "(zotero.sqlite.bak)")
    if "no such column" in text or "no such table" in text:
        return f"{path}: this Zotero database has a layout zotrec cannot read ({text})"
    return f"{path}: could not be read ({text})"


@dataclass
class DatabaseLibrary:
    """One library of a zotero.sqlite as Zotero's item JSON, every item in itemID order (children with
    `parentItem`; an annotation's is its attachment), `created_by` (group items: key → the member who saved it)
    and `me` (this computer's Zotero user id)."""

    label: str  # 'user library 4242', 'group library 77'
    name: str  # 'user:4242', 'group:77' (as the memory names a library)
    group_name: str
    schema: int
    paths: dict[str, str]
    items: list[dict] = field(default_factory=list)
    created_by: dict[str, int] = field(default_factory=dict)
    me: int | None = None


def _read_database(connection: sqlite3.Connection, path: Path, group: str | None) -> LibraryRead:
    library = read_database(connection, path, group)
    read = LibraryRead(sources=[str(path)])
    for data in library.items:
        where = f"{path}: {data['key']}"
        if not data["itemType"]:
            read.skipped.append(Skipped(where, "unknown item type"))
            continue
        data = dict(data)
        date, year = split_multipart_date(data.get("date", ""))
        data["date"] = date
        result = item_from_zotero_json(data, where=where, collection_paths=library.paths, library=library.label)
        if isinstance(result, LibraryItem) and year and result.year != year:
            result = replace(result, year=year)
        (read.items if isinstance(result, LibraryItem) else read.skipped).append(result)
    read.stats.update({"zotero.sqlite schema": f"userdata {library.schema}", "zotero.sqlite library": library.label})
    return read


def read_database(connection: sqlite3.Connection, path: Path, group: str | None, *, warn: bool = True
                  ) -> DatabaseLibrary:
    """The user library (or `group`, by id or name) as item JSON; `warn`: say so when the schema is unknown."""
    schema, tables = _check_schema(connection, path, warn)
    library_id, label, name, group_name = _choose_library(connection, path, group, tables)
    paths = _collection_paths(connection, library_id, "deletedCollections" in tables)
    rows = connection.execute(
        "SELECT i.itemID, i.key, it.typeName, i.dateAdded, i.dateModified, i.version, "
        "       EXISTS (SELECT 1 FROM deletedItems d WHERE d.itemID = i.itemID) AS trashed "
        "FROM items i LEFT JOIN itemTypes it ON it.itemTypeID = i.itemTypeID "
        "WHERE i.libraryID = ? ORDER BY i.itemID", (library_id,)).fetchall()
    fields = _item_fields(connection, library_id)
    creators = _item_creators(connection, library_id)
    tags = _item_tags(connection, library_id)
    memberships = _item_collections(connection, library_id, paths)
    keys = {item_id: key for item_id, key, *_ in rows}
    parents = _parents(connection, tables, keys)
    library = DatabaseLibrary(label, name, group_name, schema, paths)
    for item_id, key, type_name, date_added, date_modified, version, trashed in rows:
        data: dict[str, Any] = {"key": key, "version": version, "itemType": type_name or "",
                                "dateAdded": api_timestamp(date_added),
                                "dateModified": api_timestamp(date_modified),
                                "creators": creators.get(item_id, []), "tags": tags.get(item_id, []),
                                "collections": memberships.get(item_id, []), "deleted": bool(trashed)}
        data.update(fields.get(item_id, {}))
        if item_id in parents:
            data["parentItem"] = parents[item_id]
        library.items.append(data)
    if "groupItems" in tables and name.startswith("group:"):
        library.created_by = {keys[item_id]: int(user) for item_id, user in connection.execute(
            "SELECT itemID, createdByUserID FROM groupItems WHERE createdByUserID IS NOT NULL")
            if item_id in keys}
    user = connection.execute("SELECT value FROM settings WHERE setting = 'account' AND key = 'userID'"
                              ).fetchone() if "settings" in tables else None
    library.me = int(user[0]) if user and str(user[0]).isdigit() else None
    return library


def _parents(connection: sqlite3.Connection, tables: set[str], keys: dict[int, str]) -> dict[int, str]:
    """Child itemID → its parent's key: notes and attachments their paper, annotations their attachment."""
    found: dict[int, str] = {}
    for table in ("itemNotes", "itemAttachments", "itemAnnotations"):
        if table in tables:
            for item_id, parent in connection.execute(f"SELECT itemID, parentItemID FROM {table} "
                                                      "WHERE parentItemID IS NOT NULL"):
                if item_id in keys and parent in keys:
                    found[item_id] = keys[parent]
    return found


def _check_schema(connection: sqlite3.Connection, path: Path, warn: bool = True) -> tuple[int, set[str]]:
    tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        raise SourceError(f"{path}: an empty SQLite database, not a Zotero database")
    missing = [table for table in REQUIRED_TABLES if table not in tables]
    if "items" not in tables or "version" not in tables:
        raise SourceError(f"{path}: an SQLite database but not a Zotero one (no 'items'/'version' tables)")
    if missing:
        raise SourceError(f"{path}: not a complete Zotero database (missing tables: {', '.join(missing)})")
    row = connection.execute("SELECT version FROM version WHERE schema = 'userdata'").fetchone()
    if row is None:
        raise SourceError(f"{path}: an SQLite database but not a Zotero one (no userdata schema version)")
    schema = int(row[0])
    if schema > KNOWN_SCHEMAS[-1] and warn:  # an older one with every table read above is read as it is: no warning
        log.warning("%s has Zotero schema userdata %d, newer than the newest zotrec was checked against (%d); "
                    "reading what can be read", path, schema, KNOWN_SCHEMAS[-1])
    return schema, tables


def _choose_library(connection: sqlite3.Connection, path: Path, group: str | None,
                    tables: set[str]) -> tuple[int, str, str, str]:
    """(libraryID, label, memory name, group name): the user library by default; `group` picks a group
    library by id or name."""
    group_columns, group_join = ("g.groupID, g.name", "LEFT JOIN groups g ON g.libraryID = l.libraryID") \
        if "groups" in tables else ("l.libraryID, 'library ' || l.libraryID", "")
    rows = connection.execute(
        f"SELECT l.libraryID, l.type, {group_columns} FROM libraries l {group_join} "
        "WHERE l.type IN ('user', 'group') ORDER BY l.libraryID").fetchall()
    groups = [(library_id, group_id, name) for library_id, kind, group_id, name in rows if kind == "group"]
    listing = ", ".join(f"{name} ({group_id})" for _, group_id, name in groups)
    if group and group.strip().casefold() not in ("user", "my library"):
        wanted = group.strip()
        for library_id, group_id, name in groups:
            if wanted == str(group_id) or wanted.casefold() == str(name).casefold():
                return library_id, f"group library {group_id}", f"group:{group_id}", str(name)
        known = f"(groups here: {listing})" if groups else "(this database has no group libraries)"
        raise SourceError(f"{path}: no group library '{wanted}' {known}")
    users = [library_id for library_id, kind, _, _ in rows if kind == "user"]
    if not users:
        raise SourceError(f"{path}: no user library in this Zotero database")
    if groups:
        log.info("%s also holds %d group %s (%s): read one with --group NAME|ID", path, len(groups),
                 "library" if len(groups) == 1 else "libraries", listing)
    user_id = connection.execute(
        "SELECT value FROM settings WHERE setting = 'account' AND key = 'userID'").fetchone() \
        if "settings" in tables else None
    return users[0], f"user library {user_id[0] if user_id else 0}", f"user:{user_id[0] if user_id else 0}", ""


def _collection_paths(connection: sqlite3.Connection, library_id: int, has_trash: bool) -> dict[str, str]:
    """Collection key → full path ('Thesis/Chapter 2'); trashed collections and their children left out."""
    trashed = "c.collectionID IN (SELECT collectionID FROM deletedCollections)" if has_trash else "0"
    rows = connection.execute(
        f"SELECT c.collectionID, c.key, c.collectionName, c.parentCollectionID, {trashed} "
        "FROM collections c WHERE c.libraryID = ?", (library_id,)).fetchall()
    by_id = {row[0]: row for row in rows}
    paths: dict[str, str] = {}
    for collection_id, key, _, _, _ in rows:
        names, current, seen = [], by_id.get(collection_id), set()
        while current is not None and current[0] not in seen:
            seen.add(current[0])
            if current[4]:
                names = []
                break
            names.append(current[2])
            current = by_id.get(current[3]) if current[3] is not None else None
        if names:
            paths[key] = join_path(reversed(names))
    return paths


def _item_fields(connection: sqlite3.Connection, library_id: int) -> dict[int, dict[str, str]]:
    rows = connection.execute(
        "SELECT d.itemID, f.fieldName, COALESCE(bf.fieldName, f.fieldName), v.value "
        "FROM itemData d JOIN items i ON i.itemID = d.itemID "
        "JOIN fields f ON f.fieldID = d.fieldID JOIN itemDataValues v ON v.valueID = d.valueID "
        "LEFT JOIN baseFieldMappings bm ON bm.itemTypeID = i.itemTypeID AND bm.fieldID = d.fieldID "
        "LEFT JOIN fields bf ON bf.fieldID = bm.baseFieldID WHERE i.libraryID = ?", (library_id,))
    fields: dict[int, dict[str, str]] = defaultdict(dict)
    for item_id, name, base_name, value in rows:
        key = WANTED_BASE_FIELDS.get(base_name) or WANTED_FIELDS.get(name)
        if key and value is not None:
            fields[item_id][key] = str(value)
    return fields


def _item_creators(connection: sqlite3.Connection, library_id: int) -> dict[int, list[dict[str, str]]]:
    rows = connection.execute(
        "SELECT ic.itemID, ct.creatorType, c.firstName, c.lastName, c.fieldMode "
        "FROM itemCreators ic JOIN items i ON i.itemID = ic.itemID "
        "JOIN creators c ON c.creatorID = ic.creatorID "
        "JOIN creatorTypes ct ON ct.creatorTypeID = ic.creatorTypeID WHERE i.libraryID = ? "
        "ORDER BY ic.itemID, ic.orderIndex", (library_id,))
    creators: dict[int, list[dict[str, str]]] = defaultdict(list)
    for item_id, creator_type, first, last, field_mode in rows:
        if field_mode == 1:
            creators[item_id].append({"creatorType": creator_type, "name": last or ""})
        else:
            creators[item_id].append({"creatorType": creator_type, "firstName": first or "",
                                      "lastName": last or ""})
    return creators


def _item_tags(connection: sqlite3.Connection, library_id: int) -> dict[int, list[dict[str, Any]]]:
    rows = connection.execute(
        "SELECT it.itemID, t.name, it.type FROM itemTags it JOIN items i ON i.itemID = it.itemID "
        "JOIN tags t ON t.tagID = it.tagID WHERE i.libraryID = ? ORDER BY it.itemID, t.name", (library_id,))
    tags: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for item_id, name, kind in rows:
        tags[item_id].append({"tag": name, "type": kind or 0})
    return tags


def _item_collections(connection: sqlite3.Connection, library_id: int,
                      paths: dict[str, str]) -> dict[int, list[str]]:
    rows = connection.execute(
        "SELECT ci.itemID, c.key FROM collectionItems ci "
        "JOIN collections c ON c.collectionID = ci.collectionID "
        "WHERE c.libraryID = ? ORDER BY ci.itemID, c.collectionName", (library_id,))
    memberships: dict[int, list[str]] = defaultdict(list)
    for item_id, key in rows:
        if key in paths:  # not in the trash
            memberships[item_id].append(key)
    return memberships


__all__ = ["DatabaseFeed", "DatabaseLibrary", "FeedsRead", "read_database", "read_sqlite_feeds", "read_sqlite_library",
           "split_multipart_date"]
