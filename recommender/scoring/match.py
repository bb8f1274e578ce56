"""A 0–100 match people can read, and the warning when a library gives little to match against.

The match is calibrated from the paper's best reason (its cosine similarity to the closest saved item),
not from the fused score: similarities mean the same across libraries and runs, fused scores do not.
Each text feature has its own similarity scale, so each has its own end points (README.md, "Reading the
match", says how they were measured); features without measured end points get no match.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import NamedTuple

from recommender.items import Recommendation


class Calibration(NamedTuple):
    off_topic: float  # the best similarity an off-topic 1-item library reaches: 0 % match
    same_topic: float  # about the example library's best similarity: 100 % match
    low_best: float  # a list whose best similarity is below this is a weak match


# measured on examples/library.bib (on topic) and a 1-item library on Gothic cathedrals (off topic)
# against the bundled ICML 2025 list: dense best 0.79 (top 20 all ≥ 0.54) vs 0.15; tf-idf 0.21 (≥ 0.12) vs 0.06;
# hybrid 0.46 (≥ 0.33) vs 0.10
CALIBRATIONS = {
    "dense": Calibration(off_topic=0.15, same_topic=0.80, low_best=0.35),
    "tfidf": Calibration(off_topic=0.05, same_topic=0.25, low_best=0.09),
    "hybrid": Calibration(off_topic=0.10, same_topic=0.47, low_best=0.20),
}
FEW_ITEMS = 5  # a profile of fewer items with text is too small to say much


def match_percent(similarity: float, calibration: Calibration) -> int:
    """A similarity mapped linearly from off_topic (0) to same_topic (100), clipped to 0–100."""
    share = (similarity - calibration.off_topic) / (calibration.same_topic - calibration.off_topic)
    return round(100 * min(1.0, max(0.0, share)))


def with_match(recs: Sequence[Recommendation], features: str) -> list[Recommendation]:
    """The recommendations with `match` set from their best reason (None without reasons or a calibration)."""
    calibration = CALIBRATIONS.get(features)
    if calibration is None:
        return list(recs)
    return [dataclasses.replace(rec, match=match_percent(max(r.similarity for r in rec.reasons), calibration))
            if rec.reasons else rec for rec in recs]


def weak_library_warning(recs: Sequence[Recommendation], items_with_text: int, features: str) -> str | None:
    """One line when the list says little: fewer than FEW_ITEMS items with text, or a low best similarity."""
    problems = []
    if items_with_text < FEW_ITEMS:
        items = f"{items_with_text} item" + ("" if items_with_text == 1 else "s")
        problems.append(f"the library has {items} with a title or abstract (fewer than {FEW_ITEMS})")
    calibration = CALIBRATIONS.get(features)
    best = max((reason.similarity for rec in recs for reason in rec.reasons), default=None)
    if calibration is not None and best is not None and best < calibration.low_best:
        problems.append(f"its best similarity to any paper is {best:.2f} "
                        f"(below {calibration.low_best:.2f} for {features}: off-topic?)")
    if not problems:
        return None
    return "Weak match: " + " and ".join(problems) + "; the ranking says little."
