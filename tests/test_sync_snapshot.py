"""A sync that knows what it saw (issue 32): the library changing under a local-API sync, through real pyzotero
over real HTTP to tests/fake_local_api.py (sorted by dateModified like the real server, so an edit between
pages moves the item across them).

- an edit between two pages is read again, never taken for a deletion;
- a page that comes back empty is a retry, never "dismissed", and the collection stays at -n;
- "you deleted it" only when the API answers 404 for the item;
- the memory is per library identity: a second database (another Zotero-Server-ID, both "user 0") is a new
  library, said in one line; history kept as "user:0" before moves to the database that wrote it.
"""

from __future__ import annotations

import logging
import sqlite3

import pytest

from recommender.retry import RetryPolicy
from tests.fake_local_api import FakeLocalZotero
from recommender.scoring.ranking import Recommender
from zotero_bridge.errors import BridgeError
from zotero_bridge.feedback.identity import library_identity
from zotero_bridge.feedback.memory import Memory, memory_path
from zotero_bridge.sources import SourceOptions
from zotero_bridge.sync.run import SyncRequest, local_transport, run_sync

from .test_local_sync import NAME, ours, seeded
from .test_sync import corpus_file, corpus_rows, papers  # noqa: F401 (the corpus fixtures)


@pytest.fixture
def desktop(monkeypatch):
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    server = seeded()
    server.dialog = ["always"] * 3
    yield server
    server.stop()


def sync(desktop, papers, top_n=20, dry_run=False):
    options = SourceOptions(extra={"retry_policy": RetryPolicy(sleep=lambda seconds: None)})
    return run_sync(SyncRequest(Recommender(papers), options, NAME, top_n=top_n, dry_run=dry_run,
                                transport=local_transport(desktop.url)))


def fates(desktop) -> dict[str, tuple[str, str]]:
    with Memory() as memory:
        return {cid: (p.fate, p.why) for cid, p in memory.papers(f"local:{desktop.server_id}").items()}


def only_fates() -> dict[str, tuple[str, str]]:
    """The fates of the one library in the memory, whatever it is named (so the test reads today's code too)."""
    with Memory() as memory:
        (name,) = memory.libraries()
        return {cid: (p.fate, p.why) for cid, p in memory.papers(name).items()}


def live_members(desktop) -> list[dict]:
    _, _, members = ours(desktop)
    return [m for m in members if not m.get("deleted")]


def newer_user_papers(desktop, count: int) -> None:
    """The user files `count` standalone PDFs after zotrec's run (not papers, so the ranking stays): they sort
    before zotrec's items and push them to the second page."""
    library = desktop.library()
    for number in range(count):
        desktop.add_item(library, itemType="attachment", title=f"scan-{number}.pdf", linkMode="imported_file",
                         contentType="application/pdf", dateModified=desktop.now())


def tag_run(desktop, papers, *, mid_read: bool):
    """Sync 20, file 120 PDFs (zotrec's items move to page 2), tag zotrec's first paper — before the next
    sync reads, or while it pages (between pages 1 and 2) — and sync again: (the paper, the plan)."""
    sync(desktop, papers, top_n=20)
    newer_user_papers(desktop, 120)
    tagged = min(ours(desktop)[0], key=lambda data: data["extra"])
    tag = lambda fake: fake.edit_item(fake.library(), tagged["key"], tags=[*tagged["tags"], {"tag": "to-read"}])

    def user_tags_it(fake, start):
        if start == 100 and fake.between_pages is not None:
            fake.between_pages = None
            tag(fake)

    if mid_read:
        desktop.between_pages = user_tags_it
    else:
        tag(desktop)
    report = sync(desktop, papers, top_n=20)
    assert desktop.between_pages is None
    plan = sorted((e.action, e.corpus_id) for e in report.plan.entries)
    return tagged["extra"].split()[1], plan, len(live_members(desktop))


def test_a_paper_tagged_between_two_pages_is_kept_not_dismissed_nor_replaced(desktop, papers):
    corpus_id, plan, members = tag_run(desktop, papers, mid_read=True)
    assert fates(desktop)[corpus_id] == ("kept", "you tagged it 'to-read'")
    assert not [f for f in fates(desktop).values() if f[0] == "dismissed"]
    assert [i["extra"].split()[1] for i in ours(desktop)[0]].count(corpus_id) == 1
    control = seeded(server_id="C3D5F7H9J2KL")  # the same edit made before the read: the same plan
    try:
        control.dialog = ["always"]
        assert tag_run(control, papers, mid_read=False) == (corpus_id, plan, members)
    finally:
        control.stop()


def test_an_empty_page_is_read_again_never_taken_for_deletions(desktop, papers):
    sync(desktop, papers, top_n=60)
    newer_user_papers(desktop, 90)  # 10 of zotrec's papers on page 1, 50 on page 2
    desktop.short_pages = 1
    report = sync(desktop, papers, top_n=60)
    assert desktop.short_pages == 0  # the empty page was served
    assert not [f for f in only_fates().values() if f[0] == "dismissed"]
    assert report.result is None or report.result.created == 0
    assert len(live_members(desktop)) == 60


def test_pages_that_never_add_up_are_one_line_and_nothing_is_written(desktop, papers):
    sync(desktop, papers, top_n=20)
    newer_user_papers(desktop, 120)
    before = len(desktop.writes())
    busy = next(key for key, data in desktop.library().items.items() if not data.get("parentItem"))
    desktop.on_get = lambda fake, path: fake.edit_item(fake.library(), busy, title=f"Draft {fake.now()}") \
        if "/items" in path else None  # the user edits a paper between every two answers
    with pytest.raises(BridgeError, match="kept changing .* nothing was concluded or written"):
        sync(desktop, papers, top_n=20)
    assert len(desktop.writes()) == before
    assert not [f for f in only_fates().values() if f[0] == "dismissed"]


def test_deleted_for_good_only_on_the_apis_404(desktop, papers):
    sync(desktop, papers, top_n=5)
    items, _, _ = ours(desktop)
    gone = items[0]
    del desktop.library().items[gone["key"]]  # trashed and the trash emptied: the API answers 404 for it
    sync(desktop, papers, top_n=5)
    assert only_fates()[gone["extra"].split()[1]] == ("dismissed", "you deleted it")
    asked = [p for m, p, _ in desktop.requests if m == "GET" and p.split("?")[0].endswith("/items/" + gone["key"])]
    assert len(asked) == 1
    sync(desktop, papers, top_n=5)  # known to be dismissed: not asked after again
    assert len([p for m, p, _ in desktop.requests if p.split("?")[0].endswith("/items/" + gone["key"])]) == 1
    assert len(live_members(desktop)) == 5


def test_a_second_database_is_a_new_library_said_in_one_line(desktop, papers, monkeypatch, caplog):
    sync(desktop, papers, top_n=10)
    first = fates(desktop)
    other = seeded(server_id="B8N4V6C2Z5QW")  # another computer or profile: also "user 0"
    try:
        other.dialog = ["always"]
        with caplog.at_level(logging.WARNING):
            report = sync(other, papers, top_n=10)
        lines = [r.getMessage() for r in caplog.records if "has not synced before" in r.getMessage()]
        assert len(lines) == 1 and "local:B8N4V6C2Z5QW" in lines[0]
        assert report.result.created == 10  # none of the first database's picks counted as dismissed
        assert not [f for f in fates(other).values() if f[0] == "dismissed"] and len(fates(other)) == 10
    finally:
        other.stop()
    assert fates(desktop) == first  # the first database's memory is its own
    again = sync(desktop, papers, top_n=10)
    assert again.result is None and not [f for f in fates(desktop).values() if f[0] == "dismissed"]


def test_history_kept_as_user_0_moves_to_the_database_that_wrote_it(desktop, papers):
    sync(desktop, papers, top_n=10)
    with sqlite3.connect(memory_path()) as db:  # as zotrec wrote it before identities: 'user:0'
        for table in ("runs", "papers"):
            db.execute(f"UPDATE {table} SET library = 'user:0'")
    other = seeded(server_id="B8N4V6C2Z5QW")
    try:
        other.dialog = ["always"]
        assert sync(other, papers, top_n=10).result.created == 10  # not its history: left where it is
    finally:
        other.stop()
    with Memory() as memory:
        assert len(memory.papers("user:0")) == 10
    report = sync(desktop, papers, top_n=10)
    assert report.result is None  # all 10 kept, none created again
    with Memory() as memory:
        assert memory.papers("user:0") == {} and len(memory.papers(f"local:{desktop.server_id}")) == 10
        assert len(memory.runs(f"local:{desktop.server_id}")) == 2


@pytest.mark.parametrize("args,identity", [
    (("user", "0", "Q7M3K2R9X4TZ"), "local:Q7M3K2R9X4TZ"), (("user", "0"), "user:0"),
    (("user", "12345", "Q7M3K2R9X4TZ"), "user:12345"), (("group", "77", "Q7M3K2R9X4TZ"), "group:77"),
    (("groups", 77), "group:77"),
])
def test_library_identity(args, identity):
    assert library_identity(*args) == identity


def test_reading_list_on_the_desktop_finds_the_memory_sync_kept(desktop, papers, corpus_file):
    """reading-list --library zotero:local names the library as sync does (local:<server id>): a paper the user
    took out of the collection is dismissed there too (without the memory that cannot be told from zotrec)."""
    import json

    from click.testing import CliRunner

    from zotero_bridge.cli.main import cli

    sync(desktop, papers, top_n=5)
    taken = min(ours(desktop)[0], key=lambda data: data["extra"])
    desktop.edit_item(desktop.library(), taken["key"], collections=[])
    result = CliRunner().invoke(cli, ["reading-list", "--library", f"zotero:local:{desktop.url}", "--corpus",
                                      str(corpus_file), "-n", "80", "--features", "tfidf", "--model", "none",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    assert taken["extra"].split()[1] not in [row["id"] for row in json.loads(result.stdout)]


# ---- the Web API's first read (a new computer: no cache, no memory) -------------------------------------------
@pytest.mark.parametrize("fault", ["an empty page", "an edit between pages"])
def test_a_first_web_read_that_pages_while_the_library_changes_creates_no_duplicate(zotero_server, papers, tmp_path,
                                                                                    fault):
    from .conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
    from .test_sync import ours as web_ours

    def web_sync(where):
        options = SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY, endpoint=zotero_server.url,
                                cache_dir=tmp_path / where / "cache",
                                extra={"retry_policy": RetryPolicy(sleep=lambda seconds: None)})
        return run_sync(SyncRequest(Recommender(papers), options, NAME, top_n=20, memory_path=tmp_path / where / "history.sqlite"))

    web_sync("first computer")
    library = zotero_server.library("user", ZOTERO_USER_ID)
    for number in range(120):  # PDFs filed later: zotrec's items move to the second page
        zotero_server.add_item(library, itemType="attachment", title=f"scan-{number}.pdf", linkMode="imported_file",
                               dateModified=zotero_server.now())
    _, items, _ = web_ours(zotero_server)
    if fault == "an empty page":
        zotero_server.short_pages = 1
    else:
        tagged = items[0]
        def user_tags_it(fake, start):
            if start == 100 and fake.between_pages is not None:
                fake.between_pages = None
                fake.edit_item(library, tagged["key"], tags=[*tagged["tags"], {"tag": "to-read"}])
        zotero_server.between_pages = user_tags_it
    report = web_sync("second computer")
    assert zotero_server.short_pages == 0 and zotero_server.between_pages is None  # the fault happened
    _, after, members = web_ours(zotero_server)
    ids = [data["extra"].split()[1] for data in after]
    assert len(ids) == len(set(ids)) == 20  # no paper created twice
    assert report.result is None or report.result.created == 0
    assert len([m for m in members if not m.get("deleted")]) == 20


def test_papers_zotrec_took_out_in_a_run_that_died_before_the_answer_are_not_dismissed(desktop, papers):
    """Zotero stored zotrec's removals, then the run died before it heard (kill -9, a dropped connection): the
    next run knows zotrec took them out itself (cache.leaving); "you removed it" needs the user to do it."""
    sync(desktop, papers, top_n=30)

    def drop_the_answer(fake, result):
        fake.after_write = None
        raise ConnectionAbortedError("the client is gone")  # committed; no answer leaves

    desktop.after_write = drop_the_answer
    with pytest.raises(BridgeError):
        sync(desktop, papers, top_n=20)
    assert len(live_members(desktop)) == 20  # Zotero did take the ten out
    report = sync(desktop, papers, top_n=20)
    assert not [f for f in only_fates().values() if f[0] == "dismissed"]
    assert report.result is None and len(live_members(desktop)) == 20


def test_reading_list_on_the_desktop_reads_history_kept_as_user_0_before_the_next_sync(desktop, papers, corpus_file):
    import json

    from click.testing import CliRunner

    from zotero_bridge.cli.main import cli

    sync(desktop, papers, top_n=5)
    with sqlite3.connect(memory_path()) as db:  # as zotrec wrote it before identities
        for table in ("runs", "papers"):
            db.execute(f"UPDATE {table} SET library = 'user:0'")
    taken = min(ours(desktop)[0], key=lambda data: data["extra"])
    desktop.edit_item(desktop.library(), taken["key"], collections=[])
    result = CliRunner().invoke(cli, ["reading-list", "--library", f"zotero:local:{desktop.url}", "--corpus",
                                      str(corpus_file), "-n", "80", "--features", "tfidf", "--model", "none",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    assert taken["extra"].split()[1] not in [row["id"] for row in json.loads(result.stdout)]
    with Memory() as memory:
        assert len(memory.papers("user:0")) == 5  # reading a list writes nothing
