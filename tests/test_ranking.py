"""Scoring: aggregation against a brute-force reference, owned papers, reasons, profiles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from recommender import LibraryItem, Paper, Recommender
from recommender.errors import EmptyLibraryError
from recommender.scoring.aggregation import aggregate, parse_aggregation

CORPUS = [
    Paper(id="flow", title="Heavy-tailed normalizing flows", abstract="Normalizing flows with heavy tails for density."),
    Paper(id="ts", title="Lightweight time series forecasting", abstract="Forecasting time series periodic patterns."),
    Paper(id="rl", title="Reward models for RLHF", abstract="Human feedback reward models align language models."),
    Paper(id="owned", title="Attention Is All You Need", abstract="Transformers use attention only.",
          doi="10.5555/3295222"),
]


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


@settings(max_examples=60, deadline=None)
@given(
    library=arrays(np.float32, st.tuples(st.integers(1, 9), st.just(5)), elements=st.floats(0, 1, width=32)),
    corpus=arrays(np.float32, st.tuples(st.integers(1, 6), st.just(5)), elements=st.floats(0, 1, width=32)),
    aggregation=st.sampled_from(["max", "mean", "top3", "top5"]),
)
def test_aggregate_matches_brute_force(library, corpus, aggregation):
    library, corpus = unit_rows(library), unit_rows(corpus)
    sims = library @ corpus.T
    kind, k = parse_aggregation(aggregation)
    expected = sims.mean(axis=0) if kind == "mean" else -np.sort(-sims, axis=0)[:k].mean(axis=0)
    got = aggregate(library, corpus, aggregation)
    np.testing.assert_allclose(got.scores, expected, rtol=1e-5, atol=1e-6)
    best = -np.sort(-sims, axis=0)[: min(3, len(library))].T
    np.testing.assert_allclose(got.reason_similarities, best, rtol=1e-5, atol=1e-6)
    picked = np.take_along_axis(sims.T, got.reason_rows, axis=1)
    np.testing.assert_allclose(picked, best, rtol=1e-5, atol=1e-6)


def test_aggregation_names():
    assert parse_aggregation("max") == ("top", 1)
    with pytest.raises(ValueError, match="unknown aggregation 'top0'"):
        parse_aggregation("top0")


def test_ranking_follows_interests_and_explains_itself():
    library = [
        LibraryItem(key="A", title="Density estimation with normalizing flows"),
        LibraryItem(key="B", title="Forecasting periodic time series"),
        LibraryItem(key="C", title="Attention is all you need", doi="https://doi.org/10.5555/3295222"),
    ]
    recs = Recommender(CORPUS).recommend(library, top_n=0)
    ids = [r.paper.id for r in recs]
    assert "owned" not in ids
    assert ids[:2] == ["flow", "ts"] or ids[:2] == ["ts", "flow"]
    assert ids[-1] == "rl"
    assert [r.rank for r in recs] == [1, 2, 3]
    top = recs[0]
    assert top.reasons and top.reasons[0].item_key == ("A" if top.paper.id == "flow" else "B")
    assert all(r.similarity > 0 for r in top.reasons)
    assert recs[-1].reasons == ()


def test_owned_by_url_or_title():
    corpus = [Paper(id="p", title="Same Title", abstract="x", url="https://example.org/p/"),
              Paper(id="q", title="Other", abstract="x y")]
    by_url = [LibraryItem(key="K", title="Different", url="http://www.example.org/p")]
    by_title = [LibraryItem(key="K", title="same title!")]
    assert [r.paper.id for r in Recommender(corpus).recommend(by_url, top_n=0)] == ["q"]
    assert [r.paper.id for r in Recommender(corpus).recommend(by_title, top_n=0)] == ["q"]


def test_profile_restricts_scores_but_owned_uses_whole_library():
    library = [
        LibraryItem(key="A", title="Reward models human feedback", collections=("Alignment",)),
        LibraryItem(key="B", title="Heavy-tailed normalizing flows", collections=("Flows",)),
    ]
    recs = Recommender(CORPUS).recommend(library, top_n=1, profile=[library[0]])
    assert recs[0].paper.id == "rl"
    assert all(r.paper.title != "Heavy-tailed normalizing flows" for r in Recommender(CORPUS).recommend(library, top_n=0))


def test_library_without_text_is_a_clear_error():
    with pytest.raises(EmptyLibraryError, match="no item with a title or abstract"):
        Recommender(CORPUS).recommend([LibraryItem(key="A", title="  ")])


def test_top_n_limits_and_ties_keep_corpus_order():
    library = [LibraryItem(key="A", title="zzzz unrelated")]
    recs = Recommender(CORPUS).recommend(library, top_n=2)
    assert [r.paper.id for r in recs] == ["flow", "ts"]


def test_fast_title_key_is_title_key(shared):
    """The owned-paper check's fast key equals recommender.text.title_key on every real title."""
    import json

    from recommender.scoring.owned import fast_title_key
    from recommender.text import title_key

    titles = (shared / "data" / "citeulike-a" / "titles.txt").read_text(encoding="utf-8").splitlines()
    titles += [json.loads(line)["title"] for line in
               (shared / "data" / "icml2025" / "papers.jsonl").read_text(encoding="utf-8").splitlines()]
    titles += ["{B}ayes  x", "a{\\em b}", "$x$ y", "Über", "  ", "Rodr\u0131\u0301guez", "a\tb\n c", "x\x7f"]
    assert [fast_title_key(t) for t in titles] == [title_key(t) for t in titles]
