"""The chunked, values-only aggregation against a plain reference (the full similarity matrix and
np.sort): any chunk budget, incremental merges, sparse rows, `mean`, and reasons for a few papers.

Similarities come from BLAS, whose rounding depends on the CPU and on the shape of each product, so
values are compared with np.allclose, rankings up to near-ties, reasons up to ties."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from recommender.features.base import cosine
from recommender.scoring import aggregation as module
from recommender.scoring.aggregation import (
    TopValues,
    aggregate,
    parse_aggregation,
    reasons_for,
    sparse_top_values,
    top_values,
)

CLOSE = {"rtol": 1e-6, "atol": 1e-7}


def reference(library_rows, corpus_rows, aggregation):
    """(scores, full similarity matrix) from one product and a full sort."""
    full = cosine(corpus_rows, library_rows).astype(np.float64)
    kind, k = parse_aggregation(aggregation)
    if kind == "mean":
        return full.mean(axis=1), full
    return np.sort(full, axis=1)[:, ::-1][:, : min(k, full.shape[1])].mean(axis=1), full


def assert_same_scores(got, want):
    """Close scores and the reference's ranking: only papers whose reference scores differ by float
    noise (random rows have such near-ties) may change places."""
    assert np.allclose(got, want, **CLOSE)
    assert np.diff(want[np.argsort(-got, kind="stable")]).max(initial=0) <= CLOSE["atol"]


def assert_same_reasons(rows, sims, full, papers):
    """The reasons name distinct rows whose similarities are the papers' best, best first."""
    shown = min(3, full.shape[1])
    best = np.sort(full[papers], axis=1)[:, ::-1][:, :shown]
    assert rows.shape == sims.shape == best.shape
    assert np.allclose(sims, best, **CLOSE)
    assert np.allclose(np.take_along_axis(full[papers], rows, axis=1), sims, **CLOSE)
    assert all(len(set(row)) == shown for row in rows.tolist())


def unit(matrix):
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(7)
    library = unit(rng.standard_normal((4100, 48)).astype(np.float32))
    library[3000:3040] = library[100:140]  # exact duplicates: ties, across chunks
    corpus = unit(rng.standard_normal((90, 48)).astype(np.float32))
    return library, corpus


@pytest.mark.parametrize("n_items, aggregation", [
    (1, "top5"), (2, "max"), (7, "top10"), (300, "mean"), (4100, "top5"), (4100, "max"), (4100, "mean"),
    (4100, "top3"),
])
def test_scores_and_reasons_equal_the_reference(rows, n_items, aggregation):
    library, corpus = rows[0][:n_items], rows[1]
    scores, full = reference(library, corpus, aggregation)
    for budget_mb in (0.001, 0.05, 32):  # two-column chunks, ~145-column chunks, one chunk
        values = top_values(library, corpus, aggregation, budget_mb=budget_mb)
        assert_same_scores(values.scores(aggregation), scores)
        every = aggregate(library, corpus, aggregation, budget_mb=budget_mb)
        assert_same_scores(every.scores, scores)
        assert_same_reasons(every.reason_rows, every.reason_similarities, full, np.arange(90))
    for papers in ([5], [89, 3, 40], list(range(0, 90, 2))):  # a few shown papers, in ranking order
        found_rows, found_sims = reasons_for(library, corpus, np.array(papers), aggregation)
        assert_same_reasons(found_rows, found_sims, full, papers)


def test_equal_similarities_name_the_earlier_row_first(rows):
    library, corpus = rows
    twice = np.concatenate([library[:50], library[:50]])  # every similarity twice, rows i and 50 + i
    found_rows, found_sims = reasons_for(twice, corpus, np.arange(90), budget_mb=0.001)
    assert np.array_equal(found_rows[:, 0] + 50, found_rows[:, 1])
    assert np.array_equal(found_sims[:, 0], found_sims[:, 1])


@pytest.mark.parametrize("old, new", [(3, 10), (10, 11), (4000, 4100)])
def test_merging_new_items_into_kept_values_equals_a_full_run(rows, old, new):
    library, corpus = rows[0][:new], rows[1]
    for aggregation in ("max", "top5"):
        before = top_values(library[:old], corpus, aggregation)
        merged = top_values(library, corpus, aggregation, previous=before, budget_mb=0.01)
        assert merged.n_items == new
        assert np.allclose(merged.best, top_values(library, corpus, aggregation).best, **CLOSE)
        assert_same_scores(merged.scores(aggregation), reference(library, corpus, aggregation)[0])


def test_kept_values_of_another_width_are_not_merged(rows):
    library, corpus = rows[0][:10], rows[1]
    wrong = TopValues(best=np.ones((90, 1), dtype=np.float32), total=None, n_items=5)
    got = top_values(library, corpus, "top5", previous=wrong)
    assert_same_scores(got.scores("top5"), reference(library, corpus, "top5")[0])


def test_real_dimensions_and_a_large_corpus():
    rng = np.random.default_rng(3)
    library = unit(rng.standard_normal((2100, 384)).astype(np.float32))
    corpus = unit(rng.standard_normal((1200, 384)).astype(np.float32))
    scores, full = reference(library, corpus, "top5")
    for budget_mb in (0.05, 32):
        assert_same_scores(top_values(library, corpus, "top5", budget_mb=budget_mb).scores("top5"), scores)
    merged = top_values(library, corpus, "top5", previous=top_values(library[:2090], corpus, "top5"))
    assert_same_scores(merged.scores("top5"), scores)
    for papers in ([7], [1199, 0, 600], list(range(1199, 0, -3))):
        found_rows, found_sims = reasons_for(library, corpus, np.array(papers), "top5")
        assert_same_reasons(found_rows, found_sims, full, papers)


def test_sparse_rows_give_the_dense_values_and_reasons(monkeypatch):
    """Non-negative sparse rows (tf-idf), in one sparse product and in blocks of items merged."""
    rng = np.random.default_rng(5)

    def tfidf_like(count):
        matrix = sparse.random(count, 400, density=0.02, format="csr", random_state=rng, dtype=np.float64)
        matrix.data = np.abs(matrix.data) + 0.1
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1))).ravel()
        return sparse.csr_matrix(sparse.diags(1 / np.maximum(norms, 1e-12)) @ matrix, dtype=np.float32)

    library, corpus = tfidf_like(900), tfidf_like(60)
    for aggregation in ("max", "top5", "mean"):
        scores, full = reference(library, corpus, aggregation)
        for block in (module._SPARSE_CHUNK_ITEMS, 250):
            monkeypatch.setattr(module, "_SPARSE_CHUNK_ITEMS", block)
            assert_same_scores(sparse_top_values(library, corpus, aggregation).scores(aggregation), scores)
        assert_same_scores(top_values(library, corpus, aggregation, budget_mb=0.01).scores(aggregation), scores)
        papers = np.arange(0, 60, 3)
        found_rows, found_sims = reasons_for(library, corpus, papers, aggregation)
        assert_same_reasons(found_rows, found_sims, full, papers)
