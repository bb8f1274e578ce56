"""Batch scoring: reading-list's ranking per user, resume, bad libraries, group summary, --top 0."""

from __future__ import annotations

import csv
import io
import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from recommender import LibraryItem, Paper, Recommender
from recommender.batch.runner import BatchScorer, GroupSummary, score_libraries
from recommender.features.tfidf import TfidfRepresentation
from recommender.scoring.match import with_match
from recommender.scoring.owned import owned_mask
from zotero_bridge.cli.main import cli

from .conftest import REPO, SEEDS

LIBRARY = REPO / "examples" / "library.bib"
FLOWS_BIB = """@article{flows, title={Heavy tails in normalizing flows},
abstract={Density estimation with flows and heavy tailed base distributions.}}
@article{ts, title={Time series forecasting foundation models}, abstract={Periodic patterns in forecasting.}}
"""
RL_RIS = "\n".join([
    "TY  - JOUR",
    "TI  - Reward models for reinforcement learning from human feedback",
    "AB  - Preference data trains a reward model that aligns a language model.",
    "ER  - ",
    "",
])
GRAPHS_JSONL = '{"key": "g1", "title": "Graph neural networks for molecules"}\n' \
               '{"key": "g2", "title": "Message passing and oversmoothing in deep graph networks"}\n'


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


# The 31 seed papers as the corpus (the default is the 3,330-paper ICML list): what is compared here
# is batch scoring against reading-list, and `_seed_papers()` is the corpus the expectations use.
SEED_CORPUS = [part for seed in SEEDS for part in ("--corpus", seed)]


def score(*args):
    """`zotrec score` on tf-idf features (fast, and the same in every install)."""
    return run("score", "--features", "tfidf", *SEED_CORPUS, *args)


def reading_list(*args):
    return run("reading-list", "--features", "tfidf", *SEED_CORPUS, *args)


@pytest.fixture
def lab(tmp_path):
    """A folder of four users' libraries in three formats."""
    folder = tmp_path / "lab"
    folder.mkdir()
    shutil.copy(LIBRARY, folder / "alice.bib")
    (folder / "bob.bib").write_text(FLOWS_BIB, encoding="utf-8")
    (folder / "carol.ris").write_text(RL_RIS, encoding="utf-8")
    (folder / "dave.jsonl").write_text(GRAPHS_JSONL, encoding="utf-8")
    return folder


def jsonl_rows(text):
    return [json.loads(line) for line in text.splitlines()]


def by_user(rows):
    users: dict[str, list] = {}
    for row in rows:
        users.setdefault(row["user"], []).append(row)
    return users


@pytest.mark.parametrize("top", [0, 5])
def test_each_user_gets_exactly_the_reading_list(lab, tmp_path, top):
    out = tmp_path / "scores.jsonl"
    result = score("--libraries", lab, "--top", top, "--format", "jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    users = by_user(jsonl_rows(out.read_text(encoding="utf-8")))
    assert sorted(users) == ["alice", "bob", "carol", "dave"]
    for user, rows in users.items():
        [path] = lab.glob(f"{user}.*")
        expected = json.loads(reading_list("--library", path, "--top", top, "--format", "json").stdout)
        assert [(r["rank"], r["id"], r["title"], r["score"]) for r in rows] == \
               [(e["rank"], e["id"], e["title"], e["score"]) for e in expected]
        assert [r["reasons"] for r in rows] == [e["reasons"] for e in expected]


def test_equal_to_reading_list_on_the_icml_titles(lab, tmp_path):
    corpus = REPO / "recommender" / "data" / "icml2025.jsonl"  # the bundled list
    result = score("--libraries", lab / "alice.bib", lab / "dave.jsonl", "--corpus", corpus, "-n", 50)
    assert result.exit_code == 0, result.output
    users = by_user(list(csv.DictReader(io.StringIO(result.stdout))))
    for user, path in (("alice", lab / "alice.bib"), ("dave", lab / "dave.jsonl")):
        expected = json.loads(reading_list("--library", path, "--corpus", corpus, "-n", 50,
                                  "--format", "json").stdout)
        got = [(r["id"], float(r["score"])) for r in users[user]]
        assert got == [(e["id"], e["score"]) for e in expected]


def test_default_features_match_reading_list_defaults(lab):
    result = run("score", "--libraries", lab / "bob.bib", "-n", 5, "--format", "jsonl", *SEED_CORPUS)
    assert result.exit_code == 0, result.output
    expected = run("reading-list", "--library", lab / "bob.bib", "-n", 5, "--format", "json", *SEED_CORPUS).stdout
    got = [(r["id"], r["score"]) for r in jsonl_rows(result.stdout)]
    assert got == [(e["id"], e["score"]) for e in json.loads(expected)]


def test_python_scorer_equals_recommender_including_owned_papers():
    corpus = [
        Paper(id="a", title="Normalizing flows for density estimation", abstract="Flows.", doi="10.1/A"),
        Paper(id="b", title="Forecasting time series", abstract="Periodic.", url="https://x.org/b/"),
        Paper(id="c", title="Reward models", abstract="Human feedback."),
        Paper(id="d", title="Graph networks", abstract="Message passing."),
    ]
    library = [
        LibraryItem(key="1", title="Density estimation with flows", doi="https://doi.org/10.1/a"),
        LibraryItem(key="2", title="Other", url="http://www.x.org/b"),
        LibraryItem(key="3", title="reward models!"),
        LibraryItem(key="4", title="Graph message passing"),
    ]
    assert list(owned_mask(library, corpus)) == [True, True, True, False]
    assert [r.paper.id for r in BatchScorer(Recommender(corpus), top_n=0).score(library)] == ["d"]


@pytest.fixture
def dense_model(shared):
    """The shipped dense collaborative model, its path, and 300 CiteULike titles to make a library of."""
    from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel

    titles = (shared / "data" / "citeulike-a" / "titles.txt").read_text(encoding="utf-8").splitlines()[:300]
    return DenseCollaborativeModel.load(SHIPPED_MODEL), SHIPPED_MODEL, titles


def test_python_scorer_equals_recommender_with_a_collaborative_model(dense_model):
    model, _, titles = dense_model
    recommender = Recommender(_seed_papers(), representation="dense", model=model)
    library = [LibraryItem(key=str(i), title=title) for i, title in enumerate(titles[:30])]
    scorer = BatchScorer(recommender, top_n=0)
    assert scorer.score(library) == with_match(recommender.recommend(library, top_n=0), "dense")
    assert scorer.score(library) != BatchScorer(Recommender(_seed_papers(), representation="dense"),
                                                top_n=0).score(library)


def test_model_option_gives_reading_lists_hybrid_ranking(lab, dense_model):
    _, path, _ = dense_model
    dense = ("--features", "dense", "--model", path)
    result = score("--libraries", lab, *dense, "-n", 8, "--format", "jsonl")
    assert result.exit_code == 0, result.output
    users = by_user(jsonl_rows(result.stdout))
    for user in ("alice", "bob"):
        [library] = lab.glob(f"{user}.*")
        listed = reading_list("--library", library, *dense, "-n", 8, "--format", "json")
        expected = json.loads(listed.stdout)
        assert [r["id"] for r in users[user]] == [e["id"] for e in expected]
        assert [r["reasons"] for r in users[user]] == [e["reasons"] for e in expected]
        assert np.allclose([r["score"] for r in users[user]], [e["score"] for e in expected], rtol=1e-6)
    plain = by_user(jsonl_rows(score("--libraries", lab, "--features", "dense", "--model", "none", "-n", 8,
                                     "--format", "jsonl").stdout))
    assert [r["score"] for r in plain["alice"]] != [r["score"] for r in users["alice"]]


def test_rerun_skips_finished_users_and_redoes_a_torn_one(lab, tmp_path):
    recommender = Recommender(_seed_papers())
    users = {path.stem: path for path in sorted(lab.iterdir())}
    full = tmp_path / "full.csv"
    score_libraries(recommender, users, load=_load, output=full, top_n=4)
    lines = full.read_text(encoding="utf-8").splitlines(keepends=True)
    bob_rows = [i for i, line in enumerate(lines) if line.startswith("bob,")]
    # a kill in the middle of bob's block, and in the middle of a line
    torn = tmp_path / "torn.csv"
    torn.write_text("".join(lines[: bob_rows[1]]) + lines[bob_rows[1]][:10], encoding="utf-8")
    loaded: list[str] = []

    def recording(path):
        loaded.append(path.stem)
        return _load(path)

    summary = score_libraries(recommender, users, load=recording,
                              output=torn, top_n=4)
    assert loaded == ["bob", "carol", "dave"]
    assert summary.resumed == 1 and summary.scored == 3 and summary.rows == len(lines) - 1
    assert torn.read_text(encoding="utf-8") == full.read_text(encoding="utf-8")
    loaded.clear()
    again = score_libraries(recommender, users, load=recording,
                            output=torn, top_n=4)
    assert loaded == ["dave"] and again.resumed == 3  # the last block is always re-checked
    assert torn.read_text(encoding="utf-8") == full.read_text(encoding="utf-8")


def test_resuming_a_file_that_is_not_a_score_file_is_one_clear_error(lab, tmp_path):
    out = tmp_path / "notes.csv"
    out.write_text("name,age\nx,1\n")
    result = score("--libraries", lab, "--out", out)
    assert result.exit_code == 1
    assert "not a zotrec score CSV" in result.output and "Traceback" not in result.output
    assert score("--libraries", lab, "--out", out, "--overwrite").exit_code == 0
    assert out.read_text().startswith("user,rank,id,title,score,reasons,match,interest,author_reasons,steer_reasons\n")


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_score_files_carry_the_reading_lists_match(lab, tmp_path, fmt):
    """The 0–100 match of `zotrec reading-list` in the score file (a CSV column, a JSONL key); the raw score stays."""
    out = tmp_path / f"scores.{fmt}"
    assert score("--libraries", lab, "--out", out, "-n", 4, "--format", fmt).exit_code == 0
    text = out.read_text(encoding="utf-8")
    rows = by_user(jsonl_rows(text) if fmt == "jsonl" else list(csv.DictReader(io.StringIO(text))))
    for user in ("alice", "bob"):
        [path] = lab.glob(f"{user}.*")
        expected = json.loads(reading_list("--library", path, "-n", 4, "--format", "json").stdout)
        assert all(isinstance(e["match"], int) for e in expected)  # tf-idf has a calibration: a match to compare
        assert [int(r["match"]) for r in rows[user]] == [e["match"] for e in expected]
        assert [float(r["score"]) for r in rows[user]] == [e["score"] for e in expected]


def test_a_score_csv_from_before_the_match_column_is_one_clear_line(lab, tmp_path):
    out = tmp_path / "old.csv"
    out.write_text("user,rank,id,title,score,reasons\nalice,1,x,A title,0.5,\n", encoding="utf-8")
    result = score("--libraries", lab, "--out", out)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "a score CSV from an older zotrec (without the match column)" in result.output
    assert out.read_text(encoding="utf-8").startswith("user,rank,id,title,score,reasons\n")  # left as it was


def test_bad_libraries_are_reported_and_skipped(lab, tmp_path):
    (lab / "erin.ris").write_text("not a RIS file\n")
    (lab / "frank.json").write_text(json.dumps([{"id": "n", "type": "note"}]))
    (lab / "gina.bib").write_text("")
    out = tmp_path / "scores.csv"
    result = score("--libraries", lab, "--out", out, "-n", 2)
    assert result.exit_code == 0, result.output
    assert {row["user"] for row in csv.DictReader(out.open())} == {"alice", "bob", "carol", "dave"}
    assert "3 of 7 libraries failed" in result.output
    for message in ("erin: ", "no RIS records", "frank: ", "no item with a title", "gina: ", "file is empty"):
        assert message in result.output
    assert "Traceback" not in result.output


def test_only_bad_libraries_is_a_failed_run(tmp_path):
    (tmp_path / "x.bib").write_text("")
    result = score("--libraries", tmp_path / "x.bib", "--libraries", tmp_path / "missing.bib")
    assert result.exit_code == 1
    assert "2 of 2 libraries failed" in result.output and "missing.bib: no such file" in result.output


def test_duplicate_user_ids_are_refused(lab, tmp_path):
    (tmp_path / "bob.ris").write_text(RL_RIS)
    result = score("--libraries", lab, "--libraries", tmp_path / "bob.ris")
    assert result.exit_code == 1 and "user id 'bob'" in result.output


def test_group_summary_counts_users_and_mean_ranks(lab, tmp_path):
    out = tmp_path / "scores.csv"
    result = score("--libraries", lab, "-n", 10, "--out", out, "--group-summary")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out.open()))
    expected: dict[str, list[int]] = {}
    for row in rows:
        expected.setdefault(row["id"], []).append(int(row["rank"]))
    group = list(csv.DictReader((tmp_path / "scores.group.csv").open()))
    assert {g["id"]: (int(g["users"]), float(g["mean_rank"])) for g in group if int(g["users"])} == \
           {pid: (len(ranks), round(sum(ranks) / len(ranks), 2)) for pid, ranks in expected.items()}
    counts = [int(g["users"]) for g in group]
    assert counts == sorted(counts, reverse=True) and max(counts) > 1
    assert float(group[0]["share"]) == counts[0] / 4
    # a resumed run rebuilds the same summary from the rows already written
    (tmp_path / "scores.group.csv").unlink()
    assert score("--libraries", lab, "-n", 10, "--out", out, "--group-summary").exit_code == 0
    assert list(csv.DictReader((tmp_path / "scores.group.csv").open())) == group


def test_top_zero_writes_every_user_paper_pair(lab, tmp_path):
    result = score("--libraries", lab, "--top", 0, "--format", "jsonl")
    assert result.exit_code == 0, result.output
    users = by_user(jsonl_rows(result.stdout))
    papers = _seed_papers()
    assert sorted(users) == ["alice", "bob", "carol", "dave"]
    for user, rows in users.items():
        [path] = lab.glob(f"{user}.*")
        owned = owned_mask(_load(path), papers)
        assert {r["id"] for r in rows} == \
               {paper.id for paper, mine in zip(papers, owned, strict=True) if not mine}
        assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    # each user's list is in the ranking's order (interests seated seat by seat), the same for every --top
    short = by_user(jsonl_rows(score("--libraries", lab, "--top", 3, "--format", "jsonl").stdout))
    assert {user: [r["id"] for r in rows] for user, rows in short.items()} == {
        user: [r["id"] for r in rows[:3]] for user, rows in users.items()}


def test_worker_processes_write_the_same_file(lab, tmp_path):
    recommender = Recommender(_seed_papers())
    users = {path.stem: path for path in sorted(lab.iterdir())}
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    score_libraries(recommender, users, load=_load, output=one, fmt="jsonl", top_n=0, chunk_users=1)
    score_libraries(recommender, users, load=_load, output=two, fmt="jsonl", top_n=0, chunk_users=1, jobs=2)
    assert one.read_text() == two.read_text()


class _PrivateTfidf(TfidfRepresentation):
    """Stands for a representation that must not cross a fork (dense: a model session, a cache)."""

    name = "private"


def test_workers_rebuild_a_recommender_that_cannot_cross_a_fork(lab, tmp_path):
    import os

    built = tmp_path / "built"

    def rebuild():
        with built.open("a") as handle:
            handle.write(f"{os.getpid()}\n")
        return Recommender(_seed_papers(), representation=_PrivateTfidf())

    users = {path.stem: path for path in sorted(lab.iterdir())}
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    private = Recommender(_seed_papers(), representation=_PrivateTfidf())
    score_libraries(private, users, load=_load, output=one, top_n=0, chunk_users=1)
    score_libraries(private, users, load=_load, output=two, top_n=0, chunk_users=1, jobs=2, rebuild=rebuild)
    assert one.read_text() == two.read_text()
    pids = built.read_text().split()
    assert len(pids) == 2 and str(os.getpid()) not in pids


def test_group_summary_of_nobody_is_empty():
    assert GroupSummary(_seed_papers()).rows() == []


def _seed_papers():
    from recommender.corpus.readers import load_corpus

    return load_corpus(SEEDS).papers


def _load(path):
    from zotero_bridge.cli.batch import load_user_library

    return load_user_library(str(path)).items


def test_dask_local_cluster_writes_the_same_rows_and_summary(lab, tmp_path):
    pytest.importorskip("distributed")
    single = tmp_path / "single.csv"
    assert score("--libraries", lab, "-n", 6, "--out", single, "--group-summary").exit_code == 0
    parts = tmp_path / "parts"
    result = score("--libraries", lab, "-n", 6, "--out", parts, "--group-summary", "--scheduler", "local",
                   "--jobs", 2)
    assert result.exit_code == 0, result.output
    rows = [row for part in sorted(parts.glob("part-*.csv")) for row in csv.DictReader(part.open())]
    assert sorted(rows, key=lambda r: (r["user"], int(r["rank"]))) == list(csv.DictReader(single.open()))
    group = list(csv.DictReader((tmp_path / "parts.group.csv").open()))
    assert group == list(csv.DictReader((tmp_path / "single.group.csv").open()))
    assert "Scored 4 users" in result.output and len(list(parts.glob("part-*.csv"))) > 1
    before = {part.name: part.read_text() for part in parts.iterdir()}
    again = score("--libraries", lab, "-n", 6, "--out", parts, "--scheduler", "local", "--jobs", 2)
    assert again.exit_code == 0 and "users were already in the output file" in again.output
    assert {part.name: part.read_text() for part in parts.iterdir()} == before


def test_dask_local_cluster_listens_on_this_machine_only(lab, tmp_path, monkeypatch):
    """Without --dashboard the scheduler's HTTP routes (health, metrics) listen on a free port of 127.0.0.1, not
    on the dashboard's 8787 (dashboard_address=None held it: a warning when taken, another program's port)."""
    distributed = pytest.importorskip("distributed")
    bound = []

    class Recorded(distributed.LocalCluster):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            bound.extend(sock.getsockname()[:2] for sock in self.scheduler.http_server._sockets.values())

    monkeypatch.setattr(distributed, "LocalCluster", Recorded)
    result = score("--libraries", lab, "-n", 3, "--out", tmp_path / "parts", "--scheduler", "local", "--jobs", 1)
    assert result.exit_code == 0, result.output
    assert bound and all(host == "127.0.0.1" and port != 8787 for host, port in bound), bound


def test_dask_needs_an_output_folder(lab):
    result = score("--libraries", lab, "--scheduler", "local")
    assert result.exit_code == 1 and "--scheduler needs --out FOLDER" in result.output


def test_group_summary_counts_savers_as_the_group_signal_does(tmp_path):
    """`saved_by` is the group signal's count ("saved by N members of <group>"), by the same rule that
    reading-list and sync apply to a Zotero group library (zotero_bridge.feedback.learn.member_counts)."""
    from recommender.corpus.readers import load_corpus
    from zotero_bridge.feedback.learn import member_counts

    from .test_sync import corpus_rows

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in corpus_rows(30)), encoding="utf-8")
    papers = load_corpus([corpus]).papers
    a, b, c = papers[:3]
    saves = {"m1": [a, b], "m2": [a], "m3": [a, c], "m4": []}
    folder = tmp_path / "Lab"
    folder.mkdir()
    for user, saved in saves.items():
        rows = [{"key": f"{user}{n}", "title": p.title.upper() + "."} for n, p in enumerate(saved)]
        rows.append({"key": f"{user}x", "title": "Message passing and oversmoothing in deep graph networks"})
        (folder / f"{user}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "scores.csv"
    args = ("score", "--features", "tfidf", "--corpus", corpus, "--libraries", folder, "-n", 5, "--out", out,
            "--group-summary")
    result = run(*args)
    assert result.exit_code == 0, result.output
    group = {g["id"]: g for g in csv.DictReader((tmp_path / "scores.group.csv").open())}
    creators = {f"{user}{n}": number for number, (user, saved) in enumerate(saves.items()) for n in range(len(saved))}
    items = {f"{user}{n}": {"title": p.title.upper() + "."} for user, saved in saves.items() for n, p in enumerate(saved)}
    expected, _ = member_counts(creators, items, papers, me=None)
    assert expected == {a.id: 3, b.id: 1, c.id: 1}
    assert {pid: int(g["saved_by"]) for pid, g in group.items() if int(g["saved_by"])} == expected
    assert group[a.id]["group_note"] == "saved by 3 members of Lab"
    assert group[b.id]["group_note"] == "saved by 1 member of Lab"
    assert "saved by 3 members of Lab" in result.output  # the summary printed at the end
    # a resumed run reads the done users' libraries again for their saves: the same summary
    (tmp_path / "scores.group.csv").unlink()
    assert run(*args).exit_code == 0
    assert {g["id"]: g for g in csv.DictReader((tmp_path / "scores.group.csv").open())} == group


def test_score_reads_the_corpus_through_the_prepared_cache(lab, tmp_path):
    """`zotrec score` prepares the corpus once, as reading-list does: the second run reads the entry."""
    from recommender.scoring.prepared import prepared_dir

    first = score("--libraries", lab, "-n", "3", "--out", tmp_path / "one.csv")
    assert first.exit_code == 0, first.output
    entries = list(prepared_dir().glob("corpus-*.npz"))
    assert len(entries) == 1
    stamp = entries[0].stat().st_ino  # a rebuilt entry is a new file
    second = score("--libraries", lab, "-n", "3", "--out", tmp_path / "two.csv")
    assert second.exit_code == 0, second.output
    assert entries[0].stat().st_ino == stamp  # read, not rebuilt
    assert (tmp_path / "one.csv").read_text(encoding="utf-8") == (tmp_path / "two.csv").read_text(encoding="utf-8")
