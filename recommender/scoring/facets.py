"""The facet-aware re-ranking: the shown list gives each library interest (interests.py) seats in
proportion to its size, filled only by papers that are strong matches, so a list never fills up with
one interest while another has good papers waiting, and a corpus from one area keeps its order.

Rule (docs/evaluation.md, "Interests"). A paper serves the interest of its nearest library item. The list
is built seat by seat, and nothing in it depends on how long the shown list is, so the first k papers of
`-n N` are the same for every N ≥ k (prefix-stable). After s seats each interest is owed its Sainte-Laguë
share of s − LEAD (`entitlements`: the divisor method assigned seat by seat, house-monotone, unlike the largest
remainder whose Alabama paradox reshuffled `-n 10` against `-n 20`; the lead keeps the best papers first). Seat s goes to the best remaining paper
by score when its interest is owed a seat or no interest that still has candidates is; otherwise to the
owed interest's next candidate. An interest's candidates are the papers that *earn* a seat (issue 39): within
the POOL_FACTOR·WINDOW best scores (the plain top 60: below it a paper is not worth showing, whatever its
interest), at least as close to their nearest item as the top WINDOW's STRONG_QUANTILE paper (measured on the
default list's top 20 whatever N is shown) and at least the match's weak-list similarity; its best paper per
library item comes first, the items taken farthest-first from the interest's best paper (so the seats span the
interest), then its other papers by score. Past the seats every interest can fill, the list is in score order;
with fewer than two interests that have candidates it is the plain order, and the interests without any are
named in the list's header.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recommender.items import LibraryItem
from recommender.scoring.aggregation import reasons_for
from recommender.scoring.interests import Interests
from recommender.scoring.kept_interests import kept_interests

WINDOW = 20  # the list the strong bar is measured on: the default list, whatever -n is
POOL_FACTOR = 3  # a seat is earned: a paper below the plain top 3× that window is never promoted (issue 39)
LEAD = 2  # the first seats are the score's: without it, fine nDCG@10 lost 0.02-0.03 (docs/evaluation.md)
STRONG_QUANTILE = 0.35  # promoted papers are as close to their interest as the window's 35th-percentile paper


def entitlements(shares: np.ndarray, seats: int) -> np.ndarray:
    """(seats, interests): row s−1 holds each interest's seats after s seats, by Sainte-Laguë assigned seat
    by seat (the next seat to the largest share / (2·given + 1); ties: the larger share, then the earlier), so
    no interest ever loses a seat when the list grows."""
    shares = np.asarray(shares, dtype=np.float64)
    given = np.zeros(len(shares), dtype=np.int64)
    rows = np.zeros((seats, len(shares)), dtype=np.int64)
    tie = np.lexsort((np.arange(len(shares)), -shares))  # the larger share, then the earlier
    for seat in range(seats):
        priority = shares[tie] / (2 * given[tie] + 1)
        given[tie[int(np.argmax(priority))]] += 1  # argmax takes the first of equal priorities
        rows[seat] = given
    return rows


def proportional_order(order: np.ndarray, interest: np.ndarray, nearest: np.ndarray, strength: np.ndarray,
                       shares: np.ndarray, window: int = WINDOW, item_rows=None, *,
                       quantile: float = STRONG_QUANTILE, floor: float = 0.0) -> np.ndarray:
    """`order` (papers best first) re-ranked seat by seat so that every prefix covers the interests by `shares`.

    `nearest`, `interest` and `strength` (each paper's nearest library item, that item's interest and the
    similarity) are given for the first len(nearest) papers of `order`: the pool a paper may be promoted
    from. `window` is the list the strong bar is measured on (not the list shown: any prefix of the result is
    the list of that length). `item_rows` (the library items' unit rows) spread an interest's seats over its
    items; None takes the per-item best papers by score. `floor`: the similarity a promoted paper needs
    whatever the window holds (the match's weak-list bar: no seat for a paper that matches nothing). A
    pool with fewer than two interests that have candidates keeps the plain order.
    """
    order = np.asarray(order)
    pool = len(nearest)
    if pool == 0 or len(shares) < 2:
        return order
    eligible = earned(strength, min(window, pool), quantile, floor)
    queues = [_queue(np.flatnonzero(eligible & (interest == label)), nearest, item_rows)
              for label in range(len(shares))]
    if sum(len(queue) > 0 for queue in queues) < 2:
        return order  # one real interest in this corpus: a plain top N
    owed_by = np.vstack([np.zeros((LEAD, len(shares)), dtype=np.int64), entitlements(shares, pool)])[:pool]
    taken = np.zeros(pool, dtype=bool)
    heads = [0] * len(shares)  # each queue's first untaken place
    counts = np.zeros(len(shares), dtype=np.int64)
    shown: list[int] = []
    best = 0  # the first untaken place by score
    for seat in range(pool):
        for label, queue in enumerate(queues):
            while heads[label] < len(queue) and taken[queue[heads[label]]]:
                heads[label] += 1
        while taken[best]:
            best += 1
        waiting = [label for label, queue in enumerate(queues)
                   if heads[label] < len(queue) and counts[label] < owed_by[seat, label]]
        if not waiting and all(heads[label] >= len(queue) for label, queue in enumerate(queues)):
            break  # no interest has candidates left: the rest is in score order
        if waiting and not (eligible[best] and interest[best] in waiting):
            place = min(queues[label][heads[label]] for label in waiting)  # the best-placed owed candidate
        else:
            place = best
        taken[place] = True
        counts[interest[place]] += 1
        shown.append(place)
    rest = np.concatenate([np.flatnonzero(~taken), np.arange(pool, len(order))]).astype(np.int64)
    return order[np.concatenate([np.asarray(shown, dtype=np.int64), rest])]


def earned(strength: np.ndarray, window: int, quantile: float = STRONG_QUANTILE, floor: float = 0.0) -> np.ndarray:
    """Which papers of the pool may take a seat: as close to their nearest item as the window's `quantile`
    paper and at least `floor` (the pool itself is the plain ranking's top POOL_FACTOR·window)."""
    return (strength >= np.quantile(strength[:window], quantile)) & (strength >= floor)


def _queue(candidates: np.ndarray, nearest: np.ndarray, item_rows) -> np.ndarray:
    """An interest's candidates in the order its seats take them: its best paper per library item (items
    farthest-first when `item_rows` are given, else by score), then the others by score."""
    heads = np.zeros(len(candidates), dtype=bool)
    heads[np.unique(nearest[candidates], return_index=True)[1]] = True
    first = candidates[heads]
    if item_rows is not None and len(first) > 1:
        first = first[spread(item_rows, nearest[first])]
    return np.concatenate([first, candidates[~heads]]).astype(np.int64)


def spread(item_rows, items: np.ndarray, wanted: int | None = None) -> np.ndarray:
    """Positions in `items` farthest-first (greedy k-center on cosine) from the first, in the order picked;
    the first `wanted` of them (None: all). A prefix of the answer is the answer for fewer."""
    from recommender.features.base import cosine

    wanted = len(items) if wanted is None else min(wanted, len(items))
    similarity = cosine(item_rows[items], item_rows[items])
    picked = [0]
    closest = similarity[0].copy()
    closest[0] = np.inf
    while len(picked) < wanted:
        nearest_free = int(np.argmin(closest))
        picked.append(nearest_free)
        closest = np.maximum(closest, similarity[nearest_free])
        closest[picked] = np.inf
    return np.asarray(picked, dtype=np.int64)


def interest_order(profile: Sequence[LibraryItem], rows, corpus_rows, order: np.ndarray, window: int = WINDOW, *,
                   nearest=None, floor: float = 0.0, memo=None) -> tuple[np.ndarray, Interests, tuple[str, ...]]:
    """The profile's interests, `order` re-ranked by them (proportional_order; `window` is the strong bar's
    list, never the shown list's length, so every -n shows a prefix of the same order; `floor` the similarity
    a promoted paper needs) and the interests with no paper that earns a seat (none good in this corpus).
    `nearest(papers)`: the papers' best items and similarities as the reasons find them (default: reasons_for);
    `memo`: the caches' library memo, which keeps the interests (kept_interests.py)."""
    interests = kept_interests([item.collections for item in profile], [item.title for item in profile], rows, memo)
    if len(interests.names) < 2:
        return order, interests, ()
    found = nearest or (lambda papers: reasons_for(rows, corpus_rows, papers))
    nearest, similarity = found(order[: POOL_FACTOR * window])
    nearest, similarity = nearest[:, 0], similarity[:, 0]
    shares = interests.sizes / len(interests.labels)
    served = set(interests.labels[nearest][earned(similarity, min(window, len(similarity)), floor=floor)].tolist())
    unserved = tuple(name for label, name in enumerate(interests.names) if label not in served)
    order = proportional_order(order, interests.labels[nearest], nearest, similarity, shares, window, rows,
                               floor=floor)
    return order, interests, unserved


def interest_name(interests: Interests | None, reason_rows: np.ndarray, reason_sims: np.ndarray) -> str:
    """The interest a recommendation serves: its nearest item's ("" with a single interest or no reason)."""
    if interests is None or len(interests.names) < 2 or not len(reason_rows) or reason_sims[0] <= 0:
        return ""
    return interests.names[interests.labels[int(reason_rows[0])]]
