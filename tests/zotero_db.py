"""Builds realistic zotero.sqlite databases for tests and benchmarks from Zotero's real schema files.

The SQL comes from ../shared/fixtures/zotero-schema (system.sql, userdata*.sql, triggers.sql); item
types, fields, creator types and base-field mappings are filled from schema.json the way Zotero does it
at startup, with IDs in a shuffled order so that no reader can get away with hard-coded numeric ids.
"""

from __future__ import annotations

import json
import random
import sqlite3
import string
from collections.abc import Iterable, Sequence
from pathlib import Path

SCHEMA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "zotero-schema"
USERDATA_FILES = {
    123: "userdata-123-zotero7.0.0.sql",  # Zotero 7.x and 8.x
    125: "userdata-125-zotero9.0.6.sql",  # Zotero 9.x
    129: "userdata.sql",  # Zotero 10.x
}
GLOBAL_SCHEMA_VERSION = 41
KEY_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"  # Zotero's key alphabet (no 0, 1, O)


SCHEMA_MISSING = "needs ../shared/fixtures/zotero-schema (the real Zotero schema, AGPL: not copied here)"


def schema_available() -> bool:
    return all((SCHEMA_DIR / name).is_file() for name in ("system.sql", "triggers.sql", "schema.json",
                                                          *USERDATA_FILES.values()))


def multipart_date(sql_date: str, original: str) -> str:
    """Zotero's stored date form: 'YYYY-MM-DD original text' (00 = unknown part)."""
    return f"{sql_date} {original}"


class ZoteroDatabase:
    """A zotero.sqlite under construction: libraries, collections, items, notes, attachments, trash."""

    def __init__(self, path: str | Path, *, userdata: int = 129, wal: bool = False, seed: int = 0) -> None:
        if not schema_available():  # every test that builds a database skips, whichever helper it calls
            import pytest

            pytest.skip(SCHEMA_MISSING)
        self.path = Path(path)
        self.random = random.Random(seed)
        self.connection = sqlite3.connect(self.path)
        self.connection.execute("PRAGMA foreign_keys = ON")
        self.connection.execute("PRAGMA synchronous = OFF")  # a test file: no need to wait for the disk
        if wal:
            self.connection.execute("PRAGMA journal_mode = WAL")
        for name in ("system.sql", USERDATA_FILES[userdata], "triggers.sql"):
            self.connection.executescript((SCHEMA_DIR / name).read_text(encoding="utf-8"))
        self.connection.executemany(
            "INSERT INTO version (schema, version) VALUES (?, ?)",
            [("userdata", userdata), ("system", 32), ("triggers", 18), ("globalSchema", GLOBAL_SCHEMA_VERSION)],
        )
        self._fill_global_schema()
        self.connection.execute(
            "INSERT INTO libraries (libraryID, type, editable, filesEditable) VALUES (1, 'user', 1, 1)")
        self.connection.execute("INSERT INTO settings (setting, key, value) VALUES ('account', 'userID', 4242)")
        self._keys: set[str] = set()

    # -- global schema (what Zotero fills from schema.json at startup) ------------------------------
    def _fill_global_schema(self) -> None:
        schema = json.loads((SCHEMA_DIR / "schema.json").read_text(encoding="utf-8"))
        item_types = list(schema["itemTypes"])
        self.random.shuffle(item_types)  # ids differ from one database to the next, as in real life
        field_ids: dict[str, int] = {}
        creator_ids: dict[str, int] = {}
        self.item_type_ids: dict[str, int] = {}
        first_id = self.random.randint(1, 50)
        for type_id, item_type in enumerate(item_types, start=first_id):
            name = item_type["itemType"]
            self.item_type_ids[name] = type_id
            self._execute_both("itemTypes", "INSERT INTO itemTypes VALUES (?, ?, NULL, 1)",
                               "INSERT INTO itemTypesCombined VALUES (?, ?, 1, 0)", (type_id, name))
            for order, field in enumerate(item_type["fields"]):
                field_id = self._field_id(field["field"], field_ids)
                self._execute_both("itemTypeFields", "INSERT INTO itemTypeFields VALUES (?, ?, 0, ?)",
                                   "INSERT INTO itemTypeFieldsCombined VALUES (?, ?, 0, ?)",
                                   (type_id, field_id, order))
                if field.get("baseField"):
                    base_id = self._field_id(field["baseField"], field_ids)
                    self._execute_both("baseFieldMappings", "INSERT INTO baseFieldMappings VALUES (?, ?, ?)",
                                       "INSERT INTO baseFieldMappingsCombined VALUES (?, ?, ?)",
                                       (type_id, base_id, field_id))
            for creator in item_type["creatorTypes"]:
                creator_name = creator["creatorType"]
                if creator_name not in creator_ids:
                    creator_ids[creator_name] = len(creator_ids) + 100
                    self.connection.execute("INSERT INTO creatorTypes VALUES (?, ?)",
                                            (creator_ids[creator_name], creator_name))
                self.connection.execute("INSERT INTO itemTypeCreatorTypes VALUES (?, ?, ?)",
                                        (type_id, creator_ids[creator_name], int(bool(creator.get("primary")))))
        self.field_ids, self.creator_type_ids = field_ids, creator_ids

    @classmethod
    def open(cls, path: str | Path, *, exclusive: bool = False, seed: int = 99) -> ZoteroDatabase:
        """Reopen a built database to add more, optionally holding Zotero's exclusive lock from then on."""
        db = cls.__new__(cls)
        db.path, db.random = Path(path), random.Random(seed)
        db.connection = sqlite3.connect(db.path)
        if exclusive:  # what Zotero does: the lock, once taken, is kept until the app quits
            db.connection.execute("PRAGMA locking_mode = EXCLUSIVE")
        db.item_type_ids = dict(db.connection.execute("SELECT typeName, itemTypeID FROM itemTypes"))
        db.field_ids = dict(db.connection.execute("SELECT fieldName, fieldID FROM fields"))
        db.creator_type_ids = dict(db.connection.execute("SELECT creatorType, creatorTypeID FROM creatorTypes"))
        db._keys = {key for (key,) in db.connection.execute("SELECT key FROM items")}
        return db

    def _execute_both(self, _table: str, plain: str, combined: str, values: tuple) -> None:
        self.connection.execute(plain, values)
        self.connection.execute(combined, values)

    def _field_id(self, name: str, field_ids: dict[str, int]) -> int:
        if name not in field_ids:
            field_ids[name] = len(field_ids) + 7
            self.connection.execute("INSERT INTO fields VALUES (?, ?, NULL)", (field_ids[name], name))
            self.connection.execute("INSERT INTO fieldsCombined VALUES (?, ?, NULL, NULL, 0)",
                                    (field_ids[name], name))
        return field_ids[name]

    # -- libraries and collections ------------------------------------------------------------------
    def add_group(self, group_id: int, name: str) -> int:
        """A group library synced to this computer; returns its libraryID."""
        cursor = self.connection.execute(
            "INSERT INTO libraries (type, editable, filesEditable) VALUES ('group', 1, 1)")
        library_id = int(cursor.lastrowid)
        self.connection.execute("INSERT INTO groups (groupID, libraryID, name, description, version) "
                                "VALUES (?, ?, ?, '', 1)", (group_id, library_id, name))
        return library_id

    def add_feed(self, name: str, url: str | None = None) -> int:
        cursor = self.connection.execute(
            "INSERT INTO libraries (type, editable, filesEditable) VALUES ('feed', 0, 0)")
        library_id = int(cursor.lastrowid)
        self.connection.execute("INSERT INTO feeds (libraryID, name, url) VALUES (?, ?, ?)",
                                (library_id, name, url or f"https://example.org/{library_id}.rss"))
        return library_id

    def add_feed_item(self, feed: int, guid: str, fields: dict[str, str], *, read: str | None = None,
                      creators: Sequence[tuple[str, ...]] = (), item_type: str = "journalArticle") -> int:
        """A feed entry as Zotero's Feed._updateFeed saves it: an item in the feed's library and its feedItems
        row (REPLACE INTO feedItems VALUES (itemID, guid, readTime, translatedTime), xpcom/data/feedItem.js)."""
        item_id = self.add_item(item_type, fields, creators=creators, library=feed)
        self.connection.execute("INSERT INTO feedItems VALUES (?, ?, ?, NULL)", (item_id, guid, read))
        return item_id

    def add_collection(self, name: str, parent: int | None = None, *, library: int = 1,
                       trashed: bool = False) -> int:
        cursor = self.connection.execute(
            "INSERT INTO collections (collectionName, parentCollectionID, libraryID, key) VALUES (?, ?, ?, ?)",
            (name, parent, library, self.new_key()))
        collection_id = int(cursor.lastrowid)
        if trashed:
            self.connection.execute("INSERT INTO deletedCollections (collectionID) VALUES (?)", (collection_id,))
        return collection_id

    def new_key(self) -> str:
        while True:
            key = "".join(self.random.choice(KEY_ALPHABET) for _ in range(8))
            if key not in self._keys:
                self._keys.add(key)
                return key

    # -- items -----------------------------------------------------------------------------------------
    def add_item(self, item_type: str, fields: dict[str, str] | None = None, *,
                 creators: Sequence[tuple[str, ...]] = (), tags: Iterable[str | tuple[str, int]] = (),
                 collections: Iterable[int] = (), library: int = 1, trashed: bool = False,
                 date_added: str = "2024-05-01 10:00:00", key: str | None = None, version: int = 7) -> int:
        """Insert one item. creators: ('First', 'Last'[, 'creatorType']) or ('Single Name',)."""
        cursor = self.connection.execute(
            "INSERT INTO items (itemTypeID, dateAdded, dateModified, clientDateModified, libraryID, key, version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (self.item_type_ids[item_type], date_added, date_added, date_added, library, key or self.new_key(),
             version))
        item_id = int(cursor.lastrowid)
        for name, value in (fields or {}).items():
            self._set_field(item_id, name, value)
        for order, creator in enumerate(creators):
            self._add_creator(item_id, order, creator)
        for tag in tags:
            name, kind = (tag, 0) if isinstance(tag, str) else tag
            self.connection.execute("INSERT OR IGNORE INTO tags (name) VALUES (?)", (name,))
            self.connection.execute(
                "INSERT INTO itemTags (itemID, tagID, type) SELECT ?, tagID, ? FROM tags WHERE name = ?",
                (item_id, kind, name))
        for collection_id in collections:
            self.connection.execute("INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)",
                                    (collection_id, item_id))
        if trashed:
            self.connection.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item_id,))
        return item_id

    def _set_field(self, item_id: int, name: str, value: str) -> None:
        self.connection.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", (value,))
        self.connection.execute(
            "INSERT INTO itemData (itemID, fieldID, valueID) SELECT ?, ?, valueID FROM itemDataValues "
            "WHERE value = ?", (item_id, self.field_ids[name], value))

    def _add_creator(self, item_id: int, order: int, creator: tuple[str, ...]) -> None:
        if len(creator) == 1:
            first, last, mode, kind = "", creator[0], 1, "author"
        else:
            first, last, mode, kind = creator[0], creator[1], 0, creator[2] if len(creator) > 2 else "author"
        self.connection.execute("INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)",
                                (first, last, mode))
        (creator_id,) = self.connection.execute(
            "SELECT creatorID FROM creators WHERE firstName = ? AND lastName = ? AND fieldMode = ?",
            (first, last, mode)).fetchone()
        self.connection.execute(
            "INSERT INTO itemCreators (itemID, creatorID, creatorTypeID, orderIndex) VALUES (?, ?, ?, ?)",
            (item_id, creator_id, self.creator_type_ids[kind], order))

    def add_note(self, text: str, parent: int | None = None, *, library: int = 1) -> int:
        item_id = self.add_item("note", library=library)
        self.connection.execute("INSERT INTO itemNotes (itemID, parentItemID, note, title) VALUES (?, ?, ?, ?)",
                                (item_id, parent, f"<p>{text}</p>", text[:40]))
        return item_id

    def add_attachment(self, title: str, parent: int | None = None, *, library: int = 1) -> int:
        item_id = self.add_item("attachment", {"title": title}, library=library)
        self.connection.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) VALUES (?, ?, 1, ?, ?)",
            (item_id, parent, "application/pdf", f"storage:{title}.pdf"))
        return item_id

    def add_annotation(self, attachment: int, text: str, *, library: int = 1) -> int:
        item_id = self.add_item("annotation", library=library)
        self.connection.execute(
            "INSERT INTO itemAnnotations (itemID, parentItemID, type, text, sortIndex, position, isExternal) "
            "VALUES (?, ?, 1, ?, '00000|000000|00000', '{}', 0)", (item_id, attachment, text))
        return item_id

    def commit(self) -> None:
        self.connection.commit()

    def close(self) -> None:
        self.connection.commit()
        self.connection.close()


def build_sample_library(path: str | Path, *, userdata: int = 129, wal: bool = False) -> Path:
    """A small but realistic library; tests/test_sqlite_source.py states what a reader must get from it."""
    db = ZoteroDatabase(path, userdata=userdata, wal=wal, seed=userdata)
    thesis = db.add_collection("Thesis")
    chapter2 = db.add_collection("Chapter 2", thesis)
    methods = db.add_collection("Methods", chapter2)
    old = db.add_collection("Old stuff", trashed=True)
    attention = db.add_item(
        "conferencePaper",
        {"title": "Attention Is All You Need", "abstractNote": "We propose the Transformer, based solely on "
         "attention mechanisms.", "date": multipart_date("2017-12-00", "December 2017"),
         "proceedingsTitle": "Advances in Neural Information Processing Systems", "DOI": "10.5555/3295222.3295349",
         "url": "https://arxiv.org/abs/1706.03762"},
        creators=[("Ashish", "Vaswani"), ("Noam", "Shazeer"), ("Niki", "Parmar"), ("Łukasz", "Kaiser"),
                  ("Samy", "Bengio", "editor")],
        tags=["transformers", ("attention", 1)], collections=[chapter2, old], key="ATTN2017",
        date_added="2023-01-15 08:30:00")
    pdf = db.add_attachment("Vaswani et al. - 2017", attention)
    db.add_annotation(pdf, "scaled dot-product attention")
    db.add_note("Read again before the defence", attention)
    db.add_item(
        "journalArticle",
        {"title": "Über die Möglichkeit neuronaler Übersetzung", "date": multipart_date("2009-11-01", "2009-11-1"),
         "extra": "DOI: 10.1000/xyz123\nOriginal Date: 2008", "publicationTitle": "Zeitschrift für KI"},
        creators=[("Jürgen", "Schmidhuber"), ("José", "Hernández-Orallo"), ("明", "王"),
                  ("Deutsche Forschungsgemeinschaft",)],
        tags=["translation"], collections=[methods], key="UEBER009")
    db.add_item("case", {"caseName": "Authors Guild v. Google", "dateDecided": multipart_date("2015-10-16",
                "October 16, 2015"), "court": "2nd Cir."}, key="CASE2015")
    db.add_item("preprint", {"title": "A Trashed Preprint", "abstractNote": "Gone."}, trashed=True, key="TRASHED1")
    db.add_item("book", {"title": "Deep Learning", "date": multipart_date("2016-00-00", "2016"),
                "url": "http://www.deeplearningbook.org"},
                creators=[("Ian", "Goodfellow"), ("Yoshua", "Bengio"), ("Aaron", "Courville")],
                collections=[thesis], key="DLBOOK16")
    db.add_note("A standalone note about reading")
    db.add_attachment("standalone.pdf")
    db.add_item("journalArticle", {"abstractNote": ""}, key="EMPTY001")  # nothing to read
    lab = db.add_group(5551212, "Vision Lab")
    lab_collection = db.add_collection("Reading group", library=lab)
    db.add_item("journalArticle", {"title": "ImageNet Classification with Deep Convolutional Neural Networks",
                "abstractNote": "We trained a large, deep convolutional neural network."},
                creators=[("Alex", "Krizhevsky"), ("Ilya", "Sutskever"), ("Geoffrey E.", "Hinton")],
                collections=[lab_collection], library=lab, key="ALEXNET1")
    feed = db.add_feed("arXiv cs.LG")
    db.add_item("journalArticle", {"title": "A feed item, not a library item"}, library=feed, key="FEEDITM1")
    db.close()
    return Path(path)


def build_large_library(path: str | Path, count: int, *, userdata: int = 129, seed: int = 1) -> Path:
    """`count` regular items (each with 3 creators, tags, a collection, a PDF and a note): for benchmarks."""
    db = ZoteroDatabase(path, userdata=userdata, seed=seed)
    words = [w for w in string.ascii_lowercase]
    top = [db.add_collection(f"Topic {n}") for n in range(20)]
    subs = [db.add_collection(f"Sub {n}", parent) for n, parent in enumerate(top)]
    for number in range(count):
        title = " ".join("".join(db.random.choice(words) for _ in range(6)) for _ in range(8))
        item = db.add_item(
            "journalArticle",
            {"title": f"{title} {number}", "abstractNote": f"Abstract {number}: " + title * 8,
             "date": multipart_date(f"{2000 + number % 25}-01-00", f"January {2000 + number % 25}"),
             "DOI": f"10.1234/bench.{number}", "url": f"https://example.org/{number}"},
            creators=[("Ada", f"Lovelace{number % 97}"), ("Émile", f"Durkheim{number % 89}"), ("Li", "Wei")],
            tags=[f"tag{number % 50}", "benchmark"], collections=[subs[number % len(subs)]])
        db.add_attachment(f"paper-{number}", item)
        if number % 3 == 0:
            db.add_note(f"note {number}", item)
    db.close()
    return Path(path)
