"""A list that does not jump (recommender/scoring/stability.py): incumbents stay unless beaten clearly, one
action changes only what it must, and the same inputs give the same list."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from recommender.scoring.stability import score_spread, stable_order, stable_selection

RANKED = [f"p{i}" for i in range(30)]
SCORES = list(np.linspace(3.0, 0.1, 30))  # p0 best


def test_without_incumbents_it_is_the_top_n():
    assert stable_selection(RANKED, SCORES, (), 10) == RANKED[:10]
    assert stable_selection(RANKED, SCORES, (), 0) == RANKED


def test_an_incumbent_just_below_the_top_n_stays_against_a_close_newcomer():
    incumbents = set(RANKED[:9]) | {"p11"}  # p11 slipped two places; p9 is a newcomer, barely better
    shown = stable_selection(RANKED, SCORES, incumbents, 10, margin=0.5)
    assert set(shown) == incumbents and shown == sorted(shown, key=RANKED.index)


def test_a_newcomer_that_beats_an_incumbent_clearly_takes_its_place():
    incumbents = set(RANKED[:9]) | {"p29"}  # p29 fell to the bottom
    assert stable_selection(RANKED, SCORES, incumbents, 10, margin=0.5) == RANKED[:10]
    # with margin 0 every better newcomer wins: the plain top N
    near = set(RANKED[:9]) | {"p11"}
    assert stable_selection(RANKED, SCORES, near, 10, margin=0.0) == RANKED[:10]


def test_one_trash_is_one_refill():
    """The user trashed p3; the feedback moved p11 and p12 a little above p8 and p9: p9 stays, and the best
    newcomer takes the one free seat."""
    incumbents = [p for p in RANKED[:10] if p != "p3"]
    moved = ["p0", "p1", "p2", "p4", "p5", "p6", "p7", "p11", "p12", "p8", "p9", "p10", *RANKED[13:]]
    scores = list(np.linspace(3.0, 0.1, len(moved)))
    shown = stable_selection(moved, scores, incumbents, 10)
    assert len(shown) == 10 and set(shown) - set(incumbents) == {"p11"}
    assert shown == [p for p in moved if p in shown]  # in the ranking's order


def test_incumbents_the_ranking_lacks_are_ignored_and_a_shorter_list_drops_the_weakest():
    assert stable_selection(RANKED, SCORES, {"gone", *RANKED[:10]}, 10) == RANKED[:10]
    assert stable_selection(RANKED, SCORES, RANKED[:10], 5) == RANKED[:5]


def test_the_order_puts_the_selection_first_then_the_ranking():
    incumbents = set(RANKED[:9]) | {"p11"}
    order = stable_order(RANKED, SCORES, incumbents, 10)
    assert [RANKED[i] for i in order[:10]] == [p for p in RANKED if p in incumbents]
    assert sorted(order) == list(range(30)) and order[10:] == sorted(order[10:])


def test_the_spread_is_the_whole_rankings_std():
    assert np.isclose(score_spread(SCORES), np.std(SCORES))
    assert score_spread([1.0]) == 0.0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=60, unique=True), st.integers(0, 40),
       st.sets(st.integers(0, 80), max_size=40), st.floats(0, 3))
def test_always_n_papers_every_one_from_the_top_n_or_an_incumbent_and_deterministic(values, top_n, members, margin):
    scores = sorted(values, reverse=True)
    ranked = list(range(len(scores)))
    shown = stable_selection(ranked, scores, members, top_n, margin)
    assert len(shown) == (len(ranked) if not top_n else min(top_n, len(ranked)))
    assert len(set(shown)) == len(shown) and shown == sorted(shown)
    assert all(p < (top_n or len(ranked)) or p in members for p in shown)
    assert shown == stable_selection(ranked, scores, set(members), top_n, margin)
    # with no incumbents, or margin 0 on a ranking in score order, it is the top N
    assert stable_selection(ranked, scores, (), top_n, margin) == ranked[: top_n or len(ranked)]
    assert stable_selection(ranked, scores, members, top_n, 0.0) == ranked[: top_n or len(ranked)]
    # every incumbent shown from below the top N was not beaten clearly by a newcomer left out
    threshold = margin * score_spread(scores) if top_n else 0.0
    left_out = [p for p in ranked[:top_n] if p not in shown] if top_n else []
    for kept in (p for p in shown if top_n and p >= top_n):
        assert all(scores[new] <= scores[kept] + threshold for new in left_out)
