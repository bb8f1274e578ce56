"""Issue 33's pieces: the order loss, the linear model's evidence share, the one-SE choice and the kept signals."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from recommender.evaluation.dumps import FoldDump, read_rules, read_split
from recommender.evaluation.order import order_losses
from benchmarks.lib.weight_grid import (
    MissingOutside,
    ScoredSplit,
    Weighting,
    bucket_means,
    complexity,
    fine_choice,
    fine_mix,
    one_se_choice,
)
from recommender.scoring.fusion import (
    FusionWeights,
    evidence_share,
    fuse,
    library_fine_weights,
    standardise,
    weighted_sum,
)


def test_the_order_loss_is_one_minus_the_auc_ties_counting_half():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 5, (60, 30)).astype(np.float32)  # many ties
    relevant = rng.random((60, 30)) < 0.2
    relevant[0] = False
    relevant[1] = True
    losses = order_losses(scores, relevant)
    assert np.isnan(losses[0]) and np.isnan(losses[1])  # nothing saved / nothing else
    for row in range(2, 60):
        if 0 < relevant[row].sum() < relevant.shape[1]:
            assert losses[row] == pytest.approx(1.0 - roc_auc_score(relevant[row], scores[row]))


def test_the_order_loss_of_a_perfect_and_a_reversed_order():
    relevant = np.array([[True, True, False, False, False]])
    assert order_losses(np.array([[5.0, 4, 3, 2, 1]]), relevant)[0] == 0.0
    assert order_losses(np.array([[1.0, 2, 3, 4, 5]]), relevant)[0] == 1.0
    assert order_losses(np.array([[5.0, 1, 3, 2, 4]]), relevant)[0] == pytest.approx(3 / 6)  # item 1 sits below all three others


def test_the_linear_models_share_grows_with_the_library():
    weights = FusionWeights(lexical=0.1, learned=0.5, collaborative=0.2, learned_evidence=20.0)
    assert evidence_share(20, 20.0) == 0.5
    assert evidence_share(np.array([0, 20, 180]), 20.0) == pytest.approx([0.0, 0.5, 0.9])
    assert evidence_share(7, 0.0) == 1.0
    small, large = weights.shares(["lexical", "learned", "collaborative"], 20), weights.shares(
        ["lexical", "learned", "collaborative"], 1980)
    assert small["learned"] == pytest.approx(0.25) and small["content"] == pytest.approx(0.45)
    assert large["learned"] == pytest.approx(0.495)
    assert sum(small.values()) == pytest.approx(1.0)
    columns = weights.shares(["learned"], np.array([[20.0], [1980.0]]))
    assert columns["learned"][:, 0] == pytest.approx([0.25, 0.495])
    assert columns["content"][:, 0] == pytest.approx([0.75, 0.505])
    plain = FusionWeights(lexical=0.1, learned=0.5)
    assert plain.shares(["lexical", "learned"], 3) == plain.shares(["lexical", "learned"])


def test_the_fine_orders_linear_share_follows_the_same_evidence():
    weights = FusionWeights(learned=0.5, learned_evidence=10.0)
    fine = library_fine_weights({"nearest": 0.4, "learned": 0.6}, weights, 10)
    assert fine == pytest.approx({"nearest": 0.4, "learned": 0.3, "content": 0.3})
    assert library_fine_weights({"nearest": 1.0}, weights, 10) == {"nearest": 1.0}
    assert library_fine_weights({"learned": 0.6}, FusionWeights(learned=0.5), 10) == {"learned": 0.6}


def test_fuse_is_the_weighted_sum_of_the_standardised_signals():
    rng = np.random.default_rng(1)
    signals = {"content": rng.random((4, 9)), "learned": rng.random((4, 9))}
    weights = {"content": np.full((4, 1), 0.7), "learned": np.array([[0.3], [0.0], [0.1], [0.2]])}
    standardised = {name: standardise(values) for name, values in signals.items()}
    assert np.allclose(fuse(signals, weights), weighted_sum(standardised, weights))
    row = fuse({name: values[2] for name, values in signals.items()}, {"content": 0.7, "learned": 0.1})
    assert np.allclose(fuse(signals, weights)[2], row)


def _folds(means: dict[FusionWeights, list[float]], ordering: dict[FusionWeights, float] | None = None
           ) -> list[dict[FusionWeights, dict[str, float]]]:
    return [{w: {"recall@50": values[fold], "fine.order loss": (ordering or {}).get(w, 0.2)}
             for w, values in means.items()} for fold in range(5)]


def test_the_one_se_rule_takes_the_simplest_weighting_near_the_best_on_every_dataset():
    simple = FusionWeights(learned=0.2, learned_evidence=40.0)
    middle = FusionWeights(learned=0.4, collaborative=0.1)
    peak = FusionWeights(learned=0.6, collaborative=0.2)
    bad = FusionWeights()
    sizes = {"a": np.array([10, 30, 200]), "t": np.array([15, 60])}
    a = {peak: [0.50, 0.52, 0.51, 0.49, 0.50], middle: [0.50, 0.51, 0.50, 0.49, 0.50],
         simple: [0.50, 0.51, 0.50, 0.49, 0.50], bad: [0.40, 0.41, 0.40, 0.39, 0.40]}
    t = {peak: [0.40, 0.41, 0.42, 0.40, 0.41], middle: [0.40, 0.41, 0.41, 0.40, 0.41],
         simple: [0.35, 0.36, 0.35, 0.35, 0.36], bad: [0.30, 0.30, 0.31, 0.30, 0.30]}
    choice = one_se_choice({"a": _folds(a), "t": _folds(t)}, sizes, objective=None)
    assert choice.best == peak
    assert simple not in choice.within  # within one SE on a, far below on t
    assert choice.chosen == middle
    alone = one_se_choice({"a": _folds(a)}, sizes, objective=None)
    assert alone.chosen == simple  # the least weight on the linear model and the collaborative part
    assert complexity(simple, np.array([40])) == pytest.approx(0.1)
    ordering = {peak: 0.18, middle: 0.25, simple: 0.22, bad: 0.01}  # bad orders best, but loses the saves
    by_order = one_se_choice({"a": _folds(a, ordering)}, sizes)
    assert by_order.chosen == peak


def test_an_outside_loss_chooses_among_the_weightings_the_datasets_cannot_tell_apart():
    near = FusionWeights(learned=0.4, collaborative=0.1)
    peak = FusionWeights(learned=0.6, collaborative=0.2)
    far = FusionWeights()
    sizes = {"a": np.array([10, 30, 200])}
    a = {peak: [0.50, 0.52, 0.51, 0.49, 0.50], near: [0.50, 0.51, 0.50, 0.49, 0.50], far: [0.40, 0.41, 0.40, 0.39, 0.40]}
    ordering = {peak: 0.18, near: 0.25, far: 0.30}
    assert one_se_choice({"a": _folds(a, ordering)}, sizes).chosen == peak  # the datasets' own order loss
    outside = {peak: 0.43, near: 0.41, far: 0.10}  # far orders own papers best, but loses the saves
    assert one_se_choice({"a": _folds(a, ordering)}, sizes, outside=outside).chosen == near
    with pytest.raises(MissingOutside) as missing:
        one_se_choice({"a": _folds(a, ordering)}, sizes, outside={peak: 0.43})
    assert missing.value.weightings == [near]


def test_the_fine_order_takes_the_plainest_share_within_one_se():
    folds = [{1.0: 0.50 + d, 0.6: 0.51 + d, 0.3: 0.52 + d, 0.0: 0.52 + d} for d in (0.0, 0.01, -0.01, 0.005, 0.0)]
    assert fine_choice({"a": folds}) == 0.3
    wide = [{1.0: 0.51 + d, 0.6: 0.51 + d, 0.3: 0.52 + d, 0.0: 0.52 + d} for d in (0.0, 0.03, -0.03, 0.02, 0.0)]
    assert fine_choice({"a": wide}) == 1.0


def test_a_fine_mix_keeps_the_fused_scores_proportions():
    mix = fine_mix(FusionWeights(lexical=0.1, learned=0.5, collaborative=0.2), 0.6)
    assert mix == pytest.approx({"nearest": 0.6, "lexical": 0.04, "learned": 0.2, "collaborative": 0.08,
                                 "content": 0.08})
    assert fine_mix(FusionWeights(learned=0.5), 1.0) == {"nearest": 1.0}


def _split_arrays(rng, users=12, items=40):
    signals = {name: rng.random((users, items)).astype(np.float32)
               for name in ("content", "lexical", "learned", "collaborative", "nearest", "max")}
    relevant = rng.random((users, items)) < 0.15
    relevant[np.arange(users), rng.integers(0, items, users)] = True
    positions = [np.arange(size) for size in rng.integers(3, 80, users)]
    return signals, relevant, positions


class _Hard:
    def __init__(self, rows, columns, relevant):
        self.rows, self.columns, self.relevant = rows, columns, relevant


def test_kept_signals_read_back_and_score_as_kept(tmp_path):
    rng = np.random.default_rng(2)
    signals, relevant, positions = _split_arrays(rng)
    columns = np.argsort(rng.random((12, 40)), axis=1)[:, :10]
    hard = _Hard(np.arange(12), columns, np.take_along_axis(relevant, columns, axis=1))
    dump = FoldDump(tmp_path, 3)
    in_area = {name: rng.random((12, 10)).astype(np.float32) for name in signals}
    dump.split("test", signals, relevant, positions, hard, in_area)
    dump.rule("dense top3", {"recall@50": np.arange(12.0)})
    dump.rule("dense top3", {"fine.ndcg@10": np.ones(12)})
    dump.close()
    split = read_split(tmp_path, 3, "test")
    assert set(split.signals) == set(signals) and set(split.in_area) == set(signals)
    assert np.array_equal(split.signals["learned"], signals["learned"])
    assert list(split.sizes) == [len(p) for p in positions]
    assert read_rules(tmp_path, 3)["dense top3"]["recall@50"].tolist() == list(range(12))
    weighting = Weighting(FusionWeights(lexical=0.1, learned=0.5, collaborative=0.2, learned_evidence=20.0),
                          {"nearest": 0.5, "learned": 0.5})
    metrics = ScoredSplit(split, dtype=np.float64).metrics(weighting)
    scores = ScoredSplit(split, dtype=np.float64).shipped_form(weighting)
    assert np.allclose(metrics["order loss"], order_losses(scores, relevant), equal_nan=True)
    assert metrics["in-area.order loss"].shape == (12,)
    table = bucket_means(metrics, split.sizes, split.hard_rows)
    small = split.sizes <= 20
    assert table["order loss"]["≤ 20"] == pytest.approx(np.nanmean(metrics["order loss"][small]))
