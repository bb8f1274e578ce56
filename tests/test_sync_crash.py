"""A sync killed after Zotero committed its write but before the answer came: the next run recognises the
papers zotrec sent (the pending record in its cache), keeps exactly N, never duplicates, and counts the
ones the user trashed meanwhile as dismissed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

from zotero_bridge.feedback.memory import Memory

from .conftest import REPO, ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_sync import corpus_file, ours  # noqa: F401  (a fixture)


def killed_between_commit_and_answer(server, args, env, cwd) -> None:
    """Run zotrec; the fake server kills it right after it stored the first papers, before it answers."""
    process: dict[str, subprocess.Popen] = {}
    killed = threading.Event()

    def kill(fake, result):
        if any(o["data"].get("itemType") == "conferencePaper" for o in result["successful"].values()):
            fake.after_write = None
            process["sync"].kill()
            process["sync"].wait()
            killed.set()

    server.after_write = kill
    process["sync"] = subprocess.Popen(args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process["sync"].communicate(timeout=120)
    assert killed.is_set() and process["sync"].returncode != 0


def live_members(server):
    collection, items, _ = ours(server)
    library = server.library("user", ZOTERO_USER_ID)
    return [d for d in library.items.values() if collection in d.get("collections", []) and not d.get("deleted")]


def test_a_run_killed_before_the_answer_is_recognised(zotero_server, corpus_file, tmp_path):
    data = tmp_path / "data"
    env = {**os.environ, "ZOTERO_API_KEY": ZOTERO_WRITE_KEY, "PYTHONPATH": str(REPO),
           "ZOTREC_DATA_DIR": str(data), "ZOTREC_CACHE_DIR": str(tmp_path / "cache")}
    base = [sys.executable, "-m", "zotero_bridge", "-q", "sync", "--library-id", str(ZOTERO_USER_ID),
            "--endpoint", zotero_server.url, "--corpus", str(corpus_file), "--features", "tfidf"]
    killed_between_commit_and_answer(zotero_server, [*base, "-n", "20"], env, tmp_path)
    _, items, _ = ours(zotero_server)
    assert len(items) == 20  # Zotero stored them all; zotrec never heard so

    library = zotero_server.library("user", ZOTERO_USER_ID)
    keys = sorted(d["key"] for d in items)
    trashed, tagged, taken_out = keys[:2], keys[2], keys[3]
    for key in trashed:
        zotero_server.trash_item(library, key)
    zotero_server.tag_item(library, tagged, "thesis")
    zotero_server.file_item(library, taken_out, remove=library.items[taken_out]["collections"][0])

    def run(n: int) -> dict:
        done = subprocess.run([*base, "-n", str(n), "--format", "json"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    run(10)
    members = {d["key"] for d in live_members(zotero_server)}
    assert tagged in members and taken_out not in members  # the user's choices stand
    assert len(members - {tagged}) == 10  # the papers that fell out are taken out again
    with Memory(data / "history.sqlite") as memory:
        remembered = memory.papers(f"user:{ZOTERO_USER_ID}")
    by_key = {paper.item_key: paper for paper in remembered.values()}
    assert {key for key in (d["key"] for d in items)} <= set(by_key)  # all twenty adopted
    assert [by_key[key].fate for key in (*trashed, taken_out)] == ["dismissed"] * 3
    assert by_key[tagged].fate == "kept"

    again = run(10)
    _, items, _ = ours(zotero_server)
    assert {d["key"] for d in live_members(zotero_server)} == members
    assert len({i["extra"].split()[1] for i in items}) == len(items)  # zero duplicates
    assert again["counts"]["add"] == 0 and again["counts"]["remove"] == 0


def test_the_desktop_path_recognises_them_too(tmp_path, corpus_file, monkeypatch):
    """The same plan through the desktop's local API (zotero:local)."""
    from .test_local_sync import NAME, seeded

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    desktop = seeded()
    try:
        desktop.dialog = ["always"]
        env = {**os.environ, "PYTHONPATH": str(REPO), "ZOTREC_DATA_DIR": str(tmp_path / "data"),
               "ZOTREC_CACHE_DIR": str(tmp_path / "cache")}
        base = [sys.executable, "-m", "zotero_bridge", "-q", "sync", "--library", f"zotero:local:{desktop.url}",
                "--corpus", str(corpus_file), "--features", "tfidf", "--model", "none"]
        killed_between_commit_and_answer(desktop, [*base, "-n", "20"], env, tmp_path)
        library = desktop.library()
        collection = next(k for k, d in library.collections.items() if d["name"] == NAME)

        def members():
            return [d for d in library.items.values() if collection in d.get("collections", [])
                    and d["itemType"] != "note" and not d.get("deleted")]

        assert len(members()) == 20
        trashed = sorted(d["key"] for d in members())[0]
        desktop.trash_item(library, trashed)
        done = subprocess.run([*base, "-n", "10"], env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert len(members()) == 10
        with Memory(tmp_path / "data" / "history.sqlite") as memory:
            fates = {p.item_key: p.fate for p in memory.papers(f"local:{desktop.server_id}").values()}
        assert fates[trashed] == "dismissed"
    finally:
        desktop.stop()
