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
    low_best: float  # a list whose best similarity is below this is a weak match; so is a pick below it


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


def is_weak(similarity: float, calibration: Calibration) -> bool:
    """The one rule for a weak pick: its best similarity is below the weak-list bar (low_best; dense 0.35, a
    31 % match; compared as the match shows it, so a pick shown at 31 % is never weak). 90 % of held-out
    CiteULike-a saves reach the bar, 23 % of random papers do (docs/evaluation-history.md, issue 39's
    "A floor under every pick"; benchmarks/weak_picks.py)."""
    return match_percent(similarity, calibration) < match_percent(calibration.low_best, calibration)


def with_match(recs: Sequence[Recommendation], features: str) -> list[Recommendation]:
    """The recommendations with `match` set from their best reason (None without reasons or a calibration)
    and `weak` where that reason is below the bar (is_weak); the order is left as it is."""
    calibration = CALIBRATIONS.get(features)
    if calibration is None:
        return list(recs)
    out = []
    for rec in recs:
        if rec.reasons:
            best = max(r.similarity for r in rec.reasons)
            rec = dataclasses.replace(rec, match=match_percent(best, calibration),
                                      weak=is_weak(best, calibration))
        out.append(rec)
    return out


def ranges(numbers: Sequence[int]) -> str:
    """1, 3–5, 9 for [1, 3, 4, 5, 9] (sorted, distinct)."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"{run[0]}" if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)


def weak_picks_line(recs: Sequence[Recommendation], features: str, numbered: bool = False) -> str:
    """'picks 9–20 are below a 31 % match (similarity 0.35 for dense)', or '' when no shown pick is weak; by
    rank, or with `numbered` by place 1..N (the digest numbers its papers so, papers seen before left out)."""
    calibration = CALIBRATIONS.get(features)
    weak = [place if numbered else rec.rank for place, rec in enumerate(recs, 1) if rec.weak]
    if calibration is None or not weak:
        return ""
    which = f"pick {weak[0]} is" if len(weak) == 1 else f"picks {ranges(weak)} are"
    if len(weak) == len(recs) and len(weak) > 1:
        which = f"all {len(weak)} picks are"
    return (f"{which} below a {match_percent(calibration.low_best, calibration)} % match "
            f"(similarity {calibration.low_best:.2f} for {features}): nothing in the library is close to "
            + ("it" if len(weak) == 1 else "them"))


def weak_library_warning(recs: Sequence[Recommendation], items_with_text: int, features: str) -> str | None:
    """One line when the list says little: fewer than FEW_ITEMS items with text, a low best similarity, or
    shown picks below the bar (weak_picks_line; the whole list's case says so once)."""
    problems = []
    if items_with_text < FEW_ITEMS:
        items = f"{items_with_text} item" + ("" if items_with_text == 1 else "s")
        problems.append(f"the library has {items} with a title or abstract (fewer than {FEW_ITEMS})")
    calibration = CALIBRATIONS.get(features)
    best = max((reason.similarity for rec in recs for reason in rec.reasons), default=None)
    low = calibration is not None and best is not None and is_weak(best, calibration)
    if low:
        problems.append(f"its best similarity to any paper is {best:.2f} "
                        f"(below {calibration.low_best:.2f} for {features}: off-topic?)")
    said = [" and ".join(problems) + "; the ranking says little"] if problems else []
    picks = "" if low else weak_picks_line(recs, features)  # every pick is below the bar: said above
    said += [picks] if picks else []
    return "Weak match: " + "; ".join(said) + "." if said else None
