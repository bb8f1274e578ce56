"""`zotrec reading-list --library zotero.sqlite` reflects what the user did with the papers sync wrote: a database
built from Zotero's real schema (tests/zotero_db.py) where the user trashed, moved, annotated or removed them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests import zotero_db
from zotero_bridge.cli.main import cli
from zotero_bridge.feedback.memory import Memory, Remembered, ShownPaper

from .test_sync import NAME, corpus_file, corpus_rows  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(not zotero_db.schema_available(), reason=zotero_db.SCHEMA_MISSING)
USER_ID = 4242  # tests/zotero_db.py's account
PROFILE = ["Sherlock Holmes detective crime fiction", "Detective crime fiction and sherlock holmes stories",
           "Earthquakes and seismic waves", "Seismic waves of earthquakes"]


def reading_list(path, corpus, *extra):
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(path), "--corpus", str(corpus), "-n", "10",
                                      "--features", "tfidf", "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def build(path, written: dict[str, dict]):
    """A user library with a profile, and the papers sync wrote (corpus id → what the user did with it)."""
    db = zotero_db.ZoteroDatabase(path)
    for title in PROFILE:
        db.add_item("journalArticle", {"title": title})
    ours = db.add_collection(NAME)
    project = db.add_collection("Thesis")
    rows = {row["id"]: row for row in corpus_rows()}
    keys = {}
    for corpus_id, action in written.items():
        keys[corpus_id] = db.new_key()
        collections = [] if action.get("removed") else [ours]
        collections += [project] if action.get("moved") else []
        item = db.add_item("conferencePaper", {"title": rows[corpus_id]["title"],
                                               "extra": f"zotrec: {corpus_id} score=0.5"},
                           tags=["zotrec", *action.get("tags", [])], collections=collections,
                           trashed=bool(action.get("trashed")), key=keys[corpus_id])
        note = db.add_note("Recommended by zotrec", item)  # zotrec's own note carries its tag
        db.connection.execute("INSERT INTO itemTags (itemID, tagID, type) SELECT ?, tagID, 0 FROM tags "
                              "WHERE name = 'zotrec'", (note,))
        if action.get("annotated"):
            db.add_annotation(db.add_attachment("paper", item), "a key result")
    db.close()
    return keys


def test_trashed_moved_and_annotated_papers_change_the_list(tmp_path, corpus_file):
    plain = tmp_path / "plain.sqlite"
    build(plain, {})
    before = [row["id"] for row in reading_list(plain, corpus_file)]
    trashed, moved, annotated, untouched = before[:4]
    path = tmp_path / "zotero.sqlite"
    build(path, {trashed: {"trashed": True}, moved: {"moved": True, "removed": True},
                 annotated: {"annotated": True}, untouched: {}})
    after = reading_list(path, corpus_file)
    ids = [row["id"] for row in after]
    assert trashed not in ids  # dismissed: never recommended again (it was #1 before)
    assert moved not in ids and annotated not in ids  # kept: in the library now, part of the profile
    assert len(ids) == 10
    everything = [row["id"] for row in reading_list(path, corpus_file, "-n", "80")]
    assert untouched in everything  # zotrec's own untouched item does not hide its paper
    assert len(everything) == 80 - 3  # all but the trashed and the two kept papers
    learned = [line for row in after for line in row.get("feedback", [])]
    assert any("which you kept" in line for line in learned) or any("which you trashed" in line for line in learned)


def test_with_the_memory_a_removal_from_the_collection_is_a_dismissal(tmp_path, corpus_file):
    plain = tmp_path / "plain.sqlite"
    build(plain, {})
    before = [row["id"] for row in reading_list(plain, corpus_file)]
    path = tmp_path / "zotero.sqlite"
    keys = build(path, {before[0]: {"removed": True}, before[1]: {}})
    # without the memory, zotrec cannot tell the user's removal from its own: the paper stays a candidate
    assert before[0] in [row["id"] for row in reading_list(path, corpus_file)]
    from zotero_bridge.feedback.sqlite_view import read_sqlite_view

    view = read_sqlite_view(path, None)
    collection = next(k for k, p in view.view.collections.items() if p == NAME)
    with Memory() as memory:
        papers = [Remembered(cid, cid, keys[cid], collection, "") for cid in before[:2]]
        memory.record_run(f"user:{USER_ID}", NAME, collection, 1,
                          [ShownPaper(p.corpus_id, p.title, 1, 0.5, p.item_key, "add") for p in papers], papers, [])
    after = reading_list(path, corpus_file)
    assert before[0] not in [row["id"] for row in after] and before[1] in [row["id"] for row in after]
    with Memory() as memory:  # reading a list never changes the memory
        assert {p.fate for p in memory.papers(f"user:{USER_ID}").values()} == {"untouched"}


def test_a_group_library_boosts_what_other_members_saved(tmp_path, corpus_file):
    path = tmp_path / "zotero.sqlite"
    db = zotero_db.ZoteroDatabase(path)
    group = db.add_group(777, "Lab")
    rows = corpus_rows()
    mine = [db.add_item("journalArticle", {"title": t}, library=group) for t in PROFILE]
    saved = [db.add_item("conferencePaper", {"title": rows[n]["title"]}, library=group) for n in (70, 71, 72)]
    for user in (11, 12, 13, USER_ID):
        db.connection.execute("INSERT INTO users (userID, name) VALUES (?, ?)", (user, f"u{user}"))
    for item in mine:
        db.connection.execute("INSERT INTO groupItems (itemID, createdByUserID) VALUES (?, ?)", (item, USER_ID))
    for member, item in zip((11, 12, 13), saved):
        db.connection.execute("INSERT INTO groupItems (itemID, createdByUserID) VALUES (?, ?)", (item, member))
    db.close()
    listed = reading_list(path, corpus_file, "--group", "Lab")
    boosted = [row for row in listed if row["id"] in {rows[n]["id"] for n in (70, 71, 72)}]
    assert boosted and all("saved by 1 member of Lab" in " ".join(row.get("feedback", [])) for row in boosted)


def test_the_local_api_shows_the_same_fates(httpserver, corpus_file, tmp_path):
    """zotero:local (the running desktop): every item with its children, the trash and the collections."""
    from .test_local_source import api_item, paged

    plain = tmp_path / "plain.sqlite"
    build(plain, {})
    before = [row["id"] for row in reading_list(plain, corpus_file)]
    rows = {row["id"]: row for row in corpus_rows()}
    collections = [{"key": "RECOMMND", "data": {"key": "RECOMMND", "name": NAME, "parentCollection": False}}]
    profile = [api_item(f"PROFILE{n}", "journalArticle", title=t) for n, t in enumerate(PROFILE)]

    def ours(key, corpus_id, **data):
        return api_item(key, "conferencePaper", title=rows[corpus_id]["title"], extra=f"zotrec: {corpus_id} score=1",
                        tags=[{"tag": "zotrec"}], collections=["RECOMMND"], **data)

    trashed, noted, untouched = ours("TRASHED1", before[0]), ours("NOTED001", before[1]), ours("UNTOUCH1", before[2])
    children = [api_item(f"ZNOTE00{n}", "note", parentItem=k, note="<p>zotrec</p>", tags=[{"tag": "zotrec"}])
                for n, k in enumerate(("TRASHED1", "NOTED001", "UNTOUCH1"))]
    children.append(api_item("MYNOTE01", "note", parentItem="NOTED001", note="<p>read this</p>"))
    base = httpserver.url_for("").rstrip("/")
    top = [*profile, noted, untouched]
    httpserver.expect_request("/api/users/0/items/top").respond_with_handler(paged(top, base))
    httpserver.expect_request("/api/users/0/items/trash").respond_with_handler(paged([trashed], base))
    httpserver.expect_request("/api/users/0/items").respond_with_handler(paged([*top, *children], base))
    httpserver.expect_request("/api/users/0/collections").respond_with_handler(paged(collections, base))
    result = CliRunner().invoke(cli, ["reading-list", "--library", f"zotero:local:{base}/api", "--corpus",
                                      str(corpus_file), "-n", "80", "--features", "tfidf", "--format", "json"])
    assert result.exit_code == 0, result.output
    ids = [row["id"] for row in json.loads(result.stdout)]
    assert before[0] not in ids and before[1] not in ids and before[2] in ids  # trashed, kept (a note), untouched


@pytest.mark.parametrize("fmt", ["markdown", "html", "csv", "table"])
def test_every_format_shows_what_the_feedback_did(tmp_path, corpus_file, fmt):
    plain = tmp_path / "plain.sqlite"
    build(plain, {})
    trashed, moved, annotated = [row["id"] for row in reading_list(plain, corpus_file)][:3]
    path = tmp_path / "zotero.sqlite"
    build(path, {trashed: {"trashed": True}, moved: {"moved": True, "removed": True}, annotated: {"annotated": True}})
    lines = [line for row in reading_list(path, corpus_file) for line in row.get("feedback", [])]
    assert lines  # the JSON rows carry them: every other format must show the same
    result = CliRunner(env={"COLUMNS": "1000"}).invoke(cli, [  # a table wide enough not to fold a line
        "reading-list", "--library", str(path), "--corpus", str(corpus_file), "-n", "10", "--features", "tfidf",
        "--format", fmt])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    for line in lines:
        shown = line.replace("'", "&#x27;") if fmt == "html" else line
        assert shown in text, (fmt, line)


def test_one_zotero_sqlite_reader(tmp_path):
    """The feedback's view and `--library` read zotero.sqlite with one reader (sources/sqlite.py `read_database`):
    the view holds exactly the reader's item JSON, children lifted to their paper, and runs no SQL of its own."""
    import inspect

    from zotero_bridge.feedback import sqlite_view
    from zotero_bridge.sources.sqlite import read_database
    from zotero_bridge.sources.sqlite_paths import open_snapshot

    path = zotero_db.build_sample_library(tmp_path / "zotero.sqlite")
    view = sqlite_view.read_sqlite_view(path, None)
    with open_snapshot(path) as snapshot:
        library = read_database(snapshot.connection, path, None)
    assert view.view.items == {d["key"]: d for d in library.items if not d.get("parentItem")}
    children = [child for found in view.view.children.values() for child in found]
    assert sorted(c["key"] for c in children) == sorted(d["key"] for d in library.items if d.get("parentItem"))
    assert view.name == library.name == f"user:{USER_ID}" and view.view.collections == library.paths
    assert "SELECT" not in inspect.getsource(sqlite_view)


def test_a_database_without_an_account_finds_what_the_local_api_sync_learned(tmp_path, corpus_file):
    """zotero.sqlite of a desktop with no zotero.org account is 'user 0'; sync through the local API kept its
    history as local:<Zotero-Server-ID> (the database does not say its id): the history whose papers are in this
    database is the one, so a removal from the collection is a dismissal here too."""
    import sqlite3

    plain = tmp_path / "plain.sqlite"
    build(plain, {})
    before = [row["id"] for row in reading_list(plain, corpus_file)]
    path = tmp_path / "zotero.sqlite"
    keys = build(path, {before[0]: {"removed": True}, before[1]: {}})
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM settings WHERE setting = 'account'")  # never logged in
    view = __import__("zotero_bridge.feedback.sqlite_view", fromlist=["x"]).read_sqlite_view(path, None)
    assert view.name == "user:0"
    collection = next(k for k, p in view.view.collections.items() if p == NAME)
    with Memory() as memory:
        papers = [Remembered(cid, cid, keys[cid], collection, "") for cid in before[:2]]
        shown = [ShownPaper(p.corpus_id, p.title, 1, 0.5, p.item_key, "add") for p in papers]
        memory.record_run("local:OTHERDB00001", NAME, "ELSEWHERE", 1, [], [Remembered("x", "x", "NOTHERE1", "E", "")],
                          [])  # another database's history: not this one
        memory.record_run("local:Q7M3K2R9X4TZ", NAME, collection, 1, shown, papers, [])
    after = [row["id"] for row in reading_list(path, corpus_file)]
    assert before[0] not in after and before[1] in after
