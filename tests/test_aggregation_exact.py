"""The values-only aggregation against the original full aggregation, bit for bit: any chunk budget,
the one-column chunk BLAS rounds differently, ties, incremental merges, reasons for a few papers."""

from __future__ import annotations

import numpy as np
import pytest

from recommender.scoring.aggregation import TopValues, aggregate, reasons_for, top_values


def reference(library_rows, corpus_rows, aggregation):
    """The aggregation as it was before the speed work (argpartition with index tracking)."""
    from recommender.features.base import cosine
    from recommender.scoring.aggregation import parse_aggregation

    kind, k = parse_aggregation(aggregation)
    n_items, n_papers = library_rows.shape[0], corpus_rows.shape[0]
    keep = min(max(k, 3), n_items)
    best_sims = np.full((n_papers, keep), -np.inf, dtype=np.float32)
    best_rows = np.zeros((n_papers, keep), dtype=np.int64)
    total = np.zeros(n_papers, dtype=np.float64)
    for start in range(0, n_items, 2048):
        sims = cosine(corpus_rows, library_rows[start : start + 2048])
        total += sims.sum(axis=1)
        candidates = np.concatenate([best_sims, sims], axis=1)
        top = np.argpartition(-candidates, keep - 1, axis=1)[:, :keep]
        earlier = np.take_along_axis(best_rows, np.minimum(top, keep - 1), axis=1)
        best_rows = np.where(top < keep, earlier, start + top - keep)
        best_sims = np.take_along_axis(candidates, top, axis=1)
    order = np.argsort(-best_sims, axis=1, kind="stable")
    best_sims = np.take_along_axis(best_sims, order, axis=1)
    best_rows = np.take_along_axis(best_rows, order, axis=1)
    scores = total / n_items if kind == "mean" else best_sims[:, : min(k, n_items)].mean(axis=1)
    shown = min(3, n_items)
    return scores.astype(np.float64), best_rows[:, :shown], best_sims[:, :shown].astype(np.float64)


def unit(matrix):
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(7)
    library = unit(rng.standard_normal((4100, 48)).astype(np.float32))
    library[3000:3040] = library[100:140]  # exact duplicates: ties, across chunks
    corpus = unit(rng.standard_normal((90, 48)).astype(np.float32))
    return library, corpus


@pytest.mark.parametrize("n_items", [1, 2, 3, 7, 2048, 2049, 2050, 4097, 4100])
@pytest.mark.parametrize("aggregation", ["max", "mean", "top3", "top5", "top10"])
def test_scores_and_reasons_equal_the_original_bit_for_bit(rows, n_items, aggregation):
    library, corpus = rows[0][:n_items], rows[1]
    scores, reason_rows, reason_sims = reference(library, corpus, aggregation)
    for budget_mb in (0.001, 0.05, 32):  # narrowest chunks, ~145-column chunks, one chunk
        got = top_values(library, corpus, aggregation, budget_mb=budget_mb).scores(aggregation)
        assert got.tobytes() == scores.tobytes(), budget_mb
    full = aggregate(library, corpus, aggregation)
    assert full.reason_rows.tobytes() == reason_rows.tobytes()
    assert full.reason_similarities.tobytes() == reason_sims.tobytes()
    for papers in ([5], [89, 3, 40], list(range(0, 90, 2))):  # a few shown papers, in ranking order
        found_rows, found_sims = reasons_for(library, corpus, np.array(papers), aggregation)
        assert found_rows.tobytes() == reason_rows[papers].tobytes()
        assert found_sims.tobytes() == reason_sims[papers].tobytes()


@pytest.mark.parametrize("old, new", [(10, 11), (2047, 2049), (2048, 2049), (2049, 2050), (4000, 4100), (3, 3000)])
@pytest.mark.parametrize("aggregation", ["max", "top5"])
def test_merging_new_items_into_kept_values_equals_a_full_run(rows, old, new, aggregation):
    library, corpus = rows[0][:new], rows[1]
    before = top_values(library[:old], corpus, aggregation)
    merged = top_values(library, corpus, aggregation, previous=before, budget_mb=0.01)
    full = top_values(library, corpus, aggregation)
    assert merged.best.tobytes() == full.best.tobytes()
    assert merged.scores(aggregation).tobytes() == reference(library, corpus, aggregation)[0].tobytes()


@pytest.mark.parametrize("n_items", [2, 3, 70, 300, 2050, 2100, 4200, 4400])
def test_a_large_corpus_keeps_its_bits(n_items):
    """Real dimensions (384) and a corpus large enough that the shown papers get their own product."""
    rng = np.random.default_rng(3)
    library = unit(rng.standard_normal((n_items, 384)).astype(np.float32))
    corpus = unit(rng.standard_normal((1200, 384)).astype(np.float32))
    scores, reason_rows, reason_sims = reference(library, corpus, "top5")
    for budget_mb in (0.001, 0.5):
        assert top_values(library, corpus, "top5", budget_mb=budget_mb).scores("top5").tobytes() == scores.tobytes()
    if n_items > 100:
        before = top_values(library[: n_items - 10], corpus, "top5")
        merged = top_values(library, corpus, "top5", previous=before)
        assert merged.scores("top5").tobytes() == scores.tobytes()
    for papers in ([7], [1199, 0, 600], list(range(0, 1200, 60)), list(range(1199, 0, -3))):
        found_rows, found_sims = reasons_for(library, corpus, np.array(papers), "top5")
        assert found_rows.tobytes() == reason_rows[papers].tobytes()
        assert found_sims.tobytes() == reason_sims[papers].tobytes()


def test_kept_values_of_another_width_are_not_merged(rows):
    library, corpus = rows[0][:10], rows[1]
    wrong = TopValues(best=np.ones((90, 1), dtype=np.float32), total=None, n_items=5)
    got = top_values(library, corpus, "top5", previous=wrong)
    assert got.scores("top5").tobytes() == reference(library, corpus, "top5")[0].tobytes()
