"""The "own papers" benchmark (issue 33): how well a rule orders papers that all lie in a researcher's field.

An author of several corpus papers is the researcher: their other papers are the profile, one held-out paper
and its nearest corpus neighbours the candidates (all in the author's area, so the order is decided by
closeness, not by field). Grades: 2 the held-out paper, 1 a paper sharing an author with the researcher's
papers (a collaborator's: work they know), 0 otherwise. It is an open stand-in for a held-out expertise
check (profiles of a researcher's own papers, candidates rated by expertise), scored the way that check is:
a weighted pairwise-order loss pooled over all profiles, and graded nDCG@10 beside it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

HELD_OUT, COLLABORATOR, OTHER = 2, 1, 0  # the grades
NEIGHBOURS = 19  # the held-out paper's nearest papers among the candidates (20 in all, as a rated set is short)
MIN_PAPERS = 6  # an author's papers in the corpus to be a researcher (a profile of at least 5)
NDCG_AT = 10


@dataclass(frozen=True)
class OwnPapersCase:
    """One profile: the researcher, their profile papers, the held-out one, the candidates (the held-out
    paper first, then its neighbours, nearest first) and each candidate's grade (corpus indices throughout)."""

    author: Hashable
    profile: np.ndarray
    held_out: int
    candidates: np.ndarray
    grades: np.ndarray


def papers_by_author(paper_authors: Sequence[Collection[Hashable]]) -> dict[Hashable, list[int]]:
    """Each author key → the papers (indices) that list it, in index order."""
    found: dict[Hashable, list[int]] = defaultdict(list)
    for paper, authors in enumerate(paper_authors):
        for author in set(authors):
            found[author].append(paper)
    return dict(found)


def nearest_papers(vectors: np.ndarray, paper: int, excluded: Collection[int], size: int = NEIGHBOURS) -> np.ndarray:
    """The `size` papers whose rows (dense, or scipy sparse such as tf-idf) are most cosine-similar to `paper`'s,
    leaving out `paper` and `excluded` (the profile: a library's own papers are never recommended); nearest
    first, ties to the lower index."""
    if sparse.issparse(vectors):
        rows = sparse.csr_matrix(vectors, dtype=np.float64)
        norms = np.sqrt(np.asarray(rows.multiply(rows).sum(axis=1)).ravel())
        dots = np.asarray((rows @ rows[paper].T).todense()).ravel()
    else:
        rows = np.asarray(vectors, dtype=np.float64)
        norms = np.linalg.norm(rows, axis=1)
        dots = rows @ rows[paper]
    similarity = dots / np.where(norms > 0, norms, 1.0) / max(norms[paper], 1e-12)
    allowed = np.ones(rows.shape[0], dtype=bool)
    allowed[[paper, *excluded]] = False
    order = np.lexsort((np.arange(rows.shape[0]), -similarity))
    return order[allowed[order]][:size]


def graded(candidates: np.ndarray, held_out: int, own: Collection[int], author: Hashable,
           paper_authors: Sequence[Collection[Hashable]]) -> np.ndarray:
    """Per candidate: HELD_OUT for the held-out paper, COLLABORATOR when it lists an author (other than the
    researcher) of any of the researcher's `own` papers, held-out one included, else OTHER. Collaborators
    are taken from every own paper so the grade of a paper does not depend on which one was held out."""
    collaborators = set().union(*(set(paper_authors[paper]) for paper in own)) - {author}
    grades = np.array([COLLABORATOR if collaborators & set(paper_authors[paper]) else OTHER for paper in candidates])
    grades[np.asarray(candidates) == held_out] = HELD_OUT
    return grades


def own_paper_cases(paper_authors: Sequence[Collection[Hashable]], vectors: np.ndarray, *,
                    min_papers: int = MIN_PAPERS, held_out_per_author: int = 1, neighbours: int = NEIGHBOURS,
                    pool: int = 0, seed: int = 0) -> list[OwnPapersCase]:
    """Every author with at least `min_papers` papers, `held_out_per_author` of their papers held out in turn
    (drawn with `seed`), each case's candidates and grades. `pool` > `neighbours`: the neighbours are drawn
    from the held-out paper's `pool` nearest (still in its area, but not the tight cluster around it that
    only the held-out paper's own words can split). Authors are taken in their keys' sorted order, so the
    same corpus and seed give the same cases."""
    rng, draw = np.random.default_rng(seed), np.random.default_rng([seed, 1])
    by_author = papers_by_author(paper_authors)
    cases = []
    for author in sorted((key for key, papers in by_author.items() if len(papers) >= min_papers), key=repr):
        own = by_author[author]
        for held_out in sorted(rng.choice(own, size=min(held_out_per_author, len(own)), replace=False).tolist()):
            profile = np.array([paper for paper in own if paper != held_out])
            near = nearest_papers(vectors, held_out, profile, max(pool, neighbours))
            if len(near) > neighbours:
                near = near[np.sort(draw.choice(len(near), size=neighbours, replace=False))]
            candidates = np.concatenate([[held_out], near])
            cases.append(OwnPapersCase(author, profile, int(held_out), candidates.astype(np.int64),
                                       graded(candidates, held_out, own, author, paper_authors)))
    return cases


HALF_SEED = 39  # the author split of own_papers.py --half (issue 39)


def author_half(cases: Sequence[OwnPapersCase], half: int, seed: int = HALF_SEED) -> list[OwnPapersCase]:
    """The cases of one half (0 or 1) of the researchers, shuffled with `seed`: every profile of an author
    falls in the same half, so a rule chosen on one half is judged on researchers it never saw (co-authors
    may still share papers across the halves). Half 0 is the smaller when the count is odd."""
    authors = sorted({case.author for case in cases}, key=repr)
    first = {authors[i] for i in np.random.default_rng(seed).permutation(len(authors))[: len(authors) // 2]}
    return [case for case in cases if (case.author in first) == (half == 0)]


def pairwise_loss(scores: np.ndarray, grades: np.ndarray) -> tuple[float, float]:
    """(the weight of the wrongly ordered pairs, the weight of all pairs) for one profile: every pair of
    candidates with different grades weighs the grade gap; it counts whole when the lower grade scores
    higher and half when the scores tie. Returned as parts so profiles pool as the expertise check pools
    them (Σ wrong / Σ weight over all profiles), a profile with more graded pairs weighing more."""
    scores, grades = np.asarray(scores, dtype=np.float64), np.asarray(grades, dtype=np.float64)
    gap = grades[:, None] - grades[None, :]  # > 0 where the row's candidate should come first
    ahead = scores[:, None] - scores[None, :]
    upper = gap > 0
    wrong = np.where(ahead < 0, 1.0, np.where(ahead == 0, 0.5, 0.0))
    return float((gap * wrong)[upper].sum()), float(gap[upper].sum())


def pooled_loss(parts: Sequence[tuple[float, float]]) -> float:
    """Σ wrong / Σ weight over the profiles (NaN when no profile has a graded pair)."""
    wrong, total = (sum(values) for values in zip(*parts)) if parts else (0.0, 0.0)
    return wrong / total if total > 0 else float("nan")


def graded_ndcg(scores: np.ndarray, grades: np.ndarray, k: int = NDCG_AT, seed: int = 0) -> float:
    """nDCG@k with gains 2^grade − 1 (the held-out paper outweighs a collaborator's three to one); ties in
    the scores broken at random (`seed`), as the fine benchmark does (fine.py). NaN without a graded paper."""
    scores, grades = np.asarray(scores, dtype=np.float64), np.asarray(grades, dtype=np.float64)
    gains = 2.0 ** grades - 1.0
    k = min(k, len(scores))
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    order = np.lexsort((np.random.default_rng(seed).random(len(scores)), -scores))[:k]
    ideal = float((np.sort(gains)[::-1][:k] * discounts).sum())
    return float((gains[order] * discounts).sum()) / ideal if ideal > 0 else float("nan")


def paper_item(paper, key: str):
    """A corpus paper as a library item with its creators split as a Zotero export does."""
    from recommender.features.authors import split_name
    from recommender.items import Creator, LibraryItem

    creators = tuple(Creator(last=family, first=given) for given, family in map(split_name, paper.authors))
    return LibraryItem(key=key, title=paper.title, abstract=paper.abstract or "", creators=creators)
