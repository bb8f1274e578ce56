"""The simulated user of recommender/evaluation/feedback_sim.py: a small run on real CiteULike data by default,
the reported run (docs/evaluation.md) under -m slow."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from recommender.collaborative.datasets import load_dataset
from recommender.evaluation.feedback_sim import (
    evaluate_feedback,
    format_feedback_table,
    simulate_fold,
    simulate_user,
)


def test_one_user_by_hand():
    """Candidates 0-5; the user saved 1 and 4. Round 1 shows the two best (0, 1): keeps 1, removes 0."""
    test_sims = np.eye(6, dtype=np.float32)
    test_sims[1, 4] = test_sims[4, 1] = 0.9  # 4 is like the kept paper
    test_sims[0, 2] = test_sims[2, 0] = 0.9  # 2 is like the removed paper
    profile_sims = np.array([[0.9, 0.8, 0.7, 0.5, 0.3, 0.1]], dtype=np.float32)
    relevant = np.array([False, True, False, False, True, False])
    out = simulate_user(profile_sims, test_sims, relevant, {"none": None, "learn": 0.0, "penalty": 2.0}, "max",
                        rounds=2, size=2)
    assert out["none"] == [(0.5, 1.0, 0.5), (0.0, 1.0, 0.5)]  # round 2 shows 2 and 3: the profile alone misses 4
    assert out["learn"][1][0] == 0.5  # the kept paper pulls 4 into round 2
    assert out["learn"][1][2] == 1.0  # both saves found after two rounds
    assert out["penalty"][1][0] == 0.5


def test_a_small_run_on_citeulike(shared):
    data = load_dataset(f"citeulike-a:{shared / 'data' / 'citeulike-a'}")
    arms = {"without feedback": None, "penalty": 1.0, "linear": ("linear", 4.0, True)}
    report = simulate_fold(data, 0, arms, users=40)
    report.update(data=data.name, aggregation="top5")
    first = {arm: rounds[0] for arm, rounds in report["arms"].items()}
    assert len({tuple(v) for v in first.values()}) == 1  # round 1 is the same list for every arm
    assert all(0 <= p <= 1 and 0 <= r <= 1 and 0 <= f <= 1 for rounds in report["arms"].values() for p, r, f in rounds)
    assert all(a[2] <= b[2] for rounds in report["arms"].values() for a, b in itertools.pairwise(rounds))  # cumulative
    assert report["arms"]["linear"] != report["arms"]["without feedback"]  # the feedback changed later rounds
    assert "with ÷ without" in format_feedback_table(report)


@pytest.mark.slow
def test_the_reported_run(shared):
    """docs/evaluation.md's table: rule chosen on fold 1, reported on fold 0, 2,000 users each. It checks what the
    document claims (a round-2 gain, no loss in round 3); the issue's 1.10× round-3 target is not met (see there)."""
    data = load_dataset(f"citeulike-a:{shared / 'data' / 'citeulike-a'}")
    report = evaluate_feedback(data, users=2000)
    arms = list(report["arms"].values())
    without, learned = arms[0], arms[-1]
    assert report["rule"] == "with feedback: linear model ×4"
    assert learned[1][0] >= 1.2 * without[1][0] and learned[2][0] >= without[2][0]
    assert learned[2][2] > without[2][2]  # more of the hidden saves found after three rounds
