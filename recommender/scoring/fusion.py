"""Score-level fusion: each signal (dense topK, tf-idf topK, the per-user linear model, the
collaborative score) is standardised per user over the candidates, then summed with weights
chosen on validation.

Fusing scores rather than similarities keeps each signal's own aggregation, and is the form that
gained on CiteULike a, t and the ICML leave-out (docs/evaluation.md).
"""

from __future__ import annotations

from recommender.errors import SettingError
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from recommender.scoring.aggregation import TOP5

log = logging.getLogger(__name__)

WEIGHT_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
LEARNED = "learned"  # the fused scoring's name: topK + tf-idf topK + the per-user linear model (+ collaborative)
LEARNED_BASE = TOP5  # the topK inside it (also the source of the reasons)
DEFAULT_SCORING = LEARNED  # chosen on CiteULike a, t and the ICML leave-out (docs/evaluation.md)
SIGNALS = ("lexical", "learned", "collaborative")  # the signals besides the content topK, in FusionWeights


@dataclass(frozen=True)
class FusionWeights:
    """Weights of the signals besides the content topK, which gets 1 − their sum.

    lexical : tf-idf topK.   learned : the per-user linear model.   collaborative : the ALS part.
    learned_evidence : n0 of the linear model's evidence share n / (n + n0) for a profile of n items (0: the
        full weight whatever the library's size); the weight it loses goes to the content topK.
    """

    lexical: float = 0.0
    learned: float = 0.0
    collaborative: float = 0.0
    learned_evidence: float = 0.0

    def shares(self, present: Sequence[str], library_size=None) -> dict:
        """Every present signal's weight, the content topK's included (1 − the others', at least 0), for a
        profile of `library_size` items (a number, or an array of one per user as a column: then every share
        is such a column); None: the full weights."""
        shares = {name: getattr(self, name) for name in SIGNALS if name in present and getattr(self, name) > 0}
        if "learned" in shares and library_size is not None:
            shares["learned"] = shares["learned"] * evidence_share(library_size, self.learned_evidence)
        return {**shares, "content": np.maximum(1.0 - sum(shares.values()), 0.0)}


def evidence_share(library_size, n0: float):
    """n / (n + n0): how much of its weight the per-user linear model keeps for a profile of n items. A
    model fitted on a dozen items is mostly noise; one fitted on hundreds earns its full share."""
    if n0 <= 0:
        return np.ones_like(np.asarray(library_size, dtype=np.float64)) if np.ndim(library_size) else 1.0
    size = np.asarray(library_size, dtype=np.float64)
    share = size / (size + n0)
    return share if np.ndim(share) else float(share)


def library_fine_weights(fine: Mapping[str, float], weights: FusionWeights, library_size) -> dict:
    """The fine order's weights for a profile of `library_size` items: the linear model's by the same
    evidence share as in the fused score, what it loses going to the content topK as there."""
    if "learned" not in fine or weights.learned_evidence <= 0 or library_size is None:
        return dict(fine)
    kept = fine["learned"] * evidence_share(library_size, weights.learned_evidence)
    return {**fine, "learned": kept, "content": fine.get("content", 0.0) + (fine["learned"] - kept)}


# Without a collaborative model: the shipped default's shares (the model's card, chosen on five folds of citeulike-a and
# -t, benchmarks/weight_choice.py) with the collaborative share given to the content topK, the "default without the
# collaborative part" row of docs/evaluation.md (issue 33).
CONTENT_WEIGHTS = FusionWeights(lexical=0.1, learned=0.56)


# The fine order (issue 25): the fused score picks the FINE_TOP best papers, and FINE_WEIGHTS' fusion, standardised
# over those papers alone, orders them (`cascade`). "nearest" is the content top3 of the same kept similarities.
FINE_TOP = 50
NEAREST = "top3"
FINE_SIGNALS = ("nearest", "max", "content", "lexical", "learned", "collaborative")
# The shipped default's (issue 33): the content top3 at 0.3, the fused score's own shares at 0.7 of theirs, the nearest
# share chosen by the one-SE rule on five folds' validation fine nDCG@10 of citeulike-a and -t (docs/evaluation.md);
# a model that records its own "fine_weights" overrides them.
FINE_WEIGHTS: dict[str, float] = {"nearest": 0.3, "content": 0.098, "lexical": 0.07, "learned": 0.392,
                                  "collaborative": 0.14}


def fine_weights(model=None) -> dict[str, float]:
    """The fine order's weights stored in a dense collaborative model (chosen with it on validation), else
    FINE_WEIGHTS; the signals a model without the collaborative part cannot give are left out."""
    stored = model.card.fine_weights if model is not None else None  # the model's card (collaborative/card.py)
    weights = {name: float(value) for name, value in (stored or FINE_WEIGHTS).items() if name in FINE_SIGNALS}
    if model is None:
        weights.pop("collaborative", None)
    return {name: value for name, value in weights.items() if value > 0} or {"nearest": 1.0}


def default_weights(model=None) -> FusionWeights:
    """The weights stored in a dense collaborative model (chosen with it on validation), else the
    content-only weights measured in docs/evaluation.md."""
    stored = model.card.fusion_weights if model is not None else None  # the model's card (collaborative/card.py)
    if stored:
        return FusionWeights(**{name: float(stored.get(name, 0.0)) for name in (*SIGNALS, "learned_evidence")})
    return CONTENT_WEIGHTS


def scoring_weights(aggregation: str, model=None, dense: bool = True) -> tuple[str, FusionWeights | None]:
    """(the content topK to aggregate with, the weights of the other signals; None: the topK alone).

    "learned" fuses top5 with tf-idf top5, the linear model and, with a model, the collaborative score;
    on tf-idf rows (`dense` False) it is plain top5, its extra signals being dense-only. Another
    aggregation with a model is that aggregation fused with the collaborative score alone.
    """
    if aggregation != LEARNED:
        if model is None:
            return aggregation, None
        weights = default_weights(model)
        content = 1.0 - weights.lexical - weights.learned - weights.collaborative
        return aggregation, FusionWeights(collaborative=weights.collaborative / max(weights.collaborative + content, 1e-9))
    if not dense:
        return LEARNED_BASE, None
    return LEARNED_BASE, default_weights(model)


def standardise(scores: np.ndarray) -> np.ndarray:
    """Zero mean, unit spread along the last axis (a constant row becomes all zeros)."""
    scores = np.asarray(scores, dtype=np.float64)
    centred = scores - scores.mean(axis=-1, keepdims=True)
    spread = centred.std(axis=-1, keepdims=True)
    return np.divide(centred, spread, out=np.zeros_like(centred), where=spread > 0)


def fuse(signals: Mapping[str, np.ndarray], weights: Mapping) -> np.ndarray:
    """Σ weight·z(signal) over the signals with a weight > 0 (row by row for matrices; a weight may be a
    column of one per row, as FusionWeights.shares gives for many users)."""
    return weighted_sum({name: standardise(signals[name]) for name, weight in weights.items()
                         if name in signals and np.any(np.asarray(weight) > 0)}, weights)


def weighted_sum(standardised: Mapping[str, np.ndarray], weights: Mapping) -> np.ndarray:
    """fuse's sum on signals already standardised: for a caller fusing the same signals with many weightings
    (the weight choice, benchmarks/lib/weight_grid.py)."""
    total = part = None
    for name, weight in weights.items():
        if np.all(np.asarray(weight) <= 0) or name not in standardised:
            continue
        if total is None:
            total = weight * standardised[name]
            continue
        if part is None or part.shape != total.shape or part.dtype != np.result_type(weight, standardised[name]):
            part = np.empty(total.shape, np.result_type(weight, standardised[name]))
        total += np.multiply(weight, standardised[name], out=part)  # one buffer for every signal after the first
    if total is None:
        raise SettingError("no signal has a positive weight")
    return total


def stepwise_weights(
    quality: Callable[[dict[str, float]], float], names: Sequence[str], base: str,
    grid: Sequence[float] = WEIGHT_GRID,
) -> dict[str, float]:
    """Add one signal at a time to `base` with the validation-best share (ties: the smaller share).

    With shares s_1…s_n chosen in turn, signal i ends with s_i·Π_{j>i}(1 − s_j), the base with
    Π(1 − s_j): a greedy path, n·|grid| evaluations instead of |grid|^n.
    """
    weights = {base: 1.0}
    for name in names:
        results = {}
        for share in grid:
            trial = {key: value * (1.0 - share) for key, value in weights.items()} | {name: share}
            results[share] = quality(trial)
        best = max(results, key=lambda share: (round(results[share], 5), -share))
        log.info("fusion %s: %s → %.1f", name, ", ".join(f"{s:.1f}:{q:.4f}" for s, q in results.items()), best)
        weights = {key: value * (1.0 - best) for key, value in weights.items()} | {name: best}
    return weights


def cascade(coarse: np.ndarray, signals: Mapping[str, np.ndarray], weights: Mapping[str, float], top: int,
            eligible: np.ndarray | None = None) -> np.ndarray:
    """The coarse score picks each row's `top` best papers (among the `eligible` ones); the fine fusion
    fuse(signals, weights), standardised over those papers alone, orders them.

    The picked papers keep the coarse scores' values, handed out in the fine order (so a score still
    falls with the rank, and the set of the top `top` never changes); every other paper keeps its own.
    Ties in the fine score go to the better coarse score, then to the lower index.
    """
    coarse = np.asarray(coarse, dtype=np.float64)
    flat = coarse.ndim == 1
    coarse2 = coarse[None, :] if flat else coarse
    allowed = np.ones(coarse2.shape, dtype=bool) if eligible is None else np.broadcast_to(
        eligible[None, :] if flat else eligible, coarse2.shape)
    top = min(top, int(allowed.sum(axis=1).min()))
    out = coarse2.copy()
    if top < 2:
        return out[0] if flat else out
    masked = np.where(allowed, coarse2, -np.inf)
    picked = np.argpartition(-masked, top - 1, axis=1)[:, :top]
    picked_coarse = np.take_along_axis(coarse2, picked, axis=1)
    cut = {name: np.take_along_axis(np.asarray(values, dtype=np.float64)[None, :] if flat else np.asarray(values),
                                    picked, axis=1) for name, values in signals.items()}
    fine = fuse(cut, weights)
    fine_order = np.lexsort((picked, -picked_coarse, -fine), axis=1)
    values = -np.sort(-picked_coarse, axis=1)  # the picked coarse values, best first, made strictly falling
    for place in range(1, top):  # (papers with equal fused scores would otherwise fall back to their index order)
        values[:, place] = np.minimum(values[:, place], np.nextafter(values[:, place - 1], -np.inf))
    rows = np.arange(len(out))[:, None]
    out[rows, np.take_along_axis(picked, fine_order, axis=1)] = values
    return out[0] if flat else out
