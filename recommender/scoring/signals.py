"""One user's signals of the fused score, from plain arrays: the one place they are computed, for
`Recommender.signals` (ranking.py) and for the evaluation's shipped form (evaluation/peers.py) alike.

What differs between the two by design is an input, never the arithmetic: the similarities' best
values (a run fits its tf-idf on the corpus, the evaluation on the dataset), the user's items'
predicted factors (cross-fitted in the evaluation, where the kNN map has seen every training item)
and the linear model's negative sampling (`Negatives`). Caches stay outside: a caller may hand
`keep`, which returns a kept linear model's scores instead of fitting again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from recommender.scoring.adapter import adapted_blocks
from recommender.scoring.aggregation import TopValues
from recommender.scoring.fusion import NEAREST, SIGNALS, FusionWeights
from recommender.scoring.learned import RowBlocks, linear_scores, sampled
from recommender.scoring.recency import weighted_linear_scores

NEAREST_SIGNALS = (("nearest", NEAREST), ("max", "max"))  # the fine order's, from the content values


@dataclass(frozen=True)
class Negatives:
    """How the linear model draws its negatives from the candidates: the generator's seed, and whether
    the user's own papers are left out of the pool. A run: seed 0, owned papers excluded."""

    seed: int = 0
    exclude_owned: bool = True


SHIPPED_NEGATIVES = Negatives()


class UserInputs(NamedTuple):
    """One user's inputs: their items and the candidates, as rows, similarities' values and factors."""

    content: np.ndarray  # per candidate: the content topK score
    rows: np.ndarray  # the user's items' content rows (the linear model's positives)
    candidates: np.ndarray  # the candidates' content rows (its negatives' pool, and what it scores)
    owned: np.ndarray  # bool per candidate: the user's own papers
    values: TopValues | None = None  # the content similarities' best values (the fine order's nearest signals)
    lexical: TopValues | None = None  # the tf-idf similarities' best values
    factors: np.ndarray | None = None  # the user's items' predicted collaborative factors
    candidate_factors: np.ndarray | None = None  # the candidates' predicted factors
    user_vector: Callable[[np.ndarray], np.ndarray] | None = None  # the collaborative model's fold-in
    # the candidates in the adapter's space (beta > 0), or what makes them on first use (a kept fit needs none)
    adapted_candidates: np.ndarray | Callable[[], np.ndarray] | None = None
    item_weights: np.ndarray | None = None  # the items' recency weights (recency.py); None: all count the same


def wanted_signals(weights: FusionWeights, fine: Collection[str] = ()) -> set[str]:
    """The signals a ranking computes: those with a positive weight in the fused score, and the fine order's."""
    return {name for name in SIGNALS if getattr(weights, name) > 0} | set(fine)


def needs_factors(wanted: Collection[str], beta: float) -> bool:
    """Whether the user's items' factors are needed: for the collaborative score, or the adapter's space."""
    return "collaborative" in wanted or ("learned" in wanted and beta > 0)


def user_signals(inputs: UserInputs, base: str, wanted: Collection[str], negatives: Negatives = SHIPPED_NEGATIVES,
                 beta: float = 0.0, keep: Callable[[Callable[[], np.ndarray]], np.ndarray] | None = None
                 ) -> dict[str, np.ndarray]:
    """The content topK and every `wanted` signal the inputs allow: "nearest" and "max" (the content
    values), "lexical" (tf-idf topK, `base`), "learned" (learned_signal; through `keep` when given) and
    "collaborative" (collaborative_signal)."""
    signals = {"content": inputs.content}
    if inputs.values is not None:
        for name, aggregation in NEAREST_SIGNALS:
            if name in wanted:
                signals[name] = inputs.values.scores(aggregation)
    if "lexical" in wanted and inputs.lexical is not None:
        signals["lexical"] = inputs.lexical.scores(base)
    if "learned" in wanted:
        fit = functools.partial(learned_signal, inputs.rows, inputs.candidates, inputs.owned, negatives, beta,
                                factors=inputs.factors, adapted_candidates=inputs.adapted_candidates,
                                item_weights=inputs.item_weights)
        signals["learned"] = fit() if keep is None else keep(fit)
    if "collaborative" in wanted and inputs.factors is not None and inputs.user_vector is not None:
        signals["collaborative"] = collaborative_signal(inputs.candidate_factors, inputs.user_vector(inputs.factors))
    return signals


def learned_signal(rows: np.ndarray, candidates: np.ndarray, owned: np.ndarray,
                   negatives: Negatives = SHIPPED_NEGATIVES, beta: float = 0.0, *, factors: np.ndarray | None = None,
                   adapted_candidates: np.ndarray | Callable[[], np.ndarray] | None = None,
                   item_weights: np.ndarray | None = None) -> np.ndarray:
    """The per-user linear model's decision values for every candidate (learned.py): the user's item
    `rows` (MAX_POSITIVES at most) against negatives sampled from the `candidates`; in the collaborative
    adapter's space when `beta` > 0 (adapter.py: the items' rows joined to their `factors` a block at a
    time, against `adapted_candidates`); positives weighted by `item_weights` when given."""
    exclude = np.flatnonzero(owned) if negatives.exclude_owned else None
    positives, chosen = sampled(len(rows), len(candidates), negatives.seed, exclude)
    linear = linear_scores
    if item_weights is not None:
        weights = item_weights if positives is None else item_weights[positives]
        linear = functools.partial(weighted_linear_scores, positive_weights=weights)
    if beta <= 0:
        return linear(rows if positives is None else rows[positives], candidates[chosen], candidates)
    positives = np.arange(len(rows)) if positives is None else positives
    if callable(adapted_candidates):
        adapted_candidates = adapted_candidates()
    return linear(RowBlocks(len(positives), adapted_blocks(rows, factors, beta, positives)),
                  adapted_candidates[chosen], adapted_candidates)


def collaborative_signal(candidate_factors: np.ndarray, user_vector: np.ndarray) -> np.ndarray:
    """The collaborative score: each candidate's predicted factors against the user's folded-in vector."""
    return candidate_factors @ user_vector
