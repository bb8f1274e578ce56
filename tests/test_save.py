"""Saving one paper into zotrec's collection (zotero_bridge/sync/save.py), the function the page's Save and the
assistant's `save` share: through real pyzotero over real HTTP to the fake Web API (tests/zotero_server.py) and
the fake desktop local API (tests/fake_local_api.py), as sync writes, once, remembered as kept."""

from __future__ import annotations

from dataclasses import replace

import pytest

from recommender.retry import RetryPolicy
from zotero_bridge.errors import BridgeError
from zotero_bridge.feedback.fates import KEPT, SAVED
from zotero_bridge.feedback.memory import Memory
from zotero_bridge.sources import SourceOptions
from zotero_bridge.sync.run import local_transport
from zotero_bridge.sync.save import ADDED, ALREADY, CREATED, SaveTarget, save_paper, target_for, writable_library

from .conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_local_sync import desktop  # noqa: F401 (the seeded fake desktop)
from .test_sync import NAME, corpus_file, corpus_rows, papers, sync  # noqa: F401 (the Web API sync's fixtures)


def web_target(server) -> SaveTarget:
    options = SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY, endpoint=server.url,
                            extra={"retry_policy": RetryPolicy(sleep=lambda seconds: None)})
    return SaveTarget(options, NAME)


def ranked(server, papers, top_n=30):
    """The ranked list sync makes for this library (with reasons), nothing written."""
    return sync(server, papers, top_n=top_n, dry_run=True).recommendations


def papers_with(library, corpus_id):
    return [d for d in library.items.values() if d.get("itemType") == "conferencePaper"
            and f"zotrec: {corpus_id} " in (d.get("extra") or "")]


def remembered(corpus_id):
    with Memory() as memory:
        library = memory.libraries()[0]
        return memory.papers(library).get(corpus_id), len(memory.runs(library))


def test_save_writes_one_item_with_its_note_once(zotero_server, papers):
    rec = ranked(zotero_server, papers)[7]
    library = zotero_server.library("user", ZOTERO_USER_ID)
    first = save_paper(web_target(zotero_server), rec)
    assert first.action == CREATED and first.written
    [item] = papers_with(library, rec.paper.id)
    assert item["key"] == first.item_key and item["title"] == rec.paper.title
    assert {"tag": "zotrec"} in item["tags"] and item["collections"] == [first.collection_key]
    assert library.collections[first.collection_key]["name"] == NAME
    notes = [d for d in library.items.values() if d.get("parentItem") == item["key"]]
    assert len(notes) == 1 and "Recommended by zotrec" in notes[0]["note"]
    paper, runs = remembered(rec.paper.id)
    assert (paper.fate, paper.why, paper.item_key) == (KEPT, SAVED, item["key"]) and runs == 1
    writes = len(zotero_server.writes())
    again = save_paper(web_target(zotero_server), rec)  # a double click
    assert again.action == ALREADY and not again.written and again.item_key == item["key"]
    assert len(zotero_server.writes()) == writes and len(papers_with(library, rec.paper.id)) == 1
    assert remembered(rec.paper.id)[1] == 1  # nothing remembered twice either


def test_a_saved_paper_is_the_users_sync_keeps_it_and_learns_from_it(zotero_server, papers):
    rec = ranked(zotero_server, papers)[25]  # far below the collection's 5 places
    save_paper(web_target(zotero_server), rec)
    for _ in range(2):
        report = sync(zotero_server, papers, top_n=5)
        kept = [e for e in report.plan.entries if e.corpus_id == rec.paper.id]
        assert [(e.action, e.note) for e in kept] == [("keep", "you kept it")]
    paper, _ = remembered(rec.paper.id)
    assert (paper.fate, paper.why) == (KEPT, SAVED)
    library = zotero_server.library("user", ZOTERO_USER_ID)
    [item] = papers_with(library, rec.paper.id)
    assert not item.get("deleted") and item["collections"]
    assert all(r.paper.id != rec.paper.id for r in report.recommendations)  # the user's now: not recommended
    assert any(f"'{rec.paper.title}', which you kept" in line for r in report.recommendations for line in r.feedback)


def test_saving_a_paper_sync_wrote_marks_it_kept_and_sends_nothing(zotero_server, papers):
    report = sync(zotero_server, papers, top_n=5)
    rec = report.recommendations[2]
    writes = len(zotero_server.writes())
    result = save_paper(web_target(zotero_server), rec)
    assert result.action == ALREADY and not result.written and len(zotero_server.writes()) == writes
    paper, _ = remembered(rec.paper.id)
    assert (paper.fate, paper.why) == (KEPT, SAVED)
    smaller = sync(zotero_server, papers, top_n=1)  # the others leave; the saved one stays
    assert [e.action for e in smaller.plan.entries if e.corpus_id == rec.paper.id] == ["keep"]


def test_a_paper_the_user_trashed_comes_back_when_they_save_it(zotero_server, papers):
    report = sync(zotero_server, papers, top_n=3)
    rec = report.recommendations[0]
    library = zotero_server.library("user", ZOTERO_USER_ID)
    key = report.result.created_keys[rec.paper.id]
    zotero_server.trash_item(library, key)
    result = save_paper(web_target(zotero_server), rec)
    assert result.action == ADDED and result.item_key == key and result.written
    assert not library.items[key].get("deleted") and len(papers_with(library, rec.paper.id)) == 1


def test_an_item_the_user_has_is_filed_not_created(zotero_server, papers):
    rec = ranked(zotero_server, papers)[4]
    library = zotero_server.library("user", ZOTERO_USER_ID)
    mine = zotero_server.add_item(library, itemType="journalArticle", title=rec.paper.title.upper(), tags=[])
    result = save_paper(web_target(zotero_server), rec)
    assert result.action == ADDED and result.item_key == mine
    assert library.items[mine]["collections"] == [result.collection_key]
    assert library.items[mine]["title"] == rec.paper.title.upper()  # the user's item is not edited
    assert papers_with(library, rec.paper.id) == []
    paper, runs = remembered(rec.paper.id)
    assert paper is None and runs == 1  # the user's own item: only the line of the history


def test_an_answer_lost_after_zotero_stored_the_paper_is_not_saved_twice(zotero_server, papers):
    rec = ranked(zotero_server, papers)[3]

    def lose_the_answer(fake, result):
        if any(o["data"].get("itemType") == "conferencePaper" for o in result["successful"].values()):
            fake.after_write = None
            raise ConnectionResetError("the answer never came")

    zotero_server.after_write = lose_the_answer
    try:
        save_paper(web_target(zotero_server), rec)
    except BridgeError:
        pass  # the first click may or may not report the paper; the second must not add one
    result = save_paper(web_target(zotero_server), rec)
    library = zotero_server.library("user", ZOTERO_USER_ID)
    assert len(papers_with(library, rec.paper.id)) == 1 and result.item_key
    assert save_paper(web_target(zotero_server), rec).action == ALREADY
    assert remembered(rec.paper.id)[0].fate == KEPT


def test_a_seed_abstract_without_a_title_is_refused(zotero_server, papers):
    rec = ranked(zotero_server, papers)[0]
    untitled = replace(rec, paper=replace(rec.paper, title_derived=True))
    with pytest.raises(BridgeError, match="has no title of its own"):
        save_paper(web_target(zotero_server), untitled)
    assert zotero_server.writes() == []


def test_the_desktop_local_api_saves_once(desktop, papers):  # noqa: F811
    from .test_local_sync import sync as local_sync

    desktop.dialog = ["always"]
    rec = local_sync(desktop, papers, top_n=30, dry_run=True).recommendations[10]
    options = SourceOptions(extra={"retry_policy": RetryPolicy(sleep=lambda seconds: None)})
    target = SaveTarget(options, NAME, transport=local_transport(desktop.url))
    first = save_paper(target, rec)
    assert first.action == CREATED and first.written
    library = desktop.library()
    made = [d for d in library.items.values() if f"zotrec: {rec.paper.id} " in (d.get("extra") or "")]
    assert len(made) == 1 and [d for d in library.items.values() if d.get("parentItem") == made[0]["key"]]
    writes = len(desktop.writes())
    assert save_paper(target, rec).action == ALREADY and len(desktop.writes()) == writes
    assert desktop.prompts == ["zotrec"]
    assert remembered(rec.paper.id)[0].why == SAVED


def test_only_the_zotero_apis_are_save_targets(tmp_path):
    options = SourceOptions()
    assert writable_library(["examples/library.bib", "zotero:sqlite", "zotero:local", "zotero:web"]) == "zotero:local"
    assert writable_library(["examples/library.bib", str(tmp_path / "zotero.sqlite")]) is None
    assert target_for("zotero:web", options, NAME).transport.group_signal
    local = target_for("zotero:local:http://127.0.0.1:9/api", options, "Reading/ICML 2025")
    assert not local.transport.group_signal and local.collection_name == "Reading/ICML 2025"
    for spec in ("examples/library.bib", "zotero:sqlite"):
        with pytest.raises(BridgeError, match="saves to zotero:web or zotero:local"):
            target_for(spec, options, NAME)


def test_a_refused_paper_is_one_line_and_the_next_save_writes_it(zotero_server, papers):
    rec = ranked(zotero_server, papers)[6]
    zotero_server.fail_objects.append((400, "'title' is too long"))  # the paper, as Zotero refuses one
    with pytest.raises(BridgeError, match="Zotero did not save .*'title' is too long"):
        save_paper(web_target(zotero_server), rec)
    library = zotero_server.library("user", ZOTERO_USER_ID)
    assert papers_with(library, rec.paper.id) == []
    assert save_paper(web_target(zotero_server), rec).action == CREATED
    assert len(papers_with(library, rec.paper.id)) == 1


def test_the_fate_of_a_saved_paper():
    """fates.py: saved stays kept while it is in the library, wherever the user files it; the trash still dismisses."""
    from zotero_bridge.feedback.fates import DISMISSED, LibraryView, fate_of
    from zotero_bridge.feedback.memory import Remembered

    saved = Remembered("icml2025/001", "A paper", "KEY1", "COLL", "", fate=KEPT, why=SAVED)
    untouched = {"key": "KEY1", "title": "A paper", "collections": ["COLL"], "tags": [{"tag": "zotrec"}]}
    assert fate_of(saved, LibraryView(items={"KEY1": untouched})).why == SAVED
    taken_out = dict(untouched, collections=[])
    assert fate_of(saved, LibraryView(items={"KEY1": taken_out})).fate == KEPT  # the user's item, not a dismissal
    trashed = fate_of(saved, LibraryView(items={"KEY1": dict(untouched, deleted=1)}))
    assert trashed.fate == DISMISSED and trashed.why == "you moved it to the trash"
    plain = Remembered("icml2025/001", "A paper", "KEY1", "COLL", "")
    assert fate_of(plain, LibraryView(items={"KEY1": taken_out})).fate == DISMISSED  # the rule for sync's papers
