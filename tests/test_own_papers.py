"""The own-papers benchmark's maths (benchmarks/lib/own_papers.py) on hand-made cases."""

import math

import numpy as np
import pytest
from scipy import sparse

from benchmarks.lib.own_papers import (
    OwnPapersCase,
    author_half,
    graded,
    graded_ndcg,
    nearest_papers,
    own_paper_cases,
    pairwise_loss,
    papers_by_author,
    pooled_loss,
)


def test_pairwise_loss_weights_each_wrong_pair_by_its_grade_gap():
    grades = np.array([2, 1, 0])  # pair weights: (2,1) 1, (2,0) 2, (1,0) 1 → 4 in all
    assert pairwise_loss(np.array([3.0, 2.0, 1.0]), grades) == (0.0, 4.0)
    assert pairwise_loss(np.array([1.0, 2.0, 3.0]), grades) == (4.0, 4.0)
    assert pairwise_loss(np.array([2.0, 3.0, 1.0]), grades) == (1.0, 4.0)  # only the gap-1 pair wrong
    assert pairwise_loss(np.array([2.0, 1.0, 3.0]), grades) == (3.0, 4.0)  # (2,0) and (1,0) wrong: 2 + 1


def test_pairwise_loss_counts_ties_half_and_ignores_equal_grades():
    assert pairwise_loss(np.zeros(3), np.array([2, 1, 0])) == (2.0, 4.0)
    # the two grade-1 papers may come in either order; only their pairs with the 0 count
    assert pairwise_loss(np.array([1.0, 2.0, 0.0]), np.array([1, 1, 0])) == (0.0, 2.0)
    assert pairwise_loss(np.array([1.0, 1.0, 1.0]), np.array([0, 0, 0])) == (0.0, 0.0)


def test_pairwise_loss_depends_on_the_order_only():
    scores, grades = np.array([0.3, -5.0, 0.2, 9.0]), np.array([0, 2, 1, 0])
    assert pairwise_loss(scores, grades) == pairwise_loss(np.exp(scores), grades)


def test_pooled_loss_sums_before_dividing():
    assert pooled_loss([(1.0, 4.0), (0.0, 1.0)]) == pytest.approx(0.2)  # not the mean of 0.25 and 0
    assert math.isnan(pooled_loss([(0.0, 0.0)]))
    assert math.isnan(pooled_loss([]))


def test_graded_ndcg_uses_exponential_gains_and_the_cutoff():
    grades = np.array([0, 2, 1])
    dcg = 0 + 3 / math.log2(3) + 1 / 2  # gains 2^g − 1: 0, 3, 1
    ideal = 3 + 1 / math.log2(3)
    assert graded_ndcg(np.array([3.0, 2.0, 1.0]), grades) == pytest.approx(dcg / ideal)
    assert graded_ndcg(np.array([1.0, 3.0, 2.0]), grades) == pytest.approx(1.0)
    assert graded_ndcg(np.array([3.0, 2.0, 1.0]), grades, k=1) == 0.0
    assert graded_ndcg(np.array([3.0, 1.0, 2.0]), grades, k=2) == pytest.approx((1 / math.log2(3)) / ideal)
    assert math.isnan(graded_ndcg(np.array([1.0, 2.0]), np.array([0, 0])))


def test_nearest_papers_by_cosine_leaving_out_the_paper_and_the_profile():
    angles = np.radians([0, 10, 80, 20, 40, 180])
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1) * np.array([[1], [5], [1], [2], [1], [1]])
    assert nearest_papers(vectors, 0, excluded=[3], size=3).tolist() == [1, 4, 2]  # length does not count
    assert nearest_papers(vectors, 0, excluded=[], size=2).tolist() == [1, 3]
    assert nearest_papers(sparse.csr_matrix(vectors), 0, excluded=[3], size=3).tolist() == [1, 4, 2]  # tf-idf rows


def test_nearest_papers_breaks_ties_by_index():
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [0.0, 3.0]])
    assert nearest_papers(vectors, 0, excluded=[], size=4).tolist() == [2, 3, 1, 4]


def test_graded_gives_collaborators_one_and_the_held_out_two():
    authors = [{"me", "ann"}, {"me", "bob"}, {"cat"}, {"bob", "dan"}, {"me"}, {"eve", "ann"}, {"fay"}]
    # own papers 0, 1, 4 (4 held out); collaborators ann and bob; "me" on no candidate but the held-out
    grades = graded(np.array([4, 2, 3, 5, 6]), 4, [0, 1, 4], "me", authors)
    assert grades.tolist() == [2, 0, 1, 1, 0]


def test_own_paper_cases_hold_out_an_own_paper_and_exclude_the_profile():
    authors = [{"me", "ann"}, {"me"}, {"me"}, {"ann"}, {"x"}, {"y"}]
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.95, 0.05], [0.5, 0.5], [-1.0, 0.0]])
    cases = own_paper_cases(authors, vectors, min_papers=3, held_out_per_author=3, neighbours=2)
    assert [case.held_out for case in cases] == [0, 1, 2]  # only "me" has 3 papers; each held out in turn
    first = cases[0]
    assert first.profile.tolist() == [1, 2]
    assert first.candidates.tolist() == [0, 3, 4]  # the held-out paper, then its nearest non-profile papers
    assert first.grades.tolist() == [2, 1, 0]  # paper 3 is by ann, who wrote paper 0 with "me"
    assert cases[2].candidates.tolist() == [2, 4, 3]
    assert cases[2].grades.tolist() == [2, 0, 1]  # ann counts though paper 0 is now in the profile
    assert own_paper_cases(authors, vectors, min_papers=4) == []
    assert papers_by_author(authors)["me"] == [0, 1, 2]


def test_own_paper_cases_draw_the_neighbours_from_a_wider_pool():
    angles = np.radians(np.arange(0, 90, 3))  # papers 0-2 by "me", the rest ever further from paper 0
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    authors = [{"me"}] * 3 + [{f"x{n}"} for n in range(27)]
    tight = own_paper_cases(authors, vectors, min_papers=3, neighbours=4, seed=1)
    wide = own_paper_cases(authors, vectors, min_papers=3, neighbours=4, pool=20, seed=1)
    assert [case.held_out for case in tight] == [case.held_out for case in wide]  # the pool draws apart
    for near, far in zip(tight, wide):
        assert len(far.candidates) == 5 and far.candidates[0] == far.held_out
        assert set(far.candidates[1:]) <= set(nearest_papers(vectors, far.held_out, far.profile, 20).tolist())
        assert not ({0, 1, 2} - {far.held_out}) & set(far.candidates.tolist())  # never a profile paper
    assert any(set(near.candidates) != set(far.candidates) for near, far in zip(tight, wide))


def test_author_half_splits_researchers_not_profiles():
    cases = [OwnPapersCase(f"author {n // 2}", np.array([n]), n, np.array([n]), np.array([2])) for n in range(14)]
    halves = [author_half(cases, half) for half in (0, 1)]
    authors = [{case.author for case in half} for half in halves]
    assert (len(authors[0]), len(authors[1])) == (3, 4) and not authors[0] & authors[1]  # 7 authors: 3 and 4
    assert sorted(case.held_out for half in halves for case in half) == list(range(14))  # every profile once
    assert author_half(cases, 0) == halves[0] and author_half(cases, 0, seed=1) != halves[0]  # fixed by the seed
