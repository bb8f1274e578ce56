"""What the user did with earlier recommendations, applied to a fresh ranking.

The caller (the Zotero side) hands over plain lists: corpus ids the user kept (they are in the library by
then, so they already join the profile and are never recommended again), ids they dismissed, ids that sat
untouched for several runs, and how many members of a group saved each paper. Here:

- dismissed and stale papers leave the ranking for good;
- every other paper loses `penalty × σ × s`, where s is its highest cosine similarity to a dismissed paper
  and σ the spread of this user's scores (so one weight works for cosine and hybrid z-scores alike); the
  weight is the one the CiteULike feedback simulation chose (docs/evaluation.md);
- a paper saved by other members of the group gains `group_boost × σ × log(1 + members)`;
- the reasons say which feedback moved a paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from recommender.items import Recommendation

DISMISSED_PENALTY = 1.0  # chosen on a validation fold of the simulation (recommender/evaluation/feedback_sim.py)
KEPT_BOOST = 1.0
GROUP_BOOST = 0.5
MENTION_SIMILARITY = 0.2  # a dismissed paper this similar (cosine) is named in the reasons


@dataclass(frozen=True)
class Feedback:
    """Corpus ids by what the user did; `kept_items` are library item keys (for 'you kept …' reasons)."""

    kept: frozenset[str] = frozenset()
    dismissed: Mapping[str, str] = field(default_factory=dict)  # corpus id → how ("removed", "trashed")
    stale: frozenset[str] = frozenset()
    kept_items: frozenset[str] = frozenset()
    group_counts: Mapping[str, int] = field(default_factory=dict)  # corpus id → other members who saved it
    group_name: str = ""
    titles: Mapping[str, str] = field(default_factory=dict)  # corpus id → title, for the reasons

    def __bool__(self) -> bool:
        return bool(self.kept or self.dismissed or self.stale or self.kept_items or self.group_counts)


def dismissed_penalty(scores: np.ndarray, nearest_dismissed: np.ndarray, weight: float = DISMISSED_PENALTY
                      ) -> np.ndarray:
    """Scores lowered by similarity to dismissed papers (the rule the simulation measures)."""
    spread = float(np.std(scores)) or 1.0
    return scores - weight * spread * np.clip(nearest_dismissed, 0.0, None)


def kept_boost(scores: np.ndarray, nearest_kept: np.ndarray, weight: float = KEPT_BOOST) -> np.ndarray:
    """Scores raised by similarity to papers the user kept: a fresh, explicit signal, stronger than one
    more item among many in the profile."""
    spread = float(np.std(scores)) or 1.0
    return scores + weight * spread * np.clip(nearest_kept, 0.0, None)


def apply_feedback(recs: Sequence[Recommendation], corpus_ids: Sequence[str], corpus_rows, feedback: Feedback,
                   *, top_n: int = 0, penalty: float = DISMISSED_PENALTY, group_boost: float = GROUP_BOOST
                   ) -> list[Recommendation]:
    """Re-rank `recs` (normally the whole ranked corpus) with `feedback`; `corpus_rows[i]` is the feature row
    of `corpus_ids[i]`. Returns the new top `top_n` (0: all), ranks renumbered."""
    if not feedback or not recs:
        return _renumber(list(recs)[:top_n] if top_n else list(recs))
    position = {paper_id: index for index, paper_id in enumerate(corpus_ids)}
    gone = set(feedback.dismissed) | set(feedback.stale) | set(feedback.kept)
    recs = [rec for rec in recs if rec.paper.id not in gone]
    if not recs:
        return []
    scores = np.array([rec.score for rec in recs], dtype=np.float64)
    spread = float(np.std(scores)) or 1.0
    adjusted = scores.copy()
    nearest_title: list[str] = [""] * len(recs)
    nearest = np.zeros(len(recs))
    dismissed = [(paper_id, how) for paper_id, how in feedback.dismissed.items() if paper_id in position]
    if dismissed:
        rows = [position[rec.paper.id] for rec in recs]
        similarity = _cosine(corpus_rows, rows, [position[paper_id] for paper_id, _ in dismissed])
        best = similarity.argmax(axis=1)
        nearest = similarity[np.arange(len(recs)), best]
        adjusted = dismissed_penalty(scores, nearest, penalty) if penalty else adjusted
        for index, column in enumerate(best):
            paper_id, how = dismissed[column]
            nearest_title[index] = f"less like '{feedback.titles.get(paper_id, paper_id)}', which you {how}"
    for index, rec in enumerate(recs):
        members = int(feedback.group_counts.get(rec.paper.id, 0))
        if members:
            adjusted[index] += group_boost * spread * np.log1p(members)
    order = np.lexsort((np.arange(len(recs)), -adjusted))
    if top_n:
        order = order[:top_n]
    result = []
    for index in order:
        rec = recs[index]
        notes = list(rec.feedback)
        notes += [f"like '{r.item_title}', which you kept" for r in rec.reasons if r.item_key in feedback.kept_items]
        if nearest[index] >= MENTION_SIMILARITY and penalty:
            notes.append(f"{nearest_title[index]} (similarity {nearest[index]:.2f})")
        if members := int(feedback.group_counts.get(rec.paper.id, 0)):
            noun = "member" if members == 1 else "members"
            notes.append(f"saved by {members} {noun} of {feedback.group_name or 'your group'}")
        result.append(replace(rec, score=float(adjusted[index]), feedback=tuple(notes)))
    return _renumber(result)


def _cosine(corpus_rows, rows: list[int], columns: list[int]) -> np.ndarray:
    """Cosine similarity of corpus rows `rows` to corpus rows `columns` (rows are unit length)."""
    block = corpus_rows[rows] @ corpus_rows[columns].T
    return np.asarray(block.toarray() if hasattr(block, "toarray") else block, dtype=np.float64)


def _renumber(recs: list[Recommendation]) -> list[Recommendation]:
    return [replace(rec, rank=rank) for rank, rec in enumerate(recs, start=1)]
