"""Two rankings compared as a user sees them: the same papers in the same order with the same reasons,
scores and similarities equal up to float noise. BLAS rounds differently on other CPUs and for
other product shapes, so float bits are never compared; items with equal similarities (duplicates
in a library) may be named in either order.

Scores are compared relative to the ranking's scale: a fused score is a sum of z-scored signals,
and the linear model's iterative fit turns BLAS noise into noise of the whole scale (about 3e-7 of
it under OPENBLAS_CORETYPE=Haswell), which a score near zero carries too."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CLOSE = {"rtol": 1e-6, "atol": 1e-7}


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


def assert_same_ranking(got: list[Ranked], want: list[Ranked], where: str = "") -> None:
    assert [row.id for row in got] == [row.id for row in want], f"{where}: the order differs"
    scores, wanted = np.array([row.score for row in got]), np.array([row.score for row in want])
    scale = np.abs(wanted).max(initial=0)
    assert np.allclose(scores, wanted, rtol=CLOSE["rtol"], atol=CLOSE["rtol"] * scale), f"{where}: a score"
    for mine, theirs in zip(got, want):
        assert same_reasons(mine.reasons, theirs.reasons), f"{where}: {mine.id} {mine.reasons} != {theirs.reasons}"


def same_reasons(got, want) -> bool:
    """Equal keys in order, except that a run of equal similarities may list its keys in any order."""
    if len(got) != len(want) or not np.allclose([s for _, s in got], [s for _, s in want], **CLOSE):
        return False
    start = 0
    for end in range(1, len(want) + 1):
        if end == len(want) or not np.isclose(want[end][1], want[start][1], **CLOSE):
            if sorted(key for key, _ in got[start:end]) != sorted(key for key, _ in want[start:end]):
                return False
            start = end
    return True
