"""Three `zotrec sync` runs against the fake Zotero Web API with a user acting in Zotero between them: what the
user did is read back (kept / dismissed), nothing they dismissed comes back, none of their edits is lost, and an
unchanged re-sync still costs one request."""

from __future__ import annotations

import json
from collections import Counter

from click.testing import CliRunner

from zotero_bridge.cli.main import cli
from zotero_bridge.feedback.memory import Memory

from .conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_sync import NAME, corpus_file, corpus_rows, ours, papers, sync  # noqa: F401 (fixtures)


def corpus_id(data):
    return data["extra"].split()[1]


def test_three_syncs_with_user_actions_between(zotero_server, papers):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    project = zotero_server.add_collection(library, "My project")
    sync(zotero_server, papers, top_n=8)
    collection, items, _ = ours(zotero_server)
    ranked = sorted(items, key=lambda d: -float(d["extra"].split("score=")[1]))
    trashed, removed, tagged, moved, noted, annotated = (d["key"] for d in ranked[:6])
    zotero_server.trash_item(library, trashed)
    zotero_server.file_item(library, removed, remove=collection)
    zotero_server.tag_item(library, tagged, "to-read")
    zotero_server.file_item(library, moved, add=project, remove=collection)
    zotero_server.add_child(library, noted, "note")
    pdf = zotero_server.add_child(library, annotated, "attachment")
    zotero_server.add_child(library, pdf, "annotation")
    user_state = {key: json.dumps(library.items[key], sort_keys=True)
                  for key in (trashed, removed, tagged, moved, noted, annotated)}

    second = sync(zotero_server, papers, top_n=8)
    with Memory() as memory:
        fates = {p.item_key: (p.fate, p.why) for p in memory.papers(f"user:{ZOTERO_USER_ID}").values()}
    assert fates[trashed] == ("dismissed", "you moved it to the trash")
    assert fates[removed] == ("dismissed", f"you removed it from '{NAME}'")
    assert fates[tagged] == ("kept", "you tagged it 'to-read'")
    assert fates[moved] == ("kept", "you filed it in 'My project'")
    assert fates[noted] == ("kept", "you added a note")
    assert fates[annotated][0] == "kept" and "annotation" in fates[annotated][1] + "attachment"
    for key, before in user_state.items():  # 0 user edits lost: zotrec never wrote to these items
        assert json.dumps(library.items[key], sort_keys=True) == before, key
    dismissed = {corpus_id(library.items[k]) for k in (trashed, removed)}
    assert not dismissed & {e.corpus_id for e in second.plan.entries}
    kept_in_collection = {e.item_key for e in second.plan.entries if e.note == "you kept it"}
    assert kept_in_collection == {tagged, noted, annotated}
    _, items, members = ours(zotero_server)
    live = [m for m in members if m["key"] not in kept_in_collection and not m.get("deleted")]
    assert len(live) == 8  # refilled to N
    notes = [line for rec in second.recommendations for line in rec.feedback]
    assert any("which you kept" in line for line in notes)
    # whether a dismissal moved one of these 8 down depends on the data; tests/test_fates.py checks that note
    assert all("which you trashed" in line or "which you removed" in line or "which you kept" in line
               for line in notes)

    fresh = [d["key"] for d in items if d["key"] not in user_state and not d.get("deleted")]  # live, not trashed
    edited, deleted = fresh[0], fresh[1]
    zotero_server.edit_item(library, edited, title="My own better title for this paper")
    gone = corpus_id(library.items[deleted])
    zotero_server.delete_item(library, deleted)  # emptied from the trash: only /deleted shows it
    third = sync(zotero_server, papers, top_n=8)
    with Memory() as memory:
        fates = {p.item_key: (p.fate, p.why) for p in memory.papers(f"user:{ZOTERO_USER_ID}").values()}
        runs = memory.runs(f"user:{ZOTERO_USER_ID}")
    assert fates[edited] == ("kept", "you edited it") and fates[deleted] == ("dismissed", "you deleted it")
    assert library.items[edited]["title"] == "My own better title for this paper"
    assert gone not in {e.corpus_id for e in third.plan.entries}
    _, items, _ = ours(zotero_server)
    assert max(Counter(corpus_id(d) for d in items).values()) == 1  # 0 re-created dismissed (or any) papers
    assert len(runs) == 3

    writes = len(zotero_server.writes())
    unchanged = sync(zotero_server, papers, top_n=8)
    assert unchanged.stats["requests"] <= 3 and len(zotero_server.writes()) == writes


def test_history_shows_the_runs_and_the_fates(zotero_server, corpus_file, tmp_path):
    env = {"ZOTERO_API_KEY": ZOTERO_WRITE_KEY}
    args = ["sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus",
            str(corpus_file), "-n", "3", "--features", "tfidf"]
    assert CliRunner().invoke(cli, args, env=env).exit_code == 0
    library = zotero_server.library("user", ZOTERO_USER_ID)
    _, items, _ = ours(zotero_server)
    zotero_server.trash_item(library, items[0]["key"])
    assert CliRunner().invoke(cli, args, env=env).exit_code == 0
    result = CliRunner().invoke(cli, ["history"])
    assert result.exit_code == 0, result.output
    assert f"user:{ZOTERO_USER_ID}" in result.output and "dismissed" in result.output
    assert items[0]["title"] in result.output and "you moved it to the trash" in result.output
    shown = json.loads(CliRunner().invoke(cli, ["history", "--format", "json"]).stdout)
    assert len(shown["runs"]) == 2 and {p["fate"] for p in shown["papers"]} >= {"dismissed", "untouched"}
    forgot = CliRunner().invoke(cli, ["history", "--forget", f"user:{ZOTERO_USER_ID}"])
    assert forgot.exit_code == 0 and "Forgot" in forgot.output and "papers" in forgot.output
    with Memory() as memory:
        assert memory.runs() == [] and oct(memory.path.stat().st_mode & 0o777) == "0o600"


def test_a_group_sync_boosts_what_other_members_saved(zotero_server, papers):
    from .conftest import ZOTERO_GROUP_ID

    group = zotero_server.library("group", ZOTERO_GROUP_ID)
    for title in ("Sherlock Holmes detective crime fiction", "Earthquakes and seismic waves"):
        zotero_server.add_item(group, created_by=ZOTERO_USER_ID, title=title, abstractNote=title)
    colleagues = {papers[n].id: zotero_server.add_item(group, created_by=900 + n, title=papers[n].title,
                                                       itemType="conferencePaper") for n in (70, 71, 72)}
    report = sync(zotero_server, papers, top_n=80, library_id=ZOTERO_GROUP_ID, library_type="group")
    linked = {e.corpus_id: e for e in report.plan.entries if e.action == "link"}
    assert set(colleagues) <= set(linked)  # candidates (linked into the collection), not owned by this user
    boosted = [rec for rec in report.recommendations if rec.paper.id in colleagues]
    assert all(f"saved by 1 member of library {ZOTERO_GROUP_ID}" in rec.feedback for rec in boosted)
    unchanged = sync(zotero_server, papers, top_n=80, library_id=ZOTERO_GROUP_ID, library_type="group")
    assert unchanged.stats["requests"] == 1  # who saved what is remembered, like the cache


def test_papers_left_untouched_for_three_runs_step_aside(zotero_server, papers):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    other = zotero_server.add_item(library, title="The user's own paper")
    sync(zotero_server, papers, top_n=3)
    first = {d["key"] for d in ours(zotero_server)[2]}

    def user_works_then_sync(run):  # the user works in Zotero, never touching the recommendations
        zotero_server.edit_item(library, other, title=f"The user's own paper, edit {run}")
        return sync(zotero_server, papers, top_n=3)

    user_works_then_sync(1)
    assert sync(zotero_server, papers, top_n=3).result is None  # a run with no change in Zotero does not count
    user_works_then_sync(2)
    user_works_then_sync(3)
    assert {d["key"] for d in ours(zotero_server)[2]} == first  # three runs passed over, still there
    report = sync(zotero_server, papers, top_n=3)
    _, items, members = ours(zotero_server)
    assert report.result.removed == 3 and not first & {d["key"] for d in members}  # they stepped aside
    assert len(members) == 3 and first <= {d["key"] for d in items}  # fresh papers; nothing deleted outright
    assert report.result.trashed == 3 and all(library.items[key]["deleted"] == 1 for key in first)  # to the trash
    with Memory() as memory:
        assert {p.status for p in memory.papers(f"user:{ZOTERO_USER_ID}").values() if p.item_key in first} == {
            "trashed"}
    sync(zotero_server, papers, top_n=3)  # zotrec's own trash is no dismissal of them
    with Memory() as memory:
        assert {(p.fate, p.why) for p in memory.papers(f"user:{ZOTERO_USER_ID}").values() if p.item_key in first
                } == {("untouched", "zotrec moved it to the trash")}
