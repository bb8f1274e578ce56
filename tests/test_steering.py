"""Steering (--prefer / --avoid) and recency (--recent-half-life): the maths on constructed rows, the
Recommender with and without the kept library state, the batch path, the CLI options, sync's history."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import sparse

from recommender.batch.runner import BatchScorer, score_libraries
from recommender.features.hybrid import HybridRows
from recommender.items import LibraryItem, Paper
from recommender.scoring.fusion import standardise
from recommender.scoring.incremental import IncrementalScorer
from recommender.scoring.learned import linear_scores
from recommender.scoring.match import CALIBRATIONS
from recommender.scoring.ranking import Recommender
from recommender.scoring.recency import (
    added_day,
    class_weights,
    recency_weights,
    scaled_rows,
    weighted_linear_scores,
)
from recommender.scoring.steering import (
    MAX_TEXT_CHARS,
    STEER_WEIGHT,
    Steering,
    checked_half_life,
    evidence,
    scale_for,
    steer_reasons,
    steered_scores,
)
from tests.rankings import FUSED_ATOL, assert_same_ranking
from tests.rankings import from_recommendations as ranked
from zotero_bridge.cli.main import cli
from zotero_bridge.feedback.history_view import render_history
from zotero_bridge.feedback.memory import Memory

from .conftest import REPO, SEEDS, ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_sync import corpus_file  # noqa: F401 (fixture)

DENSE = CALIBRATIONS["dense"]
LIBRARY = REPO / "examples" / "library.bib"
SEED_CORPUS = [part for seed in SEEDS for part in ("--corpus", seed)]


def run(*args, **kwargs):
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)


# ---- the maths on constructed rows ------------------------------------------------------------------------
def test_evidence_maps_the_similarity_scale_to_0_1():
    sims = np.array([-0.2, DENSE.off_topic, (DENSE.off_topic + DENSE.same_topic) / 2, DENSE.same_topic, 0.95])
    assert np.allclose(evidence(sims, DENSE), [0.0, 0.0, 0.5, 1.0, 1.0])


def test_prefer_lifts_avoid_lowers_by_the_documented_weight():
    scores = np.array([3.0, 2.0, 1.0, 0.0])
    prefer = np.array([[0.1, 0.1, DENSE.same_topic, 0.1], [0.1, 0.1, 0.1, DENSE.same_topic]])  # two texts
    avoid = np.array([[DENSE.same_topic, 0.1, 0.1, 0.1]])
    steered = steered_scores(scores, prefer, avoid, DENSE)
    assert np.allclose(steered, standardise(scores) + STEER_WEIGHT * np.array([-1.0, 0.0, 1.0, 1.0]))
    assert list(np.argsort(-steered)) == [2, 3, 1, 0]  # each prefer text counts; the avoided paper falls last
    assert np.allclose(steered_scores(scores, prefer, None, DENSE, weight=0.5),
                       standardise(scores) + 0.5 * np.array([0.0, 0.0, 1.0, 1.0]))


def test_a_text_unlike_every_paper_leaves_the_order_alone():
    scores = np.random.default_rng(3).standard_normal(200)
    unlike = np.full((1, 200), DENSE.off_topic - 0.05) + np.random.default_rng(4).uniform(-0.1, 0.0, (1, 200))
    assert list(np.argsort(-steered_scores(scores, unlike, unlike, DENSE))) == list(np.argsort(-scores))


def test_steer_reasons_name_the_matching_prefer_texts_best_first():
    reasons = steer_reasons(["a", "b", "c"], np.array([0.40, 0.20, 0.70]), DENSE)
    assert [(r.text, r.similarity) for r in reasons] == [("c", pytest.approx(0.70)), ("a", pytest.approx(0.40))]


def test_each_feature_kind_steers_on_its_own_measured_scale():
    class Features:
        def __init__(self, name):
            self.name = name

    for name in ("dense", "tfidf", "hybrid"):
        assert scale_for(Features(name)) == CALIBRATIONS[name]
    assert scale_for(Features("another-encoder")) == DENSE


@pytest.mark.parametrize("kwargs, message", [
    ({"prefer": ("  ",)}, "prefer: a text is blank"),
    ({"avoid": ("ok", "\t\n")}, "avoid: a text is blank"),
    ({"prefer": ("x" * (MAX_TEXT_CHARS + 1),)}, f"more than {MAX_TEXT_CHARS}"),
    ({"avoid": tuple(f"t{i}" for i in range(21))}, "avoid: 21 texts"),
    ({"half_life_days": 0}, "out of range"),
    ({"half_life_days": float("nan")}, "out of range"),
    ({"half_life_days": "soon"}, "not a number"),
])
def test_bad_steering_is_refused_naming_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Steering(**kwargs)


def test_texts_lose_control_characters_and_extra_space():
    steering = Steering(prefer=("  time\x1b[31m series\u202e  ",), half_life_days="30")
    assert steering.prefer == ("time [31m series",) and steering.half_life_days == 30.0
    assert steering.as_dict() == {"prefer": ["time [31m series"], "avoid": [], "recent_half_life": 30.0}
    assert checked_half_life(" 7.5 ") == 7.5


def test_recency_weights_halve_per_half_life_and_undated_get_the_median():
    dates = ["2024-03-01", "2024-02-20T10:00:00Z", "", "2024/02/10 08:00", "not a date", "2024-02-30"]
    weights = recency_weights(dates, 10)
    median = np.median([1.0, 0.5, 0.25])
    assert np.allclose(weights, [1.0, 0.5, median, 0.25, median, median])  # Feb 30 is no date
    assert recency_weights(["", "someday"], 10) is None
    assert added_day("2011-02-02T22:26:36Z").isoformat() == "2011-02-02"


def test_uniform_recency_weights_give_the_unweighted_fit():
    rng = np.random.default_rng(0)
    positives, negatives, candidates = (rng.standard_normal((n, 8)) for n in (6, 60, 30))
    weights = class_weights(np.full(6, 0.3), 60)
    assert np.allclose(weights[:6], 66 / 12) and np.allclose(weights[6:], 66 / 120)  # class-balanced
    assert np.allclose(weighted_linear_scores(positives, negatives, candidates, np.full(6, 0.3)),
                       linear_scores(positives, negatives, candidates), atol=1e-6)
    lopsided = weighted_linear_scores(positives, negatives, candidates, np.r_[1.0, np.full(5, 1e-3)])
    towards_first = weighted_linear_scores(positives, negatives, positives[:1], np.r_[1.0, np.full(5, 1e-3)])
    assert towards_first[0] > np.median(lopsided)  # the fit follows the heavy positive


def test_scaled_rows_scale_every_similarity_to_the_row():
    rng = np.random.default_rng(1)
    dense_rows, corpus = rng.standard_normal((3, 5)), rng.standard_normal((4, 5))
    weights = np.array([1.0, 0.5, 0.25])
    assert np.allclose(scaled_rows(dense_rows, weights) @ corpus.T, weights[:, None] * (dense_rows @ corpus.T))
    lexical = sparse.random(3, 7, density=0.5, random_state=2, format="csr")
    assert np.allclose((scaled_rows(lexical, weights) @ lexical.T).toarray(),
                       weights[:, None] * (lexical @ lexical.T).toarray())
    hybrid = HybridRows(lexical, dense_rows, 0.5)
    assert np.allclose(scaled_rows(hybrid, weights) @ hybrid.T, weights[:, None] * (hybrid @ hybrid.T), atol=1e-6)


# ---- the Recommender --------------------------------------------------------------------------------------
TOPICS = ["flow", "series", "reward", "graph", "kernel", "bayes", "causal", "sparse", "robust", "policy"]


class TopicVectors:
    """A stand-in encoder: one direction per topic word in the text, a little fixed noise per text."""

    name = "dense"
    model_id = "test-topic-vectors"

    def fit(self, texts):
        return self

    def transform(self, texts):
        import hashlib

        rows = np.zeros((len(texts), len(TOPICS) + 8), dtype=np.float32)
        for index, text in enumerate(texts):
            for place, topic in enumerate(TOPICS):
                rows[index, place] = text.lower().count(topic)
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rows[index, len(TOPICS):] = 0.15 * np.random.default_rng(seed).standard_normal(8)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


CORPUS = [Paper(id=f"p{i}", title=f"{TOPICS[i % 10]} study {i}", abstract=f"A {TOPICS[i % 10]} method, case {i}.")
          for i in range(300)]
ITEMS = ([LibraryItem(key=f"f{i}", title=f"flow paper {i}", date_added="2023-01-01") for i in range(6)]
         + [LibraryItem(key=f"s{i}", title=f"series paper {i}", date_added="2024-06-01") for i in range(2)])


def topics_of(recs) -> list[str]:
    return [rec.paper.title.split()[0] for rec in recs]


@pytest.mark.parametrize("aggregation", ["learned", "top3"])
def test_prefer_moves_the_top_to_its_topic_and_says_why(aggregation):
    # interests=False: the unsteered list in plain score order (quotas by interest would seat the series items)
    recommender = Recommender(CORPUS, representation=TopicVectors(), aggregation=aggregation, interests=False)
    plain = recommender.recommend(ITEMS, top_n=10)
    assert topics_of(plain).count("flow") == 10 and all(not rec.steer_reasons for rec in plain)
    steered = recommender.recommend(ITEMS, top_n=10, steering=Steering(prefer=("time series",)))
    assert topics_of(steered) == ["series"] * 10  # the library's smaller interest takes the top
    assert all([(r.text, r.similarity > 0.5) for r in rec.steer_reasons] == [("time series", True)]
               for rec in steered)
    elsewhere = recommender.recommend(ITEMS, top_n=40, steering=Steering(prefer=("reward models",)))
    assert topics_of(elsewhere).count("reward") > topics_of(recommender.recommend(ITEMS, top_n=40)).count("reward")
    assert {bool(rec.steer_reasons) for rec in elsewhere if topics_of([rec]) == ["reward"]} == {True}
    avoided = recommender.recommend(ITEMS, top_n=10, steering=Steering(avoid=("flow",)))
    assert "flow" not in topics_of(avoided) and all(not rec.steer_reasons for rec in avoided)


def test_recency_favours_the_recent_items_topic():
    recommender = Recommender(CORPUS, representation=TopicVectors(), aggregation="learned", interests=False)
    assert topics_of(recommender.recommend(ITEMS, top_n=5)).count("flow") == 5  # six old flow items win
    recent = recommender.recommend(ITEMS, top_n=5, steering=Steering(half_life_days=30))
    assert topics_of(recent).count("series") == 5  # the two items added 17 months later count far more
    undated = [LibraryItem(key=i.key, title=i.title) for i in ITEMS]
    assert_same_ranking(ranked(recommender.recommend(undated, top_n=5, steering=Steering(half_life_days=30))),
                        ranked(recommender.recommend(undated, top_n=5)), score_atol=FUSED_ATOL)


def test_the_kept_library_state_never_serves_steering_stale(tmp_path):
    """Unsteered, steered, recency, unsteered again with the kept state: each equals a run without it."""
    from tests.test_incremental import Kept

    kept = Kept(Recommender(CORPUS, representation=TopicVectors(), aggregation="learned"),
                IncrementalScorer(tmp_path, "corpus/learned"))
    fresh = Recommender(CORPUS, representation=TopicVectors(), aggregation="learned")
    reused = []
    for steering in (None, Steering(prefer=("reward",), avoid=("graph",)), Steering(half_life_days=30),
                     Steering(half_life_days=300), None, None):
        assert_same_ranking(ranked(kept.recommend(ITEMS, top_n=12, steering=steering)),
                            ranked(fresh.recommend(ITEMS, top_n=12, steering=steering)), str(steering),
                            score_atol=FUSED_ATOL)
        reused.append("learned" in kept.state.reused_values)
    # prefer / avoid come after the kept fit (reused); each half-life has its own fit (never reused stale)
    assert reused == [False, True, False, False, False, True]


def test_batch_scoring_steers_every_user_as_reading_list_does():
    steering = Steering(prefer=("series",), half_life_days=60)
    recommender = Recommender(CORPUS, representation=TopicVectors(), aggregation="learned")
    users = {"ann": ITEMS, "ben": ITEMS[:3] + [LibraryItem(key="g", title="graph paper")]}
    for user, items in users.items():
        assert_same_ranking(ranked(BatchScorer(recommender, top_n=8, steering=steering).score(items)),
                            ranked(recommender.recommend(items, top_n=8, steering=steering)), user,
                            score_atol=FUSED_ATOL)
    import io

    out = io.StringIO()
    score_libraries(recommender, users, output=out, fmt="jsonl", top_n=8, steering=steering)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    steered = [row for row in rows if "steer_reasons" in row]
    assert len(rows) == 16 and steered and all(row["steer_reasons"][0]["text"] == "series" for row in steered)
    pooled = io.StringIO()  # worker processes build their own Recommender and keep the steering
    score_libraries(recommender, users, output=pooled, fmt="jsonl", top_n=8, steering=steering, jobs=2,
                    chunk_users=1, rebuild=lambda: Recommender(CORPUS, representation=TopicVectors(),
                                                               aggregation="learned"))
    assert [json.loads(line) for line in pooled.getvalue().splitlines()] == rows


# ---- the CLI ----------------------------------------------------------------------------------------------
def test_reading_list_options_reach_the_ranking_and_the_header(monkeypatch):
    """examples/library.bib against the default corpus: the context the header is drawn from, and the
    recommendations every format is drawn from."""
    import zotero_bridge.render.reading_list as render

    seen = {}

    def capture(recs, fmt, **kwargs):
        seen.update(recs=recs, **kwargs)
        return ""

    monkeypatch.setattr(render, "render_recommendations", capture)
    result = run("reading-list", "--library", LIBRARY, "-n", 20, "--prefer", "time series forecasting",
                 "--prefer", "normalizing flows", "--avoid", "large language models", "--recent-half-life", "45")
    assert result.exit_code == 0, result.output
    context = seen["context"]
    assert context.prefer == ("time series forecasting", "normalizing flows")
    assert context.avoid == ("large language models",) and context.recency_half_life == 45.0
    steered = [rec for rec in seen["recs"] if rec.steer_reasons]
    assert len(steered) >= 10
    assert all({r.text for r in rec.steer_reasons} <= set(context.prefer) for rec in steered)
    plain = run("reading-list", "--library", LIBRARY, "-n", 20)
    assert plain.exit_code == 0
    assert seen["context"].prefer == () and seen["context"].recency_half_life is None
    assert not any(rec.steer_reasons for rec in seen["recs"])


@pytest.mark.parametrize("args, message", [
    (["--prefer", "   "], "Error: --prefer: a text is blank"),
    (["--avoid", ""], "Error: --avoid: a text is blank"),
    (["--prefer", "x" * 2000], f"Error: --prefer: a text has 2000 characters, more than {MAX_TEXT_CHARS}"),
    (["--recent-half-life", "0"], "Error: --recent-half-life: 0 days is out of range"),
    (["--recent-half-life", "a week"], "Error: --recent-half-life: 'a week' is not a number of days"),
])
@pytest.mark.parametrize("command", ["reading-list", "score", "sync"])
def test_bad_steering_options_are_one_line_naming_the_option(tmp_path, command, args, message):
    source = {"reading-list": ["--library", LIBRARY], "score": ["--libraries", LIBRARY], "sync": []}[command]
    result = run(command, *source, *SEED_CORPUS, "--features", "tfidf", *args)
    assert result.exit_code == 1
    assert result.output.strip() == message or result.output.strip().startswith(message)
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_recent_half_life_on_an_undated_library_says_so(tmp_path):
    library = tmp_path / "undated.bib"
    library.write_text("@article{a, title={Normalizing flows for density estimation}}\n", encoding="utf-8")
    result = run("reading-list", "--library", library, *SEED_CORPUS, "--features", "tfidf", "-n", 3,
                 "--recent-half-life", "30")
    assert result.exit_code == 0
    assert "--recent-half-life: no library item has a date added" in result.stderr


def test_score_rows_are_the_steered_reading_list(tmp_path):
    folder = tmp_path / "lab"
    folder.mkdir()
    (folder / "alice.bib").write_bytes(LIBRARY.read_bytes())
    (folder / "bob.bib").write_text("@article{f, title={Heavy tails in normalizing flows}, timestamp={2024-01-02}}"
                                    "\n@article{t, title={Time series forecasting}, timestamp={2024-05-01}}\n",
                                    encoding="utf-8")
    steer = ["--prefer", "diffusion models", "--avoid", "time series",
             "--recent-half-life", "30"]
    out = tmp_path / "scores.jsonl"
    result = run("score", "--features", "tfidf", *SEED_CORPUS, "--libraries", folder, "-n", 5, "--format", "jsonl",
                 "--out", out, *steer)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for user in ("alice", "bob"):
        listed = run("reading-list", "--features", "tfidf", *SEED_CORPUS, "--library", folder / f"{user}.bib",
                     "-n", 5, "--format", "json", *steer)
        expected = json.loads(listed.stdout)
        mine = [row for row in rows if row["user"] == user]
        assert [(r["rank"], r["id"], r["score"]) for r in mine] == [(e["rank"], e["id"], e["score"]) for e in expected]
    assert any(row.get("steer_reasons") for row in rows)
    pytest.importorskip("distributed")
    parts = tmp_path / "parts"
    dask = run("score", "--features", "tfidf", *SEED_CORPUS, "--libraries", folder, "-n", 5, "--format", "jsonl",
               "--out", parts, "--scheduler", "local", *steer)
    assert dask.exit_code == 0, dask.output
    shipped = [json.loads(line) for part in sorted(parts.glob("part-*.jsonl")) for line in part.open()]
    assert sorted(shipped, key=lambda r: (r["user"], r["rank"])) == rows
    plain = run("score", "--features", "tfidf", *SEED_CORPUS, "--libraries", folder, "-n", 5, "--format", "jsonl")
    assert [json.loads(line)["id"] for line in plain.stdout.splitlines()] != [row["id"] for row in rows]


# ---- sync's history ---------------------------------------------------------------------------------------
def test_sync_records_its_steering_and_history_shows_it(zotero_server, corpus_file):  # noqa: F811
    env = {"ZOTERO_API_KEY": ZOTERO_WRITE_KEY}
    args = ["sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus",
            str(corpus_file), "-n", "3", "--features", "tfidf"]
    steered = run(*args, "--prefer", "detective crime fiction", "--avoid", "reward", "--recent-half-life", "90",
                  env=env)
    assert steered.exit_code == 0, steered.output
    assert 'matches your preference "detective crime fiction"' in steered.stdout  # the plan says why
    library = zotero_server.library("user", ZOTERO_USER_ID)
    notes = [d["note"] for d in library.items.values() if d["itemType"] == "note" and d.get("parentItem")]
    assert any("<p>Also:</p><ul><li>Matches your preference &quot;detective crime fiction&quot;" in note
               for note in notes)
    assert run(*args, env=env).exit_code == 0
    shown = json.loads(run("history", "--format", "json").stdout)
    assert [r["steering"] for r in shown["runs"]] == [
        None, {"prefer": ["detective crime fiction"], "avoid": ["reward"], "recent_half_life": 90.0}]
    text = run("history").stdout
    assert ('steered: prefer "detective crime fiction"; avoid "reward"; recent items weighted (half-life 90 days)'
            in text)
    assert text.count("steered:") == 1


def test_a_history_from_before_steering_gains_the_column(tmp_path):
    path = tmp_path / "history.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, library TEXT NOT NULL, at TEXT NOT NULL, "
               "collection TEXT NOT NULL, collection_key TEXT, library_version INTEGER)")
    db.execute("INSERT INTO runs (library, at, collection) VALUES ('user:1', '2024-01-01T00:00:00Z', 'R')")
    db.commit()
    db.close()
    with Memory(path) as memory:
        old = memory.runs("user:1")[0][0]
        new = memory.record_run("user:1", "R", "", 2, [], [], [], Steering(avoid=("x",)).as_dict())
        assert memory.steering(old) is None
        assert memory.steering(new) == {"prefer": [], "avoid": ["x"], "recent_half_life": None}
        assert "steered: avoid \"x\"" in render_history(memory, "user:1", 5, "table")
