"""Steering: `--prefer` / `--avoid` texts as extra profile evidence, added to a user's scores after fusion.

Each text is embedded like a library item; a paper's evidence is its best similarity to the prefer
(or avoid) texts, mapped to 0–1 on the feature's similarity scale (recommender/scoring/match.py's end
points: below "off topic" counts nothing, so a text unlike every paper leaves the list as it was). The
steered score is the fused score standardised, plus STEER_WEIGHT × prefer evidence, minus STEER_WEIGHT ×
avoid evidence; the weight was measured on examples/library.bib (docs/evaluation.md, "Steering").
"""

from __future__ import annotations

from recommender.errors import SettingError
import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recommender.items import SteerReason
from recommender.scoring.fusion import standardise
from recommender.scoring.match import CALIBRATIONS, Calibration

STEER_WEIGHT = 2.0  # standard deviations of the fused score that full evidence moves a paper (docs/evaluation.md)
REASON_EVIDENCE = 0.3  # a prefer text is named as a reason from this evidence on (dense: cosine ≥ 0.35)
MAX_TEXT_CHARS = 1000  # about what the sentence encoder reads (256 word pieces); more would be cut silently
MAX_TEXTS = 20  # per option
MAX_HALF_LIFE_DAYS = 36500.0


@dataclass(frozen=True)
class Steering:
    """What the user asked the ranking to lean towards (`prefer`), away from (`avoid`), and how fast
    library items fade with age (`half_life_days`; None: every item counts the same)."""

    prefer: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    half_life_days: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "prefer", checked_texts("prefer", self.prefer))
        object.__setattr__(self, "avoid", checked_texts("avoid", self.avoid))
        if self.half_life_days is not None:
            object.__setattr__(self, "half_life_days", checked_half_life(self.half_life_days))

    @property
    def steers(self) -> bool:
        """Any prefer or avoid text."""
        return bool(self.prefer or self.avoid)

    @property
    def active(self) -> bool:
        """Anything that changes a ranking."""
        return self.steers or self.half_life_days is not None

    def as_dict(self) -> dict:
        """The JSON shape a run's history keeps."""
        return {"prefer": list(self.prefer), "avoid": list(self.avoid), "recent_half_life": self.half_life_days}


def checked_texts(name: str, texts: Sequence[str]) -> tuple[str, ...]:
    """The texts with control and format characters (ESC, bidi overrides) as spaces and whitespace runs as
    one space; ValueError naming `name` for a blank one, one over MAX_TEXT_CHARS, or too many."""
    if isinstance(texts, str):
        texts = (texts,)
    cleaned = tuple(" ".join("".join(" " if unicodedata.category(char)[0] == "C" else char
                                     for char in str(text)).split()) for text in texts)
    if any(not text for text in cleaned):
        raise SettingError(f"{name}: a text is blank; give a few words or a sentence")
    long = next((text for text in cleaned if len(text) > MAX_TEXT_CHARS), None)
    if long is not None:
        raise SettingError(f"{name}: a text has {len(long)} characters, more than {MAX_TEXT_CHARS} "
                         "(a sentence or a few keywords steer best)")
    if len(cleaned) > MAX_TEXTS:
        raise SettingError(f"{name}: {len(cleaned)} texts, more than {MAX_TEXTS}")
    return cleaned


def checked_half_life(days, name: str = "recent half-life") -> float:
    """A half-life in days: a finite number above 0 and at most MAX_HALF_LIFE_DAYS; ValueError naming `name`."""
    try:
        value = float(days)
    except (TypeError, ValueError):
        raise SettingError(f"{name}: '{days}' is not a number of days") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_HALF_LIFE_DAYS:
        raise SettingError(f"{name}: {days} days is out of range (above 0, at most {MAX_HALF_LIFE_DAYS:g})")
    return value


def scale_for(representation) -> Calibration:
    """The similarity scale of these features: match.py's measured end points (dense, tf-idf, hybrid);
    an encoder without its own falls back to dense's."""
    return CALIBRATIONS.get(representation.name, CALIBRATIONS["dense"])


def evidence(similarities: np.ndarray, scale: Calibration) -> np.ndarray:
    """Similarities mapped linearly from the scale's off-topic end (0) to its same-topic end (1), clipped."""
    share = (np.asarray(similarities, dtype=np.float64) - scale.off_topic) / (scale.same_topic - scale.off_topic)
    return np.clip(share, 0.0, 1.0)


def steered_scores(scores: np.ndarray, prefer: np.ndarray | None, avoid: np.ndarray | None,
                   scale: Calibration, weight: float = STEER_WEIGHT) -> np.ndarray:
    """The scores standardised, plus `weight`·evidence of the best prefer text, minus `weight`·evidence of
    the best avoid text. `prefer` and `avoid`: (texts, papers) similarities, or None."""
    steered = standardise(scores)
    if prefer is not None and len(prefer):
        steered = steered + weight * evidence(prefer.max(axis=0), scale)
    if avoid is not None and len(avoid):
        steered = steered - weight * evidence(avoid.max(axis=0), scale)
    return steered


def steer_reasons(texts: Sequence[str], similarities: np.ndarray, scale: Calibration) -> tuple[SteerReason, ...]:
    """The prefer texts one paper matches (evidence ≥ REASON_EVIDENCE), most similar first.
    `similarities`: that paper's similarity to each text."""
    found = [(float(sim), text) for text, sim in zip(texts, similarities)
             if evidence(sim, scale) >= REASON_EVIDENCE]
    return tuple(SteerReason(text=text, similarity=sim) for sim, text in sorted(found, key=lambda pair: -pair[0]))
