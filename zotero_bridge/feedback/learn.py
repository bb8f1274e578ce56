"""From remembered recommendations and a view of the library to the plain lists the recommender uses.

`read_fates` applies the rules of fates.py to every paper zotrec remembers for a library; `feedback_for`
turns the result into recommender.scoring.feedback.Feedback (corpus ids kept / dismissed / stale, and the
item keys of kept papers so that reasons can say "you kept …"), with the page's explicit ratings (ratings.py)
beside the fates: a verdict read in Zotero (kept, dismissed) stands over a rating of the same paper.
"""

from __future__ import annotations

from collections.abc import Mapping

from recommender.scoring.feedback import Feedback
from zotero_bridge.feedback.fates import DISMISSED, KEPT, STALE_AFTER_RUNS, UNTOUCHED, LibraryView, fate_of
from zotero_bridge.feedback.memory import IN_COLLECTION, Remembered
from zotero_bridge.feedback.ratings import MORE, NOT, NOT_FOR_ME, SAVED, Rating


def read_fates(remembered: Mapping[str, Remembered], view: LibraryView, collection_name: str = ""
               ) -> dict[str, Remembered]:
    """corpus id → the paper with its fate as `view` shows it now."""
    return {corpus_id: fate_of(paper, view, collection_name) for corpus_id, paper in remembered.items()}


def how_dismissed(why: str) -> str:
    """'you moved it to the trash' → 'trashed', for "less like 'X', which you trashed"."""
    if why == NOT_FOR_ME:
        return why
    return "trashed" if "trash" in why else "deleted" if "deleted" in why else "removed"


def feedback_for(fates: Mapping[str, Remembered], group_counts: Mapping[str, int] | None = None,
                 group_name: str = "", ratings: Mapping[str, Rating] | None = None) -> Feedback:
    """The recommender's view of what the user did, in Zotero and (`ratings`) on the page."""
    kept = {cid: p for cid, p in fates.items() if p.fate == KEPT}
    dismissed = {cid: how_dismissed(p.why) for cid, p in fates.items() if p.fate == DISMISSED}
    rated = {cid: r for cid, r in (ratings or {}).items() if cid not in kept and cid not in dismissed}
    dismissed |= {cid: NOT_FOR_ME for cid, r in rated.items() if r.rating == NOT}
    liked = frozenset(cid for cid, r in rated.items() if r.rating == MORE)
    saved = frozenset(cid for cid, r in rated.items() if r.rating == SAVED)
    stale = {cid for cid, p in fates.items()
             if p.fate == UNTOUCHED and p.status == IN_COLLECTION and p.untouched_runs >= STALE_AFTER_RUNS}
    shown = {cid for cid, p in fates.items() if p.fate == UNTOUCHED and p.status == IN_COLLECTION} - stale
    return Feedback(kept=frozenset(kept) | saved, dismissed=dismissed, stale=frozenset(stale),
                    kept_items=frozenset(p.item_key for p in kept.values()),
                    group_counts=dict(group_counts or {}), group_name=group_name,
                    titles={cid: r.title for cid, r in rated.items()} | {cid: p.title for cid, p in fates.items()},
                    shown=frozenset(shown), liked=liked)


def summary(fates: Mapping[str, Remembered]) -> dict[str, int]:
    counts = {KEPT: 0, DISMISSED: 0, UNTOUCHED: 0}
    for paper in fates.values():
        counts[paper.fate] = counts.get(paper.fate, 0) + 1
    return counts


def after_run(fates: Mapping[str, Remembered], entries, created: Mapping[str, str], items: Mapping[str, Mapping],
              collection_key: str, library_moved: bool) -> tuple[list[Remembered], list[Remembered]]:
    """(papers this run created, every remembered paper as it stands after the run), from the plan's entries
    (objects with action/corpus_id/title/item_key). A paper still untouched counts one more run only when
    the library changed since the last run: the user was in Zotero and passed it over."""
    from dataclasses import replace

    from zotero_bridge.feedback.fates import fingerprint
    from zotero_bridge.feedback.memory import RETIRED, TRASHED

    made = [Remembered(cid, entry.title, key, collection_key, fingerprint(items.get(key, {})))
            for entry in entries if entry.action == "add" and (key := created.get(entry.corpus_id))
            for cid in [entry.corpus_id]]
    status = {e.corpus_id: (IN_COLLECTION if e.action in ("keep", "link") else TRASHED if e.action == "trash"
                            else RETIRED)
              for e in entries if e.action in ("keep", "link", "remove", "trash") and e.corpus_id in fates}
    updated = []
    for corpus_id, paper in fates.items():
        paper = replace(paper, status=status.get(corpus_id, paper.status))
        if paper.fate == UNTOUCHED and paper.status == IN_COLLECTION and library_moved:
            paper = replace(paper, untouched_runs=paper.untouched_runs + 1)
        updated.append(paper)
    return made, updated


def member_counts(creators: Mapping[str, int], items: Mapping[str, Mapping], corpus, me: int | None
                  ) -> tuple[dict[str, int], frozenset[str]]:
    """(corpus id → how many other members saved the paper, keys of items other members created), matching
    group items to corpus papers by the recommender's one rule (`scoring.feedback.CorpusMatcher`)."""
    from recommender.scoring.feedback import CorpusMatcher
    from recommender.scoring.feedback import member_counts as count_members

    others = frozenset(key for key, user in creators.items() if user != me)
    saves = [(creators[key], str(data.get("DOI") or ""), str(data.get("title") or ""))
             for key in others if (data := items.get(key) or {}) and not data.get("deleted")]
    return count_members(saves, CorpusMatcher(corpus)), others
