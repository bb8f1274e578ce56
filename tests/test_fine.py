"""The fine-ranking benchmark's maths (recommender/evaluation/fine.py) and the cascade that orders the fused
score's top papers (scoring/fusion.py), on small made-up data with answers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from recommender.evaluation.fine import (
    fine_means,
    fine_metrics,
    hard_candidates,
    kendall_taus,
    ndcg_at,
    nearest_items,
    profile_nearness,
)
from recommender.scoring.fusion import cascade


def test_nearness_is_the_cosine_to_the_mean_profile():
    train = np.array([[2.0, 0.0], [0.0, 1.0], [5.0, 5.0]])  # lengths do not count: unit rows are averaged
    test = np.array([[1.0, 1.0], [3.0, 0.0], [-1.0, 0.0], [0.0, -2.0]])
    nearness = profile_nearness(train, [np.array([0, 1]), np.array([0])], test)
    s = np.sqrt(0.5)
    assert np.allclose(nearness, [[1.0, s, -s, -s], [s, 1.0, -1.0, 0.0]])
    assert nearest_items(nearness, 2).tolist() == [[0, 1], [1, 0]]
    assert nearest_items(np.array([[0.5, 0.5, 0.9]]), 2).tolist() == [[2, 0]]  # ties: the lower index first


def test_hard_candidates_keep_users_with_a_save_among_them():
    nearness = np.array([[0.9, 0.8, 0.1, 0.0], [0.9, 0.8, 0.1, 0.0], [0.1, 0.2, 0.3, 0.4]])
    relevant = np.array([[False, True, False, False], [False, False, False, True], [True, False, False, True]])
    hard = hard_candidates(nearness, relevant, size=2)
    assert hard.rows.tolist() == [0, 2]  # user 1's only save is not among its 2 nearest
    assert hard.considered == 3
    assert hard.columns.tolist() == [[0, 1], [3, 2]]
    assert hard.relevant.tolist() == [[False, True], [True, False]]
    scores = np.arange(12.0).reshape(3, 4)
    assert hard.on_candidates(scores).tolist() == [[0.0, 1.0], [11.0, 10.0]]


def test_ndcg_at_k_known_answers():
    scores = np.array([[0.9, 0.8, 0.1], [0.1, 0.8, 0.9], [0.3, 0.2, 0.1]])
    relevant = np.array([[False, True, False], [False, True, True], [True, True, True]])
    discounts = 1 / np.log2(np.arange(2, 5))
    expected = [discounts[1] / discounts[0], 1.0, 1.0]
    assert np.allclose(ndcg_at(scores, relevant, k=10), expected)
    # k cuts: only the top 1 counts, and the ideal has one hit
    assert np.allclose(ndcg_at(scores, relevant, k=1), [0.0, 1.0, 1.0])


def test_kendall_tau_b_between_scores_and_saves():
    relevant = np.array([[True, True, False, False], [True, True, False, False], [True, True, True, True]])
    scores = np.array([[3.0, 2.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0], [3.0, 2.0, 1.0, 0.0]])
    taus = kendall_taus(scores, relevant)
    # 4 concordant pairs across the groups, none discordant; 2 pairs tied in the saves, none in the scores
    assert taus[0] == pytest.approx(4 / np.sqrt(6 * 4))
    assert np.isnan(taus[1]) and np.isnan(taus[2])  # constant scores; every candidate saved
    reverse = kendall_taus(-scores[:1], relevant[:1])
    assert reverse[0] == pytest.approx(-4 / np.sqrt(24))


def test_fine_metrics_average_over_defined_users():
    scores = np.array([[3.0, 2.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    relevant = np.array([[True, True, False, False], [True, False, False, False]])
    means = fine_means(fine_metrics(scores, relevant))
    assert means["tau"] == pytest.approx(4 / np.sqrt(24))  # the constant row has no tau
    assert set(means) == {"ndcg@10", "tau"}


def test_cascade_reorders_only_the_coarse_top_and_keeps_its_values():
    coarse = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    fine = np.array([0.0, 1.0, 2.0, 3.0, 9.0])
    out = cascade(coarse, {"fine": fine}, {"fine": 1.0}, top=3)
    # the top 3 (papers 0, 1, 2) in the fine order 2, 1, 0 take the values 5, 4, 3; papers 3, 4 stay
    assert out.tolist() == [3.0, 4.0, 5.0, 2.0, 1.0]
    eligible = np.array([True, False, True, True, True])  # paper 1 owned: the top 3 are 0, 2, 3
    assert cascade(coarse, {"fine": fine}, {"fine": 1.0}, top=3, eligible=eligible).tolist() == [2.0, 4.0, 3.0, 5.0, 1.0]
    rows = cascade(np.vstack([coarse, coarse[::-1]]), {"fine": np.vstack([fine, -fine])}, {"fine": 1.0}, top=2)
    assert rows.tolist() == [[4.0, 5.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 5.0, 4.0]]
    # the set of the top `top` never changes, so recall at that depth is the coarse score's
    assert set(np.argsort(-out)[:3]) == set(np.argsort(-coarse)[:3])
