"""What the user did with earlier recommendations, applied to a fresh ranking.

The caller (the Zotero side) hands over plain lists: corpus ids the user kept (they are in the library by
then, so they already join the profile and are never recommended again), ids they dismissed, ids that sat
untouched for several runs, and how many members of a group saved each paper. Here:

- dismissed, kept (now owned) and stale papers leave the ranking for good;
- a per-user logistic regression on the features (library and kept papers positive, dismissed papers and
  random corpus papers negative) is added to the standardise score: the rule the CiteULike feedback
  simulation chose over a similarity penalty (docs/evaluation.md), with weight LINEAR_WEIGHT on tf-idf rows
  and DENSE_LINEAR_WEIGHT on dense rows (where the score is already the fused one, which holds its own linear
  model: a large weight there lost recall in the dense simulation);
- a paper the user asked for more of (an explicit rating, `liked`) leaves the ranking, joins the linear model's
  positives and lifts what is like it: `LIKED_BOOST × σ × its cosine to the nearest liked paper`;
- a paper saved by other members of the group gains `group_boost × σ × log(1 + members)`;
- papers are re-ordered by the new scores inside each interest (`within_interests`): each place of the list
  keeps the interest facets.py seated there;
- the reasons say which feedback moved a paper.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from recommender.features.base import cosine, is_dense
from recommender.items import Paper, Recommendation
from recommender.scoring.fusion import standardise
from recommender.scoring.owned import CorpusKeys

# The weight of the per-user linear model against the content score (both standardise), chosen on a
# validation fold of the simulation (recommender/evaluation/feedback_sim.py, docs/evaluation.md).
LINEAR_WEIGHT = 4.0
# The same on dense (MiniLM) rows after the fused score, chosen on the dense simulation's validation fold
# (recommender/evaluation/feedback_sim.py with dense features; 0.25 best of 0.25, 0.5, 1, 4 on citeulike-a).
DENSE_LINEAR_WEIGHT = 0.25
DISMISSED_PENALTY = 1.0  # the simpler rule the simulation compared it with
GROUP_BOOST = 0.5
# The lift towards papers the user asked more of, chosen on the ratings benchmark's validation fold (tf-idf: 2 of
# 0–8; benchmarks/ratings.py, docs/serve.md: its gain is within noise there, the verdicts do the work).
LIKED_BOOST = 2.0
DENSE_LIKED_BOOST = 0.5  # the same on dense rows after the fused score (0.5 of 0–8: benchmarks/ratings.py --dense)
MENTION_SIMILARITY = 0.2  # a dismissed paper this similar (cosine) is named in the reasons
TWIN_COSINE = 0.95  # a corpus row this close to a positive's is that paper listed again, never a negative
NEAREST_KEPT_OUT = 10  # each positive's nearest papers: what "more like this" asks for, never a negative


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
    shown: frozenset[str] = frozenset()  # corpus ids in zotrec's collection now, untouched: a stable list keeps them
    liked: frozenset[str] = frozenset()  # corpus ids the user asked for more of (explicit ratings)

    def __bool__(self) -> bool:
        return bool(self.kept or self.dismissed or self.stale or self.kept_items or self.group_counts or self.liked)


class CorpusMatcher:
    """(DOI, title) of a saved item → the corpus id it is, by the rule that says which papers a user owns
    (owned.CorpusKeys.find): "this member saved that paper" in a group library and in `zotrec score
    --group-summary` alike. A class, not a closure, so that Dask can ship it."""

    def __init__(self, corpus: Sequence[Paper]) -> None:
        self.keys = CorpusKeys(corpus)
        self.ids = [paper.id for paper in corpus]

    def __call__(self, doi: str, title: str) -> str | None:
        index = self.keys.find(doi=doi, title=title)
        return None if index is None else self.ids[index]



def member_counts(saves: Iterable[tuple[Hashable, str, str]], match: Callable[[str, str], str | None]
                  ) -> dict[str, int]:
    """corpus id → how many distinct members saved it; `saves` are (member, DOI, title), one per saved item."""
    savers: dict[str, set[Hashable]] = {}
    for member, doi, title in saves:
        paper = match(doi, title)
        if paper:
            savers.setdefault(paper, set()).add(member)
    return {paper: len(members) for paper, members in savers.items()}


def group_note(members: int, group_name: str = "") -> str:
    """The reason the group signal gives: 'saved by 3 members of Lab'."""
    noun = "member" if members == 1 else "members"
    return f"saved by {members} {noun} of {group_name or 'your group'}"


def dismissed_penalty(scores: np.ndarray, nearest_dismissed: np.ndarray, weight: float = DISMISSED_PENALTY
                      ) -> np.ndarray:
    """Scores lowered by similarity to dismissed papers (the rule the simulation measures)."""
    spread = float(np.std(scores)) or 1.0
    return scores - weight * spread * np.clip(nearest_dismissed, 0.0, None)


def linear_feedback_scores(profile_rows, kept_rows, dismissed_rows, negative_rows, candidate_rows,
                           kept_weight: float = 1.0, dismissed_weight: float = 1.0):
    """A per-user logistic regression on the features: the library and kept papers are positive, dismissed
    papers and a random sample of candidates negative (Scholar Inbox's recipe, with the user's own
    negatives), each weighted. Returns the decision value of every candidate row."""
    from scipy import sparse

    from recommender.scoring.learned import fit_logistic

    blocks = [profile_rows, kept_rows, negative_rows, dismissed_rows]
    weights = np.concatenate([np.ones(profile_rows.shape[0]), np.full(kept_rows.shape[0], kept_weight),
                              np.ones(negative_rows.shape[0]), np.full(dismissed_rows.shape[0], dismissed_weight)])
    labels = np.concatenate([np.ones(profile_rows.shape[0] + kept_rows.shape[0]),
                             np.zeros(negative_rows.shape[0] + dismissed_rows.shape[0])])
    if sparse.issparse(profile_rows):
        features = sparse.vstack(blocks).tocsr()
        columns = np.unique(features.indices)  # words that occur: the others would weigh 0
        coef = fit_logistic(features[:, columns], labels, sample_weight=weights)
        return np.asarray(candidate_rows[:, columns] @ coef).ravel()
    coef = fit_logistic(np.vstack(blocks), labels, sample_weight=weights)
    return np.asarray(candidate_rows @ coef).ravel()


def feedback_weight(corpus_rows) -> float:
    """The linear model's weight for these feature rows: dense (an array, scored by the fused score) or
    anything else (tf-idf, as measured; the hybrid keeps that weight, unmeasured)."""
    return DENSE_LINEAR_WEIGHT if is_dense(corpus_rows) else LINEAR_WEIGHT


def neighbourhood(corpus_rows, positives: Sequence[int], keys: CorpusKeys | None = None,
                  nearest: int = NEAREST_KEPT_OUT) -> np.ndarray:
    """The rows random negatives must not be drawn from: the positives, their twins (the same paper listed again:
    the same DOI, URL or title key by `keys`, owned.CorpusKeys' rule, or a row at cosine ≥ TWIN_COSINE) and each
    one's `nearest` closest papers. Drawn as negatives, a liked paper's neighbours taught the model to tell them
    from it, which cancelled "More like this" on a small corpus (docs/evaluation-history.md, round 8)."""
    positives = [int(index) for index in positives]
    if not positives:
        return np.zeros(0, dtype=np.int64)
    similarity = cosine(corpus_rows, corpus_rows[positives])  # corpus × positives
    twins = np.flatnonzero(similarity.max(axis=1) >= TWIN_COSINE)
    same = keys.same_paper(positives) if keys is not None else set(positives)
    count = min(nearest + 1, similarity.shape[0])  # + 1: the positive itself is its own nearest
    closest = np.argpartition(-similarity, count - 1, axis=0)[:count].ravel()
    return np.union1d(np.union1d(twins, closest), np.fromiter(same, dtype=np.int64, count=len(same)))


def negative_sample(n_candidates: int, positives: int, exclude, seed: int = 0) -> np.ndarray:
    """Random candidates used as negatives: max(100, 10 × positives), at most half of the candidates, none of
    `exclude` (the caller's: the positives' `neighbourhood` and the dismissed papers)."""
    rng = np.random.default_rng(seed)
    pool = np.setdiff1d(np.arange(n_candidates), np.asarray(list(exclude), dtype=np.int64))
    size = min(max(100, 10 * positives), len(pool) // 2)
    return np.sort(rng.choice(pool, size=size, replace=False)) if size > 0 else np.zeros(0, dtype=np.int64)


def apply_feedback(recs: Sequence[Recommendation], corpus_ids: Sequence[str], corpus_rows, feedback: Feedback,
                   *, profile_rows=None, top_n: int = 0, weight: float | None = None,
                   group_boost: float = GROUP_BOOST, liked_boost: float | None = None, seed: int = 0,
                   corpus_keys: CorpusKeys | None = None) -> list[Recommendation]:
    """Re-rank `recs` (normally the whole ranked corpus) with `feedback`; `corpus_rows[i]` is the feature row
    of `corpus_ids[i]`, `profile_rows` the rows of the library items the scores came from. Returns the new
    top `top_n` (0: all), ranks renumbered. `weight`: the linear model's (default: `feedback_weight`);
    `corpus_keys`: the corpus's DOI, URL and title keys, so that a positive's twins are no negatives."""
    if weight is None:
        weight = feedback_weight(corpus_rows)
    if liked_boost is None:
        liked_boost = DENSE_LIKED_BOOST if is_dense(corpus_rows) else LIKED_BOOST
    if not feedback or not recs:
        return _renumber(list(recs)[:top_n] if top_n else list(recs))
    position = {paper_id: index for index, paper_id in enumerate(corpus_ids)}
    gone = set(feedback.dismissed) | set(feedback.stale) | set(feedback.kept) | set(feedback.liked)
    recs = [rec for rec in recs if rec.paper.id not in gone]
    if not recs:
        return []
    scores = np.array([rec.score for rec in recs], dtype=np.float64)
    rows = np.array([position[rec.paper.id] for rec in recs])
    kept = [position[cid] for cid in sorted(feedback.kept | feedback.liked) if cid in position]  # the positives
    dismissed = [(cid, how) for cid, how in sorted(feedback.dismissed.items()) if cid in position]
    adjusted, lowered = scores.copy(), np.zeros(len(recs), dtype=bool)
    if profile_rows is not None and profile_rows.shape[0] and (kept or dismissed) and weight:
        gone_rows = np.union1d(neighbourhood(corpus_rows, kept, corpus_keys),
                               np.array([position[cid] for cid, _ in dismissed], dtype=np.int64))
        negatives = negative_sample(len(corpus_ids), profile_rows.shape[0] + len(kept), gone_rows, seed)
        linear = standardise(linear_feedback_scores(
            profile_rows, corpus_rows[kept], corpus_rows[[position[cid] for cid, _ in dismissed]],
            corpus_rows[negatives], corpus_rows[rows]))
        adjusted = standardise(scores) + weight * linear
        before, after = np.empty(len(recs)), np.empty(len(recs))  # ranks without and with the feedback
        before[np.lexsort((np.arange(len(recs)), -scores))] = np.arange(len(recs))
        after[np.lexsort((np.arange(len(recs)), -adjusted))] = np.arange(len(recs))
        lowered = after > before
    nearest, nearest_title = np.zeros(len(recs)), [""] * len(recs)
    if dismissed:
        similarity = _cosine(corpus_rows, list(rows), [position[cid] for cid, _ in dismissed])
        best = similarity.argmax(axis=1)
        nearest = similarity[np.arange(len(recs)), best]
        for index, column in enumerate(best):
            cid, how = dismissed[column]
            nearest_title[index] = f"less like '{feedback.titles.get(cid, cid)}', which you {how}"
    spread = float(np.std(adjusted)) or 1.0
    liked = [cid for cid in sorted(feedback.liked) if cid in position]
    near_liked, liked_title = np.zeros(len(recs)), [""] * len(recs)
    if liked and liked_boost:
        similarity = _cosine(corpus_rows, list(rows), [position[cid] for cid in liked])
        best = similarity.argmax(axis=1)
        near_liked = np.clip(similarity[np.arange(len(recs)), best], 0.0, None)
        liked_title = [f"like '{feedback.titles.get(liked[column], liked[column])}', which you asked more of"
                       for column in best]
        adjusted = adjusted + liked_boost * spread * near_liked
    # named only on the papers most like a liked one (the top tenth): every paper gets some of the lift
    liked_mention = max(MENTION_SIMILARITY, float(np.quantile(near_liked, 0.9))) if liked else np.inf
    members = np.array([int(feedback.group_counts.get(rec.paper.id, 0)) for rec in recs])
    adjusted = adjusted + group_boost * spread * np.log1p(members)
    order = within_interests([rec.interest for rec in recs], adjusted)
    if top_n:
        order = order[:top_n]
    result = []
    for index in order:
        rec = recs[index]
        notes = list(rec.feedback)
        notes += [f"like '{r.item_title}', which you kept" for r in rec.reasons if r.item_key in feedback.kept_items]
        if nearest[index] >= MENTION_SIMILARITY and lowered[index]:
            notes.append(f"{nearest_title[index]} (similarity {nearest[index]:.2f})")
        if near_liked[index] >= liked_mention:
            notes.append(f"{liked_title[index]} (similarity {near_liked[index]:.2f})")
        if members[index]:
            notes.append(group_note(int(members[index]), feedback.group_name))
        result.append(replace(rec, score=float(adjusted[index]), feedback=tuple(notes)))
    return _renumber(result)


def within_interests(interests: Sequence[str], scores: np.ndarray) -> np.ndarray:
    """Positions ordered by `scores` inside each interest, every place keeping the interest it had: the seats
    facets.py gave each interest stay its own, so feedback moves papers, never the list's coverage (one trash
    once re-sorted the whole list and a library's smaller interests fell out of it). One interest: by score."""
    scores = np.asarray(scores, dtype=np.float64)
    by_score = np.lexsort((np.arange(len(scores)), -scores))
    if len(set(interests)) < 2:
        return by_score
    queues: dict[str, list[int]] = {}
    for position in by_score:
        queues.setdefault(interests[position], []).append(int(position))
    taken = {name: iter(queue) for name, queue in queues.items()}
    return np.array([next(taken[name]) for name in interests], dtype=np.int64)


def _cosine(corpus_rows, rows: list[int], columns: list[int]) -> np.ndarray:
    """Cosine similarity of corpus rows `rows` to corpus rows `columns` (rows are unit length)."""
    block = corpus_rows[rows] @ corpus_rows[columns].T
    return np.asarray(block if isinstance(block, np.ndarray) else block.toarray(), dtype=np.float64)


def _renumber(recs: list[Recommendation]) -> list[Recommendation]:
    return [replace(rec, rank=rank) for rank, rec in enumerate(recs, start=1)]
