"""The one ranking function: a library (items, profile, feedback, items only others saved) and options
(length, steering) → the ranked recommendations with their reasons and match.

The order of the steps is fixed here and nowhere else: the Recommender's scores (content, fused signals,
authors, steering, interests seat by seat), then what the user did with earlier recommendations
(recommender/scoring/feedback.py), then the papers already shown in zotrec's collection kept unless beaten
clearly (recommender/scoring/stability.py), then the length, then the 0–100 match (recommender/scoring/match.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recommender.items import LibraryItem
from recommender.scoring.caches import NO_CACHES, ScoringCaches
from recommender.scoring.feedback import Feedback, apply_feedback
from recommender.scoring.match import with_match
from recommender.scoring.ranking import DEFAULT_TOP_N, Ranked, Recommender
from recommender.scoring.stability import margin_for, stable_recommendations
from recommender.scoring.steering import Steering


@dataclass(frozen=True)
class Library:
    """One user's library as a ranking sees it (the Zotero side builds it: zotero_bridge/feedback/reading.py).

    items: what the user has (never recommended), zotrec's own items the user did not keep already left out.
    profile: what the scores learn from (e.g. one collection); None: `items`.
    feedback: corpus ids the user kept, dismissed or left stale, and group counts; None: the source shows none.
    shared: keys of items only other group members saved: they are candidates, not owned.
    """

    items: Sequence[LibraryItem]
    profile: Sequence[LibraryItem] | None = None
    feedback: Feedback | None = None
    shared: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RankOptions:
    """top_n: the list's length (0: every paper); every_paper: return the whole ranked corpus after the first
    top_n (sync's plan refills from below); steering: --prefer/--avoid/--recent-half-life."""

    top_n: int = DEFAULT_TOP_N
    steering: Steering | None = None
    every_paper: bool = False
    stream: bool = False  # a stream corpus (arXiv…): the collection rolls (scoring/stability.margin_for)


def rank(recommender: Recommender, library: Library, options: RankOptions = RankOptions(),
         caches: ScoringCaches = NO_CACHES) -> Ranked:
    """The ranked list for one library (with the interests no paper of this corpus serves well): the same inputs
    give the same list in every command. `caches` (recommender/scoring/caches.py, built by
    build.shipped_recommender) only saves work: the list is the same without."""
    feedback = library.feedback or Feedback()
    owned = [item for item in library.items if item.key not in library.shared] if library.shared else library.items
    profile = library.profile if library.profile is not None else library.items
    whole = bool(feedback) or options.every_paper
    recs = recommender.recommend(owned, top_n=0 if whole else options.top_n, profile=profile,
                                 steering=options.steering, caches=caches)
    unserved = getattr(recs, "unserved", ())  # a Recommender stand-in may return a plain list
    if feedback:
        texts = [item.text for item in profile if item.text.strip()]
        rows = recommender.representation.transform(texts) if texts else None
        recs = apply_feedback(recs, [paper.id for paper in recommender.corpus], recommender.corpus_rows, feedback,
                              profile_rows=rows, corpus_keys=recommender.corpus_keys)
        if feedback.shown:  # zotrec's collection: its papers stay unless beaten clearly, as sync keeps them
            recs = stable_recommendations(recs, feedback.shown, options.top_n, margin_for(options.stream))
    if options.top_n and not options.every_paper:
        recs = recs[: options.top_n]
    return Ranked(with_match(recs, recommender.representation.name), unserved)
