"""The check a user can run on their own library: hide the newest items and see where they rank."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from recommender.errors import EmptyLibraryError, RecommenderError, SettingError
from recommender.items import LibraryItem, Paper
from recommender.pipeline import Library, RankOptions
from recommender.pipeline import rank as ranking
from recommender.pipeline.build import background_for
from recommender.scoring.fusion import DEFAULT_SCORING
from recommender.scoring.owned import owned_mask
from recommender.scoring.ranking import Recommender

log = logging.getLogger(__name__)

HOLDOUT_CUTOFFS = (20, 50, 100)


@dataclass
class HiddenRank:
    """One hidden library item and its rank (1 = first) among the corpus plus the hidden items."""

    key: str
    title: str
    date_added: str
    rank: int


@dataclass
class HoldoutResult:
    """Ranks of the hidden items, recall at a few depths, and what a random ranking would get."""

    candidates: int
    profile_items: int
    scoring: str
    hidden: list[HiddenRank] = field(default_factory=list)
    recall: dict[str, float] = field(default_factory=dict)
    random_recall: dict[str, float] = field(default_factory=dict)
    median_rank: float = 0.0
    random_median_rank: float = 0.0


def newest_items(items: Sequence[LibraryItem], count: int) -> tuple[list[LibraryItem], list[LibraryItem]]:
    """(kept, hidden): the `count` most recently added items with text are hidden."""
    usable = [item for item in items if item.text.strip()]
    dated = [item for item in usable if item.date_added]
    if count < 1:
        raise SettingError(f"--holdout-newest must be at least 1, got {count}")
    if len(dated) < count:
        raise RecommenderError(
            f"only {len(dated)} library items have a date added, cannot hide {count} "
            "(zotero:sqlite, zotero:web and Zotero JSON carry it; BibTeX needs a timestamp field)"
        )
    hidden = sorted(dated, key=lambda item: item.date_added, reverse=True)[:count]
    hidden_keys = {id(item) for item in hidden}
    kept = [item for item in usable if id(item) not in hidden_keys]
    if not kept:
        raise EmptyLibraryError("hiding that many items leaves no library item to learn from")
    return kept, hidden


def evaluate_library_holdout(
    items: Sequence[LibraryItem],
    corpus: Sequence[Paper],
    holdout: int = 10,
    *,
    aggregation: str = DEFAULT_SCORING,
    model=None,
    representation="tfidf",
) -> HoldoutResult:
    """Hide the newest `holdout` items, score corpus + hidden items from the rest (a small corpus beside the
    bundled list, as every command scores it), report the hidden ranks."""
    kept, hidden = newest_items(items, holdout)
    duplicates = owned_mask(hidden, corpus)
    candidates = [paper for paper, dup in zip(corpus, duplicates) if not dup]
    candidates += [Paper(id=f"holdout:{item.key}", title=item.title, abstract=item.abstract or None)
                   for item in hidden]
    recommender = Recommender(candidates, aggregation=aggregation, model=model, representation=representation,
                              background=background_for(len(candidates)))
    ranked = ranking(recommender, Library(kept), RankOptions(top_n=0))  # the one ranking (recommender/pipeline)
    rank_of = {rec.paper.id: rec.rank for rec in ranked}
    result = HoldoutResult(candidates=len(ranked), profile_items=len(kept),
                           scoring="hybrid" if model is not None else f"content ({aggregation})")
    for item in hidden:
        rank = rank_of.get(f"holdout:{item.key}", len(ranked))
        result.hidden.append(HiddenRank(item.key, item.title, item.date_added, rank))
    ranks = np.array([h.rank for h in result.hidden])
    for m in HOLDOUT_CUTOFFS:
        result.recall[f"recall@{m}"] = float(np.mean(ranks <= m))
        result.random_recall[f"recall@{m}"] = min(m / len(ranked), 1.0)
    result.median_rank = float(np.median(ranks))
    result.random_median_rank = (len(ranked) + 1) / 2
    return result


def format_holdout(result: HoldoutResult) -> str:
    """A short plain-text report: one line per hidden item, then recall against random."""
    lines = [f"Hid {len(result.hidden)} newest items; ranked among {result.candidates} candidates "
             f"(corpus + hidden) from {result.profile_items} items, scoring: {result.scoring}", ""]
    for hidden in sorted(result.hidden, key=lambda h: h.rank):
        lines.append(f"{hidden.rank:>6}  {hidden.date_added[:10]:<10}  {hidden.title[:80]}")
    lines.append("")
    for name, value in result.recall.items():
        lines.append(f"{name:<11}{value:>7.3f}   (random {result.random_recall[name]:.3f})")
    lines.append(f"median rank {result.median_rank:>6.0f}   (random {result.random_median_rank:.0f})")
    return "\n".join(lines) + "\n"
