"""The incremental re-run and the prepared-corpus cache give a full run's output: the same papers in the
same order with the same reasons, scores equal up to float noise (tests/rankings.py)."""

from __future__ import annotations

import hashlib
import logging
import stat

import numpy as np
import pytest

from recommender.collaborative.card import ModelCard
from recommender.items import LibraryItem, Paper
from recommender.scoring.incremental import IncrementalScorer
from recommender.scoring.caches import ScoringCaches
from recommender.scoring.ranking import Recommender
from tests.rankings import FUSED_ATOL, assert_same_ranking
from tests.rankings import from_recommendations as ranked


class HashVectors:
    """A stand-in encoder: each text's vector is fixed by its bytes (unit length, 64-d), and every
    text that goes through `transform` is counted, so a test sees what was embedded again."""

    name = "dense"
    model_id = "test-hash-vectors"

    def __init__(self) -> None:
        self.seen = 0

    def fit(self, texts):
        return self

    def transform(self, texts):
        self.seen += len(texts)
        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for index, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            row = np.random.default_rng(seed).standard_normal(64).astype(np.float32)
            rows[index] = row / np.linalg.norm(row)
        return rows


WORDS = ["graph", "neural", "flow", "bayes", "kernel", "attention", "sparse", "robust", "causal", "policy",
         "reward", "diffusion"]
CORPUS = [Paper(id=f"p{i}", title=f"{WORDS[i % 12]} {WORDS[(i * 5) % 12]} study {i}") for i in range(300)]


class Kept:
    """A Recommender ranking with one kept library state, handed in as the pipeline hands its caches in."""

    def __init__(self, recommender: Recommender, state: IncrementalScorer | None) -> None:
        self.recommender, self.state = recommender, state

    def recommend(self, *args, **kwargs):
        caches = ScoringCaches(library_state=(lambda: self.state) if self.state is not None else None)
        return self.recommender.recommend(*args, caches=caches, **kwargs)


def library(count: int, start: int = 0) -> list[LibraryItem]:
    items = [LibraryItem(key=f"K{i}", title=f"{WORDS[i % 12]} {WORDS[(i * 7) % 12]} paper {i}")
             for i in range(start, start + count)]
    return items + [LibraryItem(key="dup", title=items[0].title)]  # a tie with the first item


def assert_same_fused(got, want):
    assert_same_ranking(got, want, score_atol=FUSED_ATOL)


def full_run(items, aggregation="top5", top_n=20):
    return ranked(Recommender(CORPUS, representation=HashVectors(), aggregation=aggregation)
                  .recommend(items, top_n=top_n))


@pytest.mark.parametrize("aggregation", ["top5", "max", "mean"])
def test_adding_items_scores_only_them_and_gives_a_full_runs_output(tmp_path, aggregation):
    state = IncrementalScorer(tmp_path, "corpus-key/" + aggregation)
    encoder = HashVectors()
    scorer = Kept(Recommender(CORPUS, representation=encoder, aggregation=aggregation), state)
    first = library(2100)
    grown = first + library(10, start=5000)[:10]
    assert_same_ranking(ranked(scorer.recommend(first, top_n=25)), full_run(first, aggregation, 25))
    seen = encoder.seen
    assert_same_ranking(ranked(scorer.recommend(grown, top_n=25)), full_run(grown, aggregation, 25))
    assert encoder.seen - seen == 10  # only the new texts were embedded
    assert state.reused_items == (0 if aggregation == "mean" else 2101)  # mean sums again (rows still reused)


def test_edited_or_removed_items_fall_back_to_a_full_recompute(tmp_path):
    state = IncrementalScorer(tmp_path, "corpus-key/top5")
    scorer = Kept(Recommender(CORPUS, representation=HashVectors(), aggregation="top5"), state)
    items = library(500)
    scorer.recommend(items)
    edited = list(items)
    edited[3] = LibraryItem(key="K3", title="an edited title about reward policy")
    assert_same_ranking(ranked(scorer.recommend(edited, top_n=0)), full_run(edited, top_n=0))
    assert state.reused_items == 0
    removed = items[:200] + items[201:]
    assert_same_ranking(ranked(scorer.recommend(removed)), full_run(removed))
    assert state.reused_items == 0
    grown = removed + library(3, start=900)
    assert_same_ranking(ranked(scorer.recommend(grown)), full_run(grown))
    assert state.reused_items == len(removed)


def test_the_state_is_private_and_a_damaged_one_only_costs_time(tmp_path, caplog):
    state = IncrementalScorer(tmp_path, "corpus-key/top5")
    scorer = Kept(Recommender(CORPUS, representation=HashVectors(), aggregation="top5"), state)
    items = library(50)
    scorer.recommend(items)
    (path,) = tmp_path.glob("*.npz")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_bytes(path.read_bytes()[:300])
    with caplog.at_level(logging.WARNING):
        grown = items + library(2, start=70)
        assert_same_ranking(ranked(scorer.recommend(grown)), full_run(grown))
    assert "damaged" in caplog.text


def test_prepared_corpus_round_trips_and_survives_damage(tmp_path, caplog, monkeypatch):
    from recommender.scoring import prepared as prep
    from recommender.scoring.owned import CorpusKeys

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "title": "T"}\n', encoding="utf-8")
    papers = [Paper(id="a", title="Flows {B}", abstract=None, authors=("X Y",), doi="10.1/x", year=2025,
                    metadata={"pdf_url": "https://x/a.pdf", "n": [1, 2]}),
              Paper(id="b", title="Kernels", abstract="An abstract.", title_derived=False)]
    calls = []

    def load():
        calls.append(1)
        return papers, {"skipped": [["corpus.jsonl:3", "no title"]]}

    def build(_papers):
        return prep.prepare([corpus], load, "dense", "m1", "1.0", lambda p: HashVectors().transform(
            [x.text for x in p]), lambda p: CorpusKeys(p).to_json())

    cache = tmp_path / "cache"
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(cache))
    first, key = build(papers)
    second, key2 = build(papers)
    assert key == key2 and len(calls) == 1
    assert second.papers == papers and [p.metadata for p in second.papers] == [p.metadata for p in papers]
    assert second.matrix.tobytes() == first.matrix.tobytes()
    assert second.notes == {"skipped": [["corpus.jsonl:3", "no title"]]}
    assert CorpusKeys.from_json(second.keys).owned([LibraryItem(key="x", title="flows b")]).tolist() == [True, False]
    entry = cache / "prepared" / f"corpus-{key}.npz"
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600 and stat.S_IMODE(entry.parent.stat().st_mode) == 0o700
    corpus.write_text('{"id": "a", "title": "T2"}\n', encoding="utf-8")  # new content: a new entry
    assert build(papers)[1] != key and len(calls) == 2
    corpus.write_text('{"id": "a", "title": "T"}\n', encoding="utf-8")
    entry.write_bytes(entry.read_bytes()[:-100])  # cut short
    with caplog.at_level(logging.WARNING):
        again, _ = build(papers)
    assert "damaged" in caplog.text and len(calls) == 3
    assert again.matrix.tobytes() == first.matrix.tobytes()
    assert build(papers)[0].matrix.tobytes() == first.matrix.tobytes() and len(calls) == 3  # rebuilt entry


def test_runs_preparing_the_same_corpus_at_once_leave_one_whole_entry(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from recommender.scoring import prepared as prep

    papers = [Paper(id=f"p{i}", title=f"Paper {i}") for i in range(50)]
    matrix = HashVectors().transform([p.title for p in papers])
    entry = prep.PreparedCorpus(papers, {"size": 50, "doi": {}, "url": {}, "title": {}}, matrix, {})
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: prep.store_prepared("k1", entry, tmp_path), range(16)))
    assert [path.name for path in tmp_path.iterdir()] == ["corpus-k1.npz"]  # no half-written files left
    loaded = prep.load_prepared("k1", tmp_path)
    assert loaded.papers == papers and loaded.matrix.tobytes() == matrix.tobytes()


def test_the_fused_scores_lexical_values_are_kept_and_merged(tmp_path, monkeypatch):
    """With the fused default (here: content + tf-idf lexical + the linear model), a grown library
    hashes only its new texts for the lexical signal, and every score is a full run's."""
    from recommender.features import lexical
    from recommender.scoring.fusion import FusionWeights

    def fused(incremental=None):
        return Kept(Recommender(CORPUS, representation=HashVectors(), weights=FusionWeights(lexical=0.3, learned=0.3)),
                    incremental)

    hashed = []
    original = lexical.hashed_counts
    monkeypatch.setattr(lexical, "hashed_counts",
                        lambda texts, *rest: hashed.append(len(texts)) or original(texts, *rest))
    state = IncrementalScorer(tmp_path, "corpus-key/top5")
    scorer = fused(state)
    first = library(400)
    grown = first + library(7, start=3000)[:7]
    assert_same_fused(ranked(scorer.recommend(first, top_n=0)), ranked(fused().recommend(first, top_n=0)))
    hashed.clear()
    assert_same_fused(ranked(scorer.recommend(grown, top_n=0)), ranked(fused().recommend(grown, top_n=0)))
    assert hashed[0] == 7  # the kept run hashed only the new texts (the fresh run then hashed all of them)
    with np.load(next(tmp_path.glob("*.npz")), allow_pickle=False) as data:
        assert data["signal_lexical-top5"].shape == (len(CORPUS), 5)
    hashed.clear()
    assert_same_fused(ranked(scorer.recommend(grown[:100], top_n=0)), ranked(fused().recommend(grown[:100], top_n=0)))
    assert hashed[0] == 100  # not a prefix of the kept library: everything again


class StubFactors:
    """A stand-in collaborative model: an item's factors are the first 8 of its hash vector's values;
    every call to item_factors is counted by its number of texts."""

    cache_id = "test-hash-vectors/factors/stub"
    card = ModelCard(encoder_id="test-hash-vectors", content="stub")

    def __init__(self) -> None:
        self.calls: list[int] = []

    def item_factors(self, texts):
        self.calls.append(len(texts))
        return HashVectors().transform(list(texts))[:, :8]

    def user_vector(self, factors):
        return np.linalg.solve(factors.T @ factors + np.eye(8), factors.sum(axis=0))


def test_the_linear_models_scores_and_the_collaborative_factors_are_kept(tmp_path, monkeypatch):
    """An unchanged library reuses the linear model's scores (no fit) and every item's factors (none
    mapped); a grown one refits from zero and maps only its new texts; an input the texts do not show
    (which corpus papers the user owns) refits too. Every output is a full run's."""
    from recommender.scoring import learned
    from recommender.scoring.fusion import FusionWeights

    fits = []
    real_fit = learned.fit_logistic
    monkeypatch.setattr(learned, "fit_logistic", lambda x, y: fits.append(len(y)) or real_fit(x, y))
    weights = FusionWeights(lexical=0.1, learned=0.4, collaborative=0.2)

    def fused(model, incremental=None):
        return Kept(Recommender(CORPUS, representation=HashVectors(), model=model, weights=weights), incremental)

    first = library(400)
    grown = first + library(7, start=3000)[:7]
    edited = [LibraryItem(key="K3", title="an edited title about reward policy") if item.key == "K3" else item
              for item in grown]
    owning = first + [LibraryItem(key="own", title=CORPUS[3].title)]  # owns a corpus paper, not in the profile
    runs = [(first, None), (first, None), (grown, None), (first, None), (first, owning), (edited, None)]
    expected = [ranked(fused(StubFactors()).recommend(owner or items, profile=items, top_n=0)) for items, owner in runs]

    model, state = StubFactors(), IncrementalScorer(tmp_path, "corpus-key/top5")
    scorer = fused(model, state)
    seen = []
    for (items, owner), wanted in zip(runs, expected):
        fits.clear()
        model.calls.clear()
        assert_same_fused(ranked(scorer.recommend(owner or items, profile=items, top_n=0)), wanted)
        seen.append((len(fits), [calls for calls in model.calls if calls != len(CORPUS)], sorted(state.reused_values)))
    from recommender.scoring.corpus_side import factors_name

    factors = factors_name(model)
    assert seen == [
        (1, [401], []),  # the first run: a fit, every item mapped
        (0, [], [factors, "learned"]),  # unchanged: both kept
        (1, [7], []),  # grown: a fit from zero, only the new texts mapped
        (1, [], []),  # back to the first library: its rows picked from the kept ones; a new fit
        (1, [], [factors]),  # the same texts, another owned paper: a new fit
        (1, [8], []),  # an edited item (and the 7 the last run did not have): a new fit, those texts mapped
    ]
    with np.load(next(tmp_path.glob("*.npz")), allow_pickle=False) as data:
        assert data["value_learned"].shape == (len(CORPUS),) and data["valuekey_learned"].shape == (32,)
        assert data[f"item_{factors}"].shape == (len(edited), 8)


def test_an_unchanged_rerun_never_imports_the_optimiser(tmp_path):
    """The kept linear-model scores spare a re-run `import scipy.optimize` (0.1-0.2 s of CPU), not only the fit."""
    import subprocess
    import sys
    from pathlib import Path

    probe = f"""
import sys
from recommender.scoring.fusion import FusionWeights
from recommender.scoring.incremental import IncrementalScorer
from recommender.scoring.ranking import Recommender
from tests.test_incremental import CORPUS, HashVectors, Kept, library
state = IncrementalScorer(__import__("pathlib").Path({str(tmp_path)!r}), "corpus-key/top5")
Kept(Recommender(CORPUS, representation=HashVectors(), weights=FusionWeights(learned=0.4)), state).recommend(library(300))
print(state.reused_values, "scipy.optimize" in sys.modules)
"""
    root = Path(__file__).resolve().parents[1]
    outputs = [subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=120)
               for _ in range(2)]
    assert all(done.returncode == 0 for done in outputs), outputs[-1].stderr
    assert [done.stdout.strip() for done in outputs] == ["[] True", "['learned'] False"]


def test_a_kept_value_is_reused_only_for_the_same_texts_and_inputs(tmp_path):
    """The linear model's kept scores are keyed by the library's texts and every other input it names
    (settings, the adapter's β, the factors' model, the owned papers): any change computes afresh."""
    state = IncrementalScorer(tmp_path, "corpus-key/top5")
    corpus_rows = HashVectors().transform([paper.title for paper in CORPUS])
    computed = []

    def run(items, inputs):
        state.score([item.text for item in items], HashVectors(), corpus_rows, "top5")
        state.kept_value("learned", inputs, lambda: computed.append(1) or np.arange(3.0))
        state.finish()

    base = ((10, 200), 0.5, "factors-a", np.array([1, 2]))
    run(library(20), base)
    run(library(20), ((10, 200), 0.5, "factors-a", np.array([1, 2])))
    assert len(computed) == 1
    changed = [((10, 201), 0.5, "factors-a", np.array([1, 2])), ((10, 200), 1.0, "factors-a", np.array([1, 2])),
               ((10, 200), 0.5, "factors-b", np.array([1, 2])), ((10, 200), 0.5, "factors-a", np.array([1, 3])),
               ((10, 200), 0.5, "factors-a", np.array([1, 2], dtype=np.int32))]
    for inputs in changed:
        run(library(20), inputs)
    assert len(computed) == 1 + len(changed)
    run(library(21), changed[-1])  # another text
    assert len(computed) == 2 + len(changed)


def test_the_sample_is_the_one_linear_user_scores_fits(monkeypatch):
    """Only the sampled positives enter the fit (and the key): beyond MAX_POSITIVES the rest change nothing."""
    from recommender.scoring import learned

    monkeypatch.setattr(learned, "MAX_POSITIVES", 30)
    rng = np.random.default_rng(4)
    rows, corpus = rng.standard_normal((50, 8)).astype(np.float32), rng.standard_normal((300, 8)).astype(np.float32)
    positives, negatives = learned.sampled(len(rows), len(corpus), 0, np.arange(5))
    assert len(positives) == 30 and len(negatives) == 300 - 5 and not set(negatives) & set(range(5))
    x, y = learned.training_rows(rows, corpus, 0, np.arange(5))
    assert np.array_equal(x[:30], rows[positives]) and np.array_equal(x[30:], corpus[negatives]) and y.sum() == 30
    unsampled = np.setdiff1d(np.arange(50), positives)
    changed = rows.copy()
    changed[unsampled] += 1
    scores = learned.linear_user_scores(rows, corpus, corpus, exclude=np.arange(5))
    assert np.allclose(learned.linear_user_scores(changed, corpus, corpus, exclude=np.arange(5)), scores,
                       rtol=1e-6, atol=1e-6 * np.abs(scores).max())  # BLAS noise at most (another CPU's kernel)
