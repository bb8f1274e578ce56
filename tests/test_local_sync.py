"""`zotrec sync --library zotero:local` against a stateful fake of Zotero's local API (tests/fake_local_api.py),
through real pyzotero in local mode over real HTTP on 127.0.0.1: the dialog's three answers, the key kept per
Zotero-Server-ID, refusals (Zotero 9, switched off, not running, server id), and the same plan as the Web API."""

from __future__ import annotations

import json
import math
import os
import re
import stat
import time
from collections import Counter

import pytest
from click.testing import CliRunner

from tests.fake_local_api import FakeLocalZotero
from zotero_bridge.cli.main import cli
from zotero_bridge.local_api.keys import KeyStore, key_file
from recommender.retry import RetryPolicy
from zotero_bridge.sources import SourceOptions
from recommender.scoring.ranking import Recommender
from zotero_bridge.sync.run import SyncRequest, local_transport, run_sync

from .conftest import PYZOTERO_RESPONSES
from .test_sync import corpus_file, corpus_rows, papers  # noqa: F401 (the Web API sync's corpus fixtures)

NAME = "Recommended · ICML 2025"




def seeded(version: str = "10.0", **kwargs) -> FakeLocalZotero:
    """A desktop whose My Library holds the recorded pyzotero items and collections, and a trashed paper."""
    fixtures = PYZOTERO_RESPONSES
    desktop = FakeLocalZotero(version, **kwargs)
    library = desktop.library()
    for collection in json.loads((fixtures / "collections_doc.json").read_text(encoding="utf-8")):
        library.collections[collection["key"]] = dict(collection["data"], version=1)
    for item in json.loads((fixtures / "items_doc.json").read_text(encoding="utf-8")):
        library.items[item["key"]] = dict(item["data"], version=1)
    desktop.add_item(library, title="A paper the user threw away", deleted=True)
    return desktop.start()


@pytest.fixture
def desktop(monkeypatch):
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    server = seeded()
    yield server
    server.stop()


def sync(desktop, papers, *, top_n=20, dry_run=False, group=None, sleeps=None, recommender=None):
    policy = RetryPolicy(sleep=sleeps.append if sleeps is not None else (lambda seconds: None))
    options = SourceOptions(group=group, extra={"retry_policy": policy})
    return run_sync(SyncRequest(recommender or Recommender(papers), options, NAME, top_n=top_n, dry_run=dry_run,
                                transport=local_transport(desktop.url)))


def ours(desktop, library=None):
    """zotrec's items (not notes), their notes, and the members of the one collection named NAME."""
    library = library or desktop.library()
    collections = [key for key, data in library.collections.items() if data["name"] == NAME]
    assert len(collections) == 1, "exactly one collection with our name"
    items = [d for d in library.items.values() if d["itemType"] != "note" and {"tag": "zotrec"} in d["tags"]]
    notes = [d for d in library.items.values() if d["itemType"] == "note" and d.get("parentItem")]
    members = [d for d in library.items.values() if collections[0] in d.get("collections", [])]
    return items, notes, members


def sync_cli(desktop, corpus_file, *extra):
    args = ["sync", "--library", f"zotero:local:{desktop.url}", "--corpus", str(corpus_file), "--features", "tfidf",
            "--model", "none", "-n", "5", *extra]
    return CliRunner().invoke(cli, args)


# ---- done when ---------------------------------------------------------------------------------------------
def test_always_allow_writes_the_collection_with_notes_and_keeps_the_key(desktop, papers, caplog):
    desktop.dialog = ["always"]
    report = sync(desktop, papers)
    items, notes, members = ours(desktop)
    assert report.result.created == 20 and len(items) == 20 and len(members) == 20
    assert {n["parentItem"] for n in notes} == {i["key"] for i in items}
    assert all("Because you saved" in n["note"] for n in notes)
    assert desktop.prompts == ["zotrec"]
    assert [m for m, _ in desktop.writes()] == ["POST"] * 4  # 401, the dialog, the collection, 20 papers + 20 notes
    sent = [h for m, _, h in desktop.requests if m == "POST"]
    assert all(h.get("Zotero-Server-ID") == desktop.server_id for h in sent)
    key = next(iter(desktop.keys))
    assert json.loads(key_file().read_text()) == {desktop.server_id: key}
    assert stat.S_IMODE(os.stat(key_file()).st_mode) == 0o600
    assert key not in caplog.text and key not in json.dumps(report.as_dict())
    assert "Always Allow" in caplog.text


def test_an_unchanged_resync_writes_nothing_and_asks_nothing(desktop, papers):
    desktop.dialog = ["always"]
    sync(desktop, papers)
    writes = len(desktop.writes())
    report = sync(desktop, papers)
    assert len(desktop.writes()) == writes and desktop.prompts == ["zotrec"]
    assert Counter(e.action for e in report.plan.entries) == {"keep": 20}
    assert report.result is None


def test_a_trashed_item_is_replaced_and_never_created_again(desktop, papers):
    desktop.dialog = ["always"]
    sync(desktop, papers, top_n=5)
    items, _, _ = ours(desktop)
    desktop.trash_item(desktop.library(), items[0]["key"])
    trashed_id = items[0]["extra"].split()[1]
    report = sync(desktop, papers, top_n=5)
    assert trashed_id not in {e.corpus_id for e in report.plan.entries}
    assert report.result.created >= 1
    again = sync(desktop, papers, top_n=5)
    assert trashed_id not in {e.corpus_id for e in again.plan.entries}
    after, _, members = ours(desktop)
    assert len([m for m in members if not m.get("deleted")]) == 5
    assert [i["extra"].split()[1] for i in after].count(trashed_id) == 1
    assert desktop.library().items[items[0]["key"]]["deleted"] is True  # zotrec never takes it out of the trash


def test_deny_is_one_line_exit_1_and_nothing_written(desktop, corpus_file):
    before = json.dumps(desktop.library().items, sort_keys=True), dict(desktop.library().collections)
    desktop.dialog = ["deny"]
    result = sync_cli(desktop, corpus_file)
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "denied" in errors[0] and "Always Allow" in errors[0]
    assert "Traceback" not in result.output
    assert (json.dumps(desktop.library().items, sort_keys=True), desktop.library().collections) == before
    assert not key_file().exists()


def test_zotero_9_says_so_in_one_line_naming_the_fallback(monkeypatch, corpus_file):
    old = seeded("9.0")
    try:
        result = sync_cli(old, corpus_file)
    finally:
        old.stop()
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Zotero 7–9" in errors[0] and "--format ris" in errors[0]
    assert old.writes() == []


def test_allow_once_asks_again_for_each_write_and_keeps_no_key(desktop, papers, caplog):
    desktop.dialog = ["allow", "allow"]
    report = sync(desktop, papers, top_n=5)
    assert report.result.created == 5 and len(desktop.prompts) == 2  # the collection, then the papers
    assert desktop.keys == {} and not key_file().exists()
    assert "one write" in caplog.text


# ---- authorization as a person meets it ---------------------------------------------------------------------
def test_the_authorize_path_comes_from_the_401_body(monkeypatch, papers):
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    development = seeded(authorize_path="/api/authorize-local")  # the development build's name for it
    try:
        development.dialog = ["always"]
        assert sync(development, papers, top_n=3).result.created == 3
        assert any(p == "/api/authorize-local" for _, p in development.writes())
    finally:
        development.stop()


def test_a_kept_key_is_reused_and_a_cleared_one_asked_for_again(desktop, papers):
    desktop.dialog = ["always"]
    sync(desktop, papers, top_n=3)
    sync(desktop, papers, top_n=5)  # writes again with the kept key, no dialog
    assert len(desktop.prompts) == 1
    desktop.keys.clear()  # Settings → Advanced → clear the authorizations
    desktop.dialog = ["always"]
    report = sync(desktop, papers, top_n=8)
    assert report.result.created == 3 and len(desktop.prompts) == 2
    assert json.loads(key_file().read_text()) == {desktop.server_id: next(iter(desktop.keys))}


def test_the_dialog_rate_limit_is_waited_out(desktop, papers):
    sleeps: list[float] = []
    desktop.clock = lambda: time.time() + sum(sleeps)  # zotrec's waits pass on the desktop's clock
    desktop.dialog = ["always"]
    desktop.authorize_times = [desktop.clock()] * 5  # five dialogs in the last minute
    sync(desktop, papers, top_n=3, sleeps=sleeps)
    assert sleeps and 55 <= sleeps[0] <= 60 and len(desktop.prompts) == 1


def test_429_on_a_write_honours_retry_after(desktop, papers):
    desktop.dialog = ["always"]
    desktop.inject(429, method="POST", path_contains="/items", headers={"Retry-After": "7"})
    sleeps: list[float] = []
    assert sync(desktop, papers, top_n=3, sleeps=sleeps).result.created == 3
    assert 7.0 in sleeps


def test_retry_after_nan_and_an_http_date_on_a_write(desktop, papers):
    """'nan' is no number of seconds (our own backoff, not sleep(nan)); an HTTP date is the wait it names."""
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    desktop.dialog = ["always"]
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    desktop.inject(429, method="POST", path_contains="/collections", headers={"Retry-After": "nan"})
    desktop.inject(429, method="POST", path_contains="/items", headers={"Retry-After": later})
    sleeps: list[float] = []
    assert sync(desktop, papers, top_n=3, sleeps=sleeps).result.created == 3
    waits = [s for s in sleeps if s]  # (the write after the dialog is tried again at once)
    assert len(waits) == 2 and all(math.isfinite(s) for s in waits), sleeps
    assert 25 <= waits[1] <= 31, f"the HTTP date's 30 s, not 1 s: {sleeps}"


def test_a_key_is_kept_per_server_id(desktop, papers):
    desktop.dialog = ["always"]
    sync(desktop, papers, top_n=3)
    first = KeyStore().get(desktop.server_id)
    desktop.server_id = "RESTORED0001"  # another profile or a restored database answers now
    desktop.dialog = ["always"]
    sync(desktop, papers, top_n=5)  # two more papers to write
    assert len(desktop.prompts) == 2  # the old database's key is never sent to this one
    assert KeyStore().get("RESTORED0001") not in (None, first)
    sent = [h.get("Zotero-API-Key") for m, p, h in desktop.requests if m == "POST" and "RESTORED" in
            h.get("Zotero-Server-ID", "")]
    assert first not in sent


@pytest.mark.parametrize(("status", "body", "words"), [
    (412, "Zotero-Server-ID does not match this Zotero instance", "another Zotero database"),
    (428, "Zotero-Server-ID not provided", "server id"),
])
def test_server_id_refusals_are_one_line(desktop, corpus_file, status, body, words):
    desktop.dialog = ["always"]
    desktop.inject(status, method="POST", path_contains="/collections", body=body)
    result = sync_cli(desktop, corpus_file)
    assert result.exit_code == 1 and words in result.output and "Traceback" not in result.output


def test_switched_off_and_not_running_say_what_to_do(desktop, corpus_file):
    desktop.enabled = False
    result = sync_cli(desktop, corpus_file)
    assert result.exit_code == 1 and "switched off" in result.output and "Settings → Advanced" in result.output
    url = desktop.url
    desktop.stop()
    result = CliRunner().invoke(cli, ["sync", "--library", f"zotero:local:{url}", "--corpus", str(corpus_file),
                                      "--features", "tfidf", "--model", "none"])
    assert result.exit_code == 1 and "Zotero is not running" in result.output and "start Zotero" in result.output


def test_a_group_library_on_this_computer(desktop, papers):
    lab = desktop.library("group", 4711)
    lab.name = "Lab"
    desktop.add_item(lab, title="Sparse autoencoder features in transformers", abstractNote="sparse autoencoder")
    desktop.dialog = ["always"]
    report = sync(desktop, papers, top_n=4, group="Lab")
    assert report.result.created == 4 and len(ours(desktop, lab)[0]) == 4
    assert all("/api/groups/4711/" in p for m, p in desktop.writes() if "authorize" not in p)
    assert not [d for d in desktop.library().collections.values() if d["name"] == NAME]


def test_dry_run_needs_no_permission(desktop, papers):
    report = sync(desktop, papers, top_n=5, dry_run=True)
    assert len(report.plan.of("add")) == 5 and desktop.writes() == [] and desktop.prompts == []


# ---- the fake behaves like Zotero (checked through pyzotero's own local mode) ----------------------------------
def test_pyzotero_local_mode_against_the_fake(desktop):
    from pyzotero import errors, zotero

    zot = zotero.Zotero(0, "user", local=True)
    zot.endpoint = desktop.url
    assert len(zot.everything(zot.top(limit=5))) == len([d for d in desktop.library().items.values()
                                                         if not d.get("parentItem") and not d.get("deleted")])
    assert zot.server_id == desktop.server_id  # taken from the first answer
    with pytest.raises(errors.PyZoteroError):
        zot.item_template("conferencePaper")  # no /items/new locally
    with pytest.raises(errors.LocalAPIKeyRequiredError):
        zot.create_items([{"itemType": "book", "title": "x"}])
    desktop.dialog = ["deny", "allow"]
    with pytest.raises(errors.LocalAPIDeniedError):
        zot.authorize_local("zotrec tests")
    assert zot.authorize_local("zotrec tests")["remember"] is False
    created = zot.create_items([{"itemType": "book", "title": "Once"}])
    assert list(created["success"].values())
    with pytest.raises(errors.LocalAPIKeyRequiredError):  # "Allow" was good for one write
        zot.create_items([{"itemType": "book", "title": "Twice"}])
    zot.server_id = "SOMEONEELSE1"
    with pytest.raises(errors.ServerIDMismatchError):
        zot.create_items([{"itemType": "book", "title": "Elsewhere"}])


def test_the_fake_keeps_zoteros_write_rules(desktop):
    import httpx2

    desktop.keys["k" * 32] = True
    base = {"Zotero-Server-ID": desktop.server_id, "Zotero-API-Key": "k" * 32}
    url = f"{desktop.url}/users/0/items"
    with httpx2.Client() as client:
        token = {**base, "Zotero-Write-Token": "abcdef12"}
        assert client.post(url, json=[{"itemType": "book"}], headers=token).status_code == 200
        reused = client.post(url, json=[{"itemType": "book"}], headers=token)
        assert reused.status_code == 412 and "already used" in reused.text
        assert client.post(url, json=[{"itemType": "book"}], headers={**base, "Zotero-Write-Token": "abc"}
                           ).status_code == 400
        too_many = client.post(url, json=[{"itemType": "book"}] * 51, headers=base)
        assert too_many.status_code == 413 and too_many.reason_phrase == "undefined"
        stale = client.post(url, json=[{"itemType": "book"}], headers={**base, "If-Unmodified-Since-Version": "1"})
        assert stale.status_code == 412
        no_id = client.post(url, json=[{"itemType": "book"}], headers={"Zotero-API-Key": "k" * 32})
        assert no_id.status_code == 428 and no_id.headers["Zotero-Server-ID"] == desktop.server_id
        no_key = client.post(url, json=[{"itemType": "book"}], headers={"Zotero-Server-ID": desktop.server_id})
        assert no_key.status_code == 401 and re.search(r"POST /api/local/authorize", no_key.text)
        assert no_key.headers["WWW-Authenticate"].startswith("Zotero-API-Key")
        with pytest.raises(httpx2.TransportError):  # a browser's request gets no answer at all
            client.get(url, headers={"User-Agent": "Mozilla/5.0"})
        assert client.get(f"{desktop.url}/users/0/deleted?since=0").status_code == 404


# ---- reading-list and score learn by sync's rule ---------------------------------------------------------------
def _reasons(output: str) -> set[str]:
    return {reason["key"] for row in json.loads(output) for reason in row["reasons"]}


def test_reading_list_on_zotero_web_learns_only_from_own_and_kept_items(zotero_server, papers, corpus_file):
    from .conftest import ZOTERO_READ_KEY, ZOTERO_USER_ID
    from .test_sync import ours as web_ours
    from .test_sync import sync as web_sync

    web_sync(zotero_server, papers, top_n=6)
    collection, items, _ = web_ours(zotero_server)
    library = zotero_server.library("user", ZOTERO_USER_ID)
    removed, kept = items[0]["key"], items[1]["key"]
    zotero_server.file_item(library, removed, remove=collection)  # taken out of the collection: dismissed
    zotero_server.tag_item(library, kept, "to-read")
    result = CliRunner().invoke(cli, [
        "reading-list", "--library", "zotero:web", "--library-id", str(ZOTERO_USER_ID), "--endpoint",
        zotero_server.url, "--corpus", str(corpus_file), "-n", "0", "--features", "tfidf", "--model", "none",
        "--format", "json"], env={"ZOTERO_API_KEY": ZOTERO_READ_KEY})
    assert result.exit_code == 0, result.output
    cited = _reasons(result.stdout) & {item["key"] for item in items}
    assert removed not in cited and cited <= {kept}  # never "because you saved" a dismissed or untouched pick
    assert kept in cited


def test_reading_list_on_zotero_local_learns_from_what_local_sync_wrote(desktop, papers, corpus_file):
    desktop.dialog = ["always"]
    sync(desktop, papers, top_n=6)
    items, _, _ = ours(desktop)
    desktop.trash_item(desktop.library(), items[0]["key"])
    desktop.edit_item(desktop.library(), items[1]["key"], tags=[{"tag": "zotrec"}, {"tag": "to-read"}])
    result = CliRunner().invoke(cli, ["reading-list", "--library", f"zotero:local:{desktop.url}", "--corpus",
                                      str(corpus_file), "-n", "0", "--features", "tfidf", "--model", "none",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    assert _reasons(result.stdout) & {item["key"] for item in items} == {items[1]["key"]}
    trashed_id = items[0]["extra"].split()[1]
    assert trashed_id not in {row["id"] for row in json.loads(result.stdout)}


def test_score_on_a_zotero_sqlite_ignores_recommendations_not_kept(tmp_path, corpus_file):
    from .zotero_db import ZoteroDatabase
    rows = corpus_rows()
    db = ZoteroDatabase(tmp_path / "ada.sqlite")
    db.add_item("journalArticle", {"title": "My own paper on plasma vacuum discharge diagnostics",
                                   "abstractNote": "plasma vacuum discharge diagnostics bandit kernel method"})
    picks = {}
    for row in rows[:3]:
        picks[row["title"]] = db.add_item("conferencePaper", {
            "title": row["title"], "abstractNote": row["abstract"], "extra": f"zotrec: {row['id']} score=0.5"},
            tags=["zotrec"])
    db.close()
    out = tmp_path / "scores.jsonl"
    result = CliRunner().invoke(cli, ["score", "--libraries", str(tmp_path / "ada.sqlite"), "--corpus",
                                      str(corpus_file), "--features", "tfidf", "--model", "none", "-n", "0",
                                      "--format", "jsonl", "--out", str(out)])
    assert result.exit_code == 0, result.output
    cited = {r["title"] for line in out.read_text().splitlines() for r in json.loads(line)["reasons"]}
    assert cited == {"My own paper on plasma vacuum discharge diagnostics"}
