"""The simulated user of recommender/evaluation/feedback_sim.py: a small run on real CiteULike data by default,
the reported run (docs/evaluation.md) under -m slow."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from recommender.collaborative.datasets import load_dataset
from recommender.evaluation.feedback_sim import (
    TfidfUser,
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
    out = simulate_user(TfidfUser(profile_sims, test_sims, "max"), relevant,
                        {"none": None, "learn": 0.0, "penalty": 2.0}, rounds=2, size=2)
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


# ---- the same simulation on dense features with the fused score (feedback_sim.py with dense items) ----


def _fake_fold():
    """Six candidates; training item 0 is like candidates 0-2, candidate 4 is like candidate 1 only."""
    from types import SimpleNamespace

    test_vectors = np.eye(6, dtype=np.float32)
    test_vectors[4] = test_vectors[1] * 0.3 + test_vectors[4] * 0.95
    test_vectors /= np.linalg.norm(test_vectors, axis=1, keepdims=True)
    train_vectors = np.array([[0.6, 0.55, 0.5, 0.2, 0.0, 0.1]], dtype=np.float32)
    train_vectors /= np.linalg.norm(train_vectors)
    factors = test_vectors[:, :3].copy()
    return SimpleNamespace(
        train_vectors=train_vectors, test_vectors=test_vectors,
        similarity=train_vectors @ test_vectors.T, lexical_similarity=train_vectors @ test_vectors.T,
        train_factors_from_text=train_vectors[:, :3].copy(), test_factors=factors,
        model=SimpleNamespace(user_vector=lambda library: library.mean(axis=0)))


def test_one_dense_user_by_hand():
    """Content only (every other share 0): round 1 shows 0 and 1; the user keeps 1 (a save) and removes 0.
    Without feedback round 2 shows 2 and 3; with the kept paper in the profile, 4 (like 1) comes up."""
    from recommender.evaluation.feedback_sim import NO_FEEDBACK, DenseRule, DenseUser
    from recommender.scoring.fusion import FusionWeights

    fold = _fake_fold()
    extra = {"dense": fold.test_vectors @ fold.test_vectors.T, "lexical": fold.test_vectors @ fold.test_vectors.T}
    user = DenseUser(fold, extra, np.array([0]), FusionWeights(), seed=0)
    relevant = np.array([False, True, False, False, True, False])
    arms = {"none": NO_FEEDBACK, "kept": DenseRule(), "linear": DenseRule("linear", 0.25)}
    out = simulate_user(user, relevant, arms, rounds=2, size=2)
    assert out["none"] == [(0.5, 1.0, 0.5), (0.0, 1.0, 0.5)]
    assert out["kept"][1] == (0.5, 1.0, 1.0)  # 4 found in round 2: the kept paper joined the profile
    assert out["linear"][0] == out["none"][0] and out["linear"][1][2] == 1.0


def test_a_small_dense_run_has_the_tfidf_runs_users(citeulike_slice):
    """A real slice of citeulike-a with stand-in embeddings: the arms share round 1, the feedback changes later
    rounds, and the users are those feedback_sim samples (same size from the same eligible users)."""
    from recommender.evaluation.feedback_sim import NO_FEEDBACK, DenseRule
    from recommender.evaluation.feedback_sim import arm_name as rule_name
    from tests.test_evaluation import FAST, _projected_vectors

    vectors = _projected_vectors(citeulike_slice)
    index = {text: row for row, text in enumerate(citeulike_slice.texts)}

    class Projected:
        def transform(self, texts):
            return vectors[[index[text] for text in texts]]

    report = evaluate_feedback(citeulike_slice, representation=Projected(), encoder_id="projected-tfidf", users=30,
                               settings=FAST, candidates=(DenseRule("linear", 0.25), DenseRule("linear", 4.0)))
    arms = report["arms"]
    assert list(arms)[0] == rule_name(NO_FEEDBACK) and list(arms)[-1] == report["rule"]
    assert len({tuple(rounds[0]) for rounds in arms.values()}) == 1
    assert arms[report["rule"]][1:] != arms[rule_name(NO_FEEDBACK)][1:]
    assert all(a[2] <= b[2] for rounds in arms.values() for a, b in itertools.pairwise(rounds))
    assert report["users"] == 30 == simulate_fold(citeulike_slice, 0, {"none": None}, users=30)["users"]
    assert set(report["fusion_weights"]) == {"lexical", "learned", "collaborative"}
    assert "with ÷ without" in format_feedback_table(report)


@pytest.fixture(scope="module")
def citeulike_slice():
    from tests.test_evaluation import _slice

    return _slice(300)


@pytest.mark.slow
def test_the_reported_dense_run(shared):
    """docs/evaluation.md's dense table: citeulike-a, weight chosen on fold 1, reported on fold 0, 2,000 users;
    the chosen weight is the one zotrec applies on dense rows at run time."""
    from recommender.evaluation.feedback_sim import DenseRule
    from recommender.evaluation.feedback_sim import arm_name as rule_name
    from recommender.features.dense import MODEL_ID, DenseRepresentation, dense_available
    from recommender.scoring.feedback import DENSE_LINEAR_WEIGHT

    if not dense_available():
        pytest.skip("the dense packages are not installed")
    data = load_dataset(f"citeulike-a:{shared / 'data' / 'citeulike-a'}")
    report = evaluate_feedback(data, representation=DenseRepresentation(), encoder_id=MODEL_ID, users=2000)
    assert report["rule"] == rule_name(DenseRule("linear", DENSE_LINEAR_WEIGHT))
    arms = list(report["arms"].values())
    assert arms[-1][2][2] >= arms[0][2][2]  # no fewer hidden saves found after three rounds
