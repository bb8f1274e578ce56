"""The facet-aware re-ranking: the shown list gives each library interest (interests.py) seats in
proportion to its size, filled only by papers that are strong matches, so a list never fills up with
one interest while another has good papers waiting, and a corpus from one area keeps its order.

Rule (proportional quotas, with an MMR-like spread inside each interest; docs/evaluation.md,
"Interests"). A paper serves the interest of its nearest library item. The `window` seats (the top N)
are apportioned to the interests by largest remainder of their sizes. A paper may take a seat when it
is already in the window by score, or when it is *strong*: within the POOL_FACTOR·window best scores
and at least as close to its nearest item as the window's 35th-percentile paper is (STRONG_QUANTILE). Each
interest's seats go first to its best paper per library item, the items taken farthest-first from the
interest's best paper (so the seats span the interest rather than one corner of it), then to its other
papers by score. Seats an interest cannot fill go to the best remaining papers by score. The chosen
papers keep their score order; everything after the window is in score order too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recommender.items import LibraryItem
from recommender.scoring.aggregation import reasons_for
from recommender.scoring.interests import Interests, library_interests

POOL_FACTOR = 10  # a paper further down than 10× the list's length is never promoted into it
STRONG_QUANTILE = 0.35  # promoted papers are as close to their interest as the list's 35th-percentile paper


def seats(shares: np.ndarray, window: int) -> np.ndarray:
    """Largest-remainder apportionment of `window` seats to `shares` (ties: the larger share, then the earlier)."""
    shares = np.asarray(shares, dtype=np.float64)
    quotas = window * shares / shares.sum()
    given = np.floor(quotas).astype(np.int64)
    left = window - int(given.sum())
    order = np.lexsort((np.arange(len(shares)), -shares, -(quotas - given)))
    given[order[:left]] += 1
    return given


def proportional_order(order: np.ndarray, interest: np.ndarray, nearest: np.ndarray, strength: np.ndarray,
                       shares: np.ndarray, window: int, item_rows=None, *,
                       quantile: float = STRONG_QUANTILE) -> np.ndarray:
    """`order` (papers best first) re-ranked so its first `window` places cover the interests by `shares`.

    `nearest`, `interest` and `strength` (each paper's nearest library item, that item's interest and the
    similarity) are given for the first len(nearest) papers of `order`: the pool a paper may be promoted
    from. `item_rows` (the library items' unit rows) spread an interest's seats over its items; None
    takes the per-item best papers by score.
    """
    order = np.asarray(order)
    window = min(window, len(order))
    if window == 0 or len(shares) < 2:
        return order
    pool = len(nearest)
    threshold = np.quantile(strength[:window], quantile)
    eligible = (np.arange(pool) < window) | (strength >= threshold)
    chosen = np.zeros(pool, dtype=bool)
    for label, wanted in enumerate(seats(shares, window)):
        candidates = np.flatnonzero(eligible & (interest == label))
        heads = np.zeros(len(candidates), dtype=bool)  # the best paper of each item
        heads[np.unique(nearest[candidates], return_index=True)[1]] = True
        first = candidates[heads]
        if item_rows is not None and len(first) > wanted:
            first = first[spread(item_rows, nearest[first], wanted)]
        chosen[np.concatenate([first, np.setdiff1d(candidates, first)])[:wanted]] = True
    free = window - int(chosen.sum())
    if free:
        chosen[np.flatnonzero(~chosen)[:free]] = True
    places = np.flatnonzero(chosen)
    rest = np.concatenate([np.flatnonzero(~chosen), np.arange(pool, len(order))])
    return np.concatenate([order[places], order[rest]])


def spread(item_rows, items: np.ndarray, wanted: int) -> np.ndarray:
    """Positions of `wanted` of `items` picked farthest-first (greedy k-center on cosine), from the first."""
    from recommender.features.base import cosine

    similarity = cosine(item_rows[items], item_rows[items])
    picked = [0]
    closest = similarity[0].copy()
    closest[0] = np.inf
    while len(picked) < wanted:
        nearest_free = int(np.argmin(closest))
        picked.append(nearest_free)
        closest = np.maximum(closest, similarity[nearest_free])
        closest[picked] = np.inf
    return np.sort(np.asarray(picked))


def interest_order(profile: Sequence[LibraryItem], rows, corpus_rows, order: np.ndarray,
                   window: int) -> tuple[np.ndarray, Interests]:
    """The profile's interests and `order` re-ranked by them (proportional_order) for a list of `window`."""
    interests = library_interests([item.collections for item in profile], [item.title for item in profile], rows)
    if len(interests.names) < 2:
        return order, interests
    nearest, similarity = reasons_for(rows, corpus_rows, order[: POOL_FACTOR * window])
    nearest, similarity = nearest[:, 0], similarity[:, 0]
    shares = interests.sizes / len(interests.labels)
    order = proportional_order(order, interests.labels[nearest], nearest, similarity, shares, window, rows)
    return order, interests


def interest_name(interests: Interests | None, reason_rows: np.ndarray, reason_sims: np.ndarray) -> str:
    """The interest a recommendation serves: its nearest item's ("" with a single interest or no reason)."""
    if interests is None or len(interests.names) < 2 or not len(reason_rows) or reason_sims[0] <= 0:
        return ""
    return interests.names[interests.labels[int(reason_rows[0])]]
