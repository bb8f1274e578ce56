"""`zotrec sync` against the fake Zotero Web API: plan, write, re-run, faults, and the API key kept secret."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from recommender.corpus.readers import load_corpus
from recommender.retry import RetryPolicy
from zotero_bridge.cli.main import cli
from zotero_bridge.sources import SourceOptions
from recommender.scoring.ranking import Recommender
from zotero_bridge.sync.run import SyncRequest, run_sync

from .conftest import REPO, ZOTERO_GROUP_ID, ZOTERO_READ_KEY, ZOTERO_USER_ID, ZOTERO_WRITE_KEY

TOPICS = ["sherlock holmes detective crime fiction", "cell apoptosis neuron t cell activation",
          "plasma vacuum discharge diagnostics", "earthquakes seismic waves", "food allergy sensitization children",
          "nanotube sheets biscrolling yarns", "electron microscopy analysis", "biostatistics experimental design"]
METHODS = ["transformer", "diffusion model", "graph network", "bandit", "contrastive learning", "kernel method",
           "bayesian inference", "reinforcement learning", "sparse autoencoder", "federated training"]
NAME = "Recommended · ICML 2025"


def corpus_rows(count: int = 80) -> list[dict]:
    rng = random.Random(7)
    rows = []
    for number in range(count):
        topic, method = rng.choice(TOPICS), rng.choice(METHODS)
        words = " ".join(rng.choices((topic + " " + method).split() + ["data", "model", "we", "show"], k=40))
        rows.append({"id": f"icml2025/{number:03d}", "title": f"{method.title()} for {topic} ({number})",
                     "abstract": words, "authors": ["Ada Lovelace", "Alan Turing"], "year": 2025,
                     "venue": "ICML 2025", "url": f"https://icml.cc/virtual/2025/poster/{number}"})
    return rows


@pytest.fixture
def corpus_file(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in corpus_rows()), encoding="utf-8")
    return path


@pytest.fixture
def papers(corpus_file):
    return load_corpus([corpus_file]).papers


def sync(server, papers, *, top_n=20, dry_run=False, key=ZOTERO_WRITE_KEY, sleeps=None, **options):
    policy = RetryPolicy(sleep=sleeps if sleeps is not None else (lambda seconds: None))
    source = SourceOptions(library_id=str(options.pop("library_id", ZOTERO_USER_ID)), api_key=key,
                           endpoint=server.url, extra={"retry_policy": policy}, **options)
    return run_sync(SyncRequest(Recommender(papers), source, NAME, top_n=top_n, dry_run=dry_run))


def ours(server, library_type="user", library_id=ZOTERO_USER_ID):
    """zotrec's items in the library (not notes), and the one collection named NAME."""
    library = server.library(library_type, library_id)
    collections = [key for key, data in library.collections.items() if data["name"] == NAME]
    assert len(collections) == 1, "exactly one collection with our name"
    items = [d for d in library.items.values() if d["itemType"] != "note" and {"tag": "zotrec"} in d["tags"]]
    members = [d for d in library.items.values() if collections[0] in d.get("collections", [])]
    return collections[0], items, members


def test_first_sync_writes_the_collection(zotero_server, papers):
    report = sync(zotero_server, papers)
    collection, items, members = ours(zotero_server)
    assert report.result.created == 20 and len(items) == 20 and len(members) == 20
    item = items[0]
    assert item["itemType"] == "conferencePaper" and item["conferenceName"] == "ICML 2025"
    assert item["proceedingsTitle"].startswith("Proceedings of the 42nd International Conference")
    assert item["extra"].startswith("zotrec: icml2025/") and "score=" in item["extra"]
    assert item["creators"][0] == {"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"}
    library = zotero_server.library("user", ZOTERO_USER_ID)
    notes = [d for d in library.items.values() if d["itemType"] == "note" and d.get("parentItem")]
    assert {n["parentItem"] for n in notes} == {i["key"] for i in items}
    assert all("Because you saved" in n["note"] for n in notes)
    assert all("% match." in n["note"] for n in notes)  # the 0–100 match every reading-list format shows
    writes = zotero_server.writes()
    assert len(writes) == 2  # one collection, one batch of 20 papers + 20 notes (40 objects ≤ 50)
    assert report.stats["requests"] == report.stats["read_requests"] + 2


def test_rerun_writes_nothing_and_costs_one_request(zotero_server, papers):
    sync(zotero_server, papers)
    writes = len(zotero_server.writes())
    report = sync(zotero_server, papers)
    assert len(zotero_server.writes()) == writes
    assert Counter(e.action for e in report.plan.entries) == {"keep": 20}
    assert report.stats["requests"] == 1


def test_fallen_out_papers_leave_unless_the_user_touched_them(zotero_server, papers):
    sync(zotero_server, papers, top_n=20)
    collection, items, _ = ours(zotero_server)
    library = zotero_server.library("user", ZOTERO_USER_ID)
    ranked = sorted(items, key=lambda d: -float(d["extra"].split("score=")[1]))
    touched = ranked[-1]["key"]
    zotero_server.edit_item(library, touched, tags=[{"tag": "zotrec"}, {"tag": "read-later"}])
    report = sync(zotero_server, papers, top_n=15)
    _, items_after, members = ours(zotero_server)
    assert {i["key"] for i in items} <= {i["key"] for i in items_after}  # nothing deleted
    assert len(members) == 16 and touched in {m["key"] for m in members}
    assert report.result.removed >= 4
    assert any(e.action == "keep" and e.item_key == touched and "you kept it" in e.note for e in report.plan.entries)


def test_returning_papers_reuse_their_item(zotero_server, papers):
    sync(zotero_server, papers, top_n=20)
    sync(zotero_server, papers, top_n=10)
    report = sync(zotero_server, papers, top_n=20)
    _, items, members = ours(zotero_server)
    assert report.result.created == 0 and report.result.linked == 10
    assert len(items) == 20 and len(members) == 20


def test_a_paper_the_user_trashed_is_not_created_again(zotero_server, papers):
    sync(zotero_server, papers, top_n=5)
    _, items, _ = ours(zotero_server)
    library = zotero_server.library("user", ZOTERO_USER_ID)
    zotero_server.edit_item(library, items[0]["key"], deleted=1)
    trashed_id = items[0]["extra"].split()[1]
    report = sync(zotero_server, papers, top_n=5)
    assert trashed_id not in {e.corpus_id for e in report.plan.entries}  # dismissed: never recommended again
    assert report.result.created >= 1  # the next papers take its place: the collection is full again
    collection, after, members = ours(zotero_server)
    live = [m for m in members if not m.get("deleted")]
    assert len(live) == 5 and [i["extra"].split()[1] for i in after].count(trashed_id) == 1
    assert library.items[items[0]["key"]]["deleted"] == 1


def test_dry_run_sends_no_write(zotero_server, corpus_file):
    args = ["sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus",
            str(corpus_file), "--dry-run", "-n", "5", "--features", "tfidf"]
    result = CliRunner().invoke(cli, args, env={"ZOTERO_API_KEY": ZOTERO_READ_KEY})
    assert result.exit_code == 0, result.output
    assert zotero_server.writes() == []
    assert "dry run: nothing was written" in result.output
    added = [line for line in result.output.splitlines() if line.startswith("  add ")]
    assert len(added) == 5 and all(" for " in line and "#" in line for line in added)  # titles, ranks


def test_read_only_key_says_it_cannot_write(zotero_server, corpus_file):
    args = ["sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus",
            str(corpus_file), "--features", "tfidf"]
    result = CliRunner().invoke(cli, args, env={"ZOTERO_API_KEY": ZOTERO_READ_KEY})
    assert result.exit_code == 1
    assert "cannot write to user library" in result.output and "--dry-run" in result.output
    assert ZOTERO_READ_KEY not in result.output


def test_invalid_key_and_missing_library_id(zotero_server, corpus_file):
    base = ["sync", "--endpoint", zotero_server.url, "--corpus", str(corpus_file), "--features", "tfidf"]
    result = CliRunner().invoke(cli, [*base, "--library-id", str(ZOTERO_USER_ID)],
                                env={"ZOTERO_API_KEY": "not-a-real-key-987"})
    assert result.exit_code == 1 and "refused the API key for user library" in result.output
    assert "not-a-real-key-987" not in result.output
    result = CliRunner().invoke(cli, base, env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert result.exit_code == 1 and "no Zotero user library id" in result.output


def test_group_library_sync(zotero_server, papers):
    group = zotero_server.library("group", ZOTERO_GROUP_ID)
    zotero_server.add_item(group, title="Sherlock Holmes and detective fiction", abstractNote="Crime fiction.")
    report = sync(zotero_server, papers, top_n=3, library_id=ZOTERO_GROUP_ID, library_type="group")
    _, items, members = ours(zotero_server, "group", ZOTERO_GROUP_ID)
    assert report.result.created == 3 and len(members) == 3
    assert all("/groups/" in path for method, path in zotero_server.writes())


def test_conflict_mid_run_rereads_and_replans(zotero_server, papers):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    someone = next(iter(library.items))
    zotero_server.before_write = lambda server: server.edit_item(library, someone, title="Edited meanwhile")
    report = sync(zotero_server, papers)
    assert report.rounds == 2
    _, items, members = ours(zotero_server)
    assert len(items) == 20 and len(members) == 20


def test_partial_failures_are_sent_again_or_reported(zotero_server, papers):
    zotero_server.fail_objects.extend([(500, "Internal error"), (500, "Internal error")])
    report = sync(zotero_server, papers, top_n=10)
    _, items, _ = ours(zotero_server)
    assert report.result.created == 10 and len(items) == 10 and report.result.failed == []
    library = zotero_server.library("user", ZOTERO_USER_ID)
    notes = [d for d in library.items.values() if d["itemType"] == "note" and d.get("parentItem")]
    assert len(notes) == 10
    zotero_server.fail_objects.append((400, "'title' is too long"))
    report = sync(zotero_server, papers, top_n=11)
    assert len(report.result.failed) == 2 and "too long" in report.result.failed[0]  # the paper and its note


def test_5xx_and_429_on_writes_are_retried_without_duplicates(zotero_server, papers):
    waits: list[float] = []
    zotero_server.inject(503, method="POST", headers={"Retry-After": "3"})
    zotero_server.inject(429, times=2, method="POST", path_contains="/items", headers={"Retry-After": "2"})
    report = sync(zotero_server, papers, top_n=10, sleeps=waits.append)
    _, items, members = ours(zotero_server)
    assert report.result.created == 10 and len(items) == 10 and len(members) == 10
    assert [round(w) for w in waits] == [3, 2, 2]


def test_killed_after_the_first_batch_then_run_again(zotero_server, corpus_file, tmp_path):
    """A real process, killed by the server right after it stored the first batch of papers."""
    env = {**os.environ, "ZOTERO_API_KEY": ZOTERO_WRITE_KEY, "PYTHONPATH": str(REPO)}
    args = [sys.executable, "-m", "zotero_bridge", "-q", "sync", "--library-id", str(ZOTERO_USER_ID),
            "--endpoint", zotero_server.url, "--corpus", str(corpus_file), "-n", "40", "--features", "tfidf"]
    process: dict[str, subprocess.Popen] = {}
    killed = threading.Event()

    def kill_after_first_batch(server, result):
        if any(o["data"]["itemType"] == "conferencePaper" for o in result["successful"].values()):
            server.after_write = None
            process["sync"].kill()
            killed.set()

    zotero_server.after_write = kill_after_first_batch
    process["sync"] = subprocess.Popen(args, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process["sync"].communicate(timeout=120)
    assert killed.is_set()
    _, items, _ = ours(zotero_server)
    assert len(items) == 25  # the first batch: 25 papers + 25 notes = 50 objects
    rerun = subprocess.run([*args, "--format", "json"], env=env, cwd=tmp_path, capture_output=True, timeout=120,
                           text=True)
    assert rerun.returncode == 0, rerun.stderr
    _, items, members = ours(zotero_server)
    assert len(items) == 40 and len(members) == 40
    assert len({i["extra"].split()[1] for i in items}) == 40  # zero duplicates
    assert json.loads(rerun.stdout)["counts"] == {"add": 15, "link": 0, "keep": 25, "remove": 0, "trash": 0, "skip": 0}


def test_the_api_key_never_shows(zotero_server, corpus_file):
    args = ["-v", "sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus",
            str(corpus_file), "--features", "tfidf", "--format", "json", "--save-config"]
    zotero_server.inject(429, times=1, headers={"Retry-After": "0.01"})
    zotero_server.inject(500, times=1, method="POST")
    result = CliRunner().invoke(cli, args, env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["requests"]["requests"] >= 4 and report["counts"]["add"] == 20
    assert ZOTERO_WRITE_KEY not in result.output and ZOTERO_WRITE_KEY not in result.stderr
    cache_files = list(Path(os.environ["XDG_CACHE_HOME"]).rglob("*.sqlite"))
    assert cache_files and all(ZOTERO_WRITE_KEY.encode() not in f.read_bytes() for f in cache_files)
    failing = CliRunner().invoke(cli, ["-v", *args[1:-1], "--endpoint", zotero_server.url + "/nowhere"],
                                 env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert failing.exit_code == 1 and ZOTERO_WRITE_KEY not in failing.output + failing.stderr


def test_model_option_plans_the_same_hybrid_ranking_as_reading_list(zotero_server, corpus_file):
    from recommender.collaborative.dense_model import SHIPPED_MODEL

    common = ["--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus", str(corpus_file),
              "-n", "5", "--features", "dense", "--model", str(SHIPPED_MODEL), "--format", "json"]
    env = {"ZOTERO_API_KEY": ZOTERO_READ_KEY}
    planned = CliRunner().invoke(cli, ["sync", "--dry-run", *common], env=env)
    listed = CliRunner().invoke(cli, ["reading-list", "--library", "zotero:web", *common], env=env)
    content = CliRunner().invoke(cli, ["reading-list", "--library", "zotero:web", *common[:-4], "--model", "none",
                                       "--format", "json"], env=env)
    assert planned.exit_code == 0 and listed.exit_code == 0 and content.exit_code == 0, planned.output + listed.output
    adds = [(e["title"], e["score"]) for e in json.loads(planned.stdout)["plan"] if e["action"] == "add"]
    assert [title for title, _ in adds] == [row["title"] for row in json.loads(listed.stdout)]
    assert np.allclose([score for _, score in adds], [row["score"] for row in json.loads(listed.stdout)], rtol=1e-6)
    # the model was used: its scores differ from the content-only fused ones
    assert [row["score"] for row in json.loads(listed.stdout)] != [row["score"] for row in json.loads(content.stdout)]


def test_sync_reads_the_corpus_through_the_prepared_cache(zotero_server, corpus_file):
    """`zotrec sync` builds its recommender as reading-list does: from the prepared-corpus cache."""
    from recommender.scoring.prepared import prepared_dir

    args = ["sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus",
            str(corpus_file), "--features", "tfidf", "--format", "json", "--dry-run"]
    first = CliRunner().invoke(cli, args, env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert first.exit_code == 0, first.output
    entries = list(prepared_dir().glob("corpus-*.npz"))
    assert len(entries) == 1
    stamp = entries[0].stat().st_ino  # a rebuilt entry is a new file
    second = CliRunner().invoke(cli, args, env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert second.exit_code == 0, second.output
    assert entries[0].stat().st_ino == stamp  # read, not rebuilt
    assert json.loads(first.stdout)["plan"] == json.loads(second.stdout)["plan"]
