"""Two rankings compared as a user sees them: the same papers in the same order with the same reasons,
scores and similarities equal up to float noise. BLAS rounds differently on other CPUs and for other
product shapes, so float bits are never compared, and which of several equally similar items a
reason names is not defined."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recommender.scoring.aggregation import REASONS_KEPT

CLOSE = {"rtol": 1e-6, "atol": 1e-7}
# A fused score (`--aggregation learned`) is a sum of z-scored signals, one of them a linear model that
# L-BFGS fits to a gradient tolerance of 1e-4: BLAS noise moves that fit, and with it every score
# (near-zero ones too), by more than float noise.
FUSED_ATOL = 1e-5


@dataclass(frozen=True)
class Ranked:
    """One recommendation: its paper id, score and reasons as (item key, similarity), best first."""

    id: str
    score: float
    reasons: tuple[tuple[str, float], ...] = ()


def from_recommendations(recs) -> list[Ranked]:
    assert [rec.rank for rec in recs] == list(range(1, len(recs) + 1))
    return [Ranked(rec.paper.id, float(rec.score), tuple((r.item_key, float(r.similarity)) for r in rec.reasons))
            for rec in recs]


def assert_same_ranking(got: list[Ranked], want: list[Ranked], where: str = "", *,
                        score_atol: float = CLOSE["atol"]) -> None:
    assert [row.id for row in got] == [row.id for row in want], f"{where}: the order differs"
    scores, wanted = np.array([row.score for row in got]), np.array([row.score for row in want])
    assert np.allclose(scores, wanted, rtol=CLOSE["rtol"], atol=score_atol), \
        f"{where}: scores differ by up to {np.abs(scores - wanted).max(initial=0):.3g}"
    for mine, theirs in zip(got, want):
        assert same_reasons(mine.reasons, theirs.reasons), f"{where}: {mine.id} {mine.reasons} != {theirs.reasons}"


def same_reasons(got, want, close=None) -> bool:
    """Equal similarities (`close`) and keys in order, except among equal similarities: a run of them
    may name its items in any order, and in a full list the last run may name other items (which of
    the items tied beyond the last reason is shown is not defined)."""
    close = close or (lambda a, b: bool(np.isclose(a, b, **CLOSE)))
    if len(got) != len(want) or not all(close(mine, theirs) for (_, mine), (_, theirs) in zip(got, want)):
        return False
    start = 0
    for end in range(1, len(want) + 1):
        if end == len(want) or not close(want[end][1], want[start][1]):
            named, wanted = sorted(key for key, _ in got[start:end]), sorted(key for key, _ in want[start:end])
            if named != wanted and not end == len(want) == REASONS_KEPT:  # the last run: ties beyond it
                return False
            start = end
    return True
