"""A shown list that does not jump (a fixed corpus) or that rolls (a stream): papers already shown (the
collection's members, the incumbents) stay unless a newcomer beats them clearly, so one action in Zotero
changes only what it must; a stream's margin is a tie (`margin_for`).

Rule (docs/evaluation.md, "A list that does not jump"). The shown list starts as the ranking's top N. Each
newcomer in it (not an incumbent) is set against an incumbent the ranking put below the top N: the weakest
newcomer against the strongest such incumbent, the next weakest against the next strongest, and so on. The
incumbent keeps its place unless the newcomer's score exceeds its own by MARGIN × the run's score spread (the
standard deviation of all the ranking's scores, so the margin means the same whatever the scores' scale).
The list is shown in the ranking's order. A pure function of its inputs: the same ranking and incumbents give
the same list on every run.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence

import numpy as np

from recommender.items import Recommendation

# Chosen on the collection simulation's validation fold (collection_sim.py, retired: git show 0f02689:recommender/evaluation/collection_sim.py; citeulike-a
# fold 1, 200 users; docs/evaluation.md, "A list that does not jump"): the smallest margin at which 97 % of trashes
# bring exactly one paper in and 98 % of new library items change at most 3 of 20, precision not lower than the
# plain top N's. 3 lost precision.
MARGIN = 2.0
# A stream corpus (arXiv…) is a window's best N, not a list to work through: an incumbent keeps its place only on
# a tie, so a pick leaves once N better papers are there (docs/evaluation.md, "A collection that rolls").
STREAM_MARGIN = 0.0


def margin_for(stream: bool) -> float:
    """The incumbency margin: strong for a fixed corpus (one trash brings one refill), none for a stream."""
    return STREAM_MARGIN if stream else MARGIN


def score_spread(scores: Sequence[float]) -> float:
    """The standard deviation of the run's scores over the whole ranking (0 with fewer than two). Not the head's:
    the top of a ranking is compressed, and by how much varies from run to run."""
    values = np.asarray(scores, dtype=np.float64)
    return float(np.std(values)) if len(values) > 1 else 0.0


def stable_selection(ranked: Sequence[Hashable], scores: Sequence[float], incumbents: Collection[Hashable],
                     top_n: int, margin: float = MARGIN) -> list[Hashable]:
    """The `top_n` papers to show, in `ranked`'s order: the ranking's top N, except that an incumbent below it
    stays in place of a newcomer that does not beat its score by `margin` × the score spread.

    `ranked`: paper ids best first (the ranking as shown); `scores[i]` is `ranked[i]`'s score; `incumbents`:
    ids shown now (an id the ranking lacks — dismissed, owned, another corpus — is ignored). `top_n` 0 or at
    least len(ranked): the whole ranking.
    """
    if len(scores) != len(ranked):
        raise ValueError(f"{len(ranked)} papers but {len(scores)} scores")
    if not top_n or top_n >= len(ranked):
        return list(ranked)
    incumbents = set(incumbents)
    newcomers = sorted((i for i in range(top_n) if ranked[i] not in incumbents), key=lambda i: (scores[i], -i))
    waiting = sorted((i for i in range(top_n, len(ranked)) if ranked[i] in incumbents),
                     key=lambda i: (-scores[i], i))
    threshold = margin * score_spread(scores)
    leaving, staying = set(), set()
    for newcomer, incumbent in zip(newcomers, waiting):  # the weakest newcomer meets the strongest incumbent
        if scores[newcomer] > scores[incumbent] + threshold:
            break  # beaten clearly: every stronger newcomer beats every weaker incumbent too
        leaving.add(newcomer)
        staying.add(incumbent)
    chosen = [i for i in range(top_n) if i not in leaving] + sorted(staying)
    return [ranked[i] for i in sorted(chosen)]


def stable_order(ranked: Sequence[Hashable], scores: Sequence[float], incumbents: Collection[Hashable],
                 top_n: int, margin: float = MARGIN) -> list[int]:
    """Positions in `ranked`: the stable selection first (in ranked order), then every other paper in ranked
    order, so a caller that skips some papers (untitled, trashed) fills up from the ranking as before."""
    shown = stable_selection(ranked, scores, incumbents, top_n, margin)
    place = {paper: index for index, paper in enumerate(ranked)}
    first = [place[paper] for paper in shown]
    taken = set(first)
    return first + [index for index in range(len(ranked)) if index not in taken]


def stable_recommendations(recs: Sequence[Recommendation], incumbents: Collection[str], top_n: int,
                           margin: float = MARGIN) -> list[Recommendation]:
    """`recs` (ranked, best first) with the stable selection of `top_n` first (stable_order), the others after
    them. Each keeps the rank the ranking gave it (a member kept from below shows its own rank, as sync's plan
    does). `incumbents`: corpus ids shown now."""
    return [recs[index] for index in stable_order([rec.paper.id for rec in recs], [rec.score for rec in recs],
                                                  incumbents, top_n, margin)]
