"""recommend(): library items + corpus → ranked recommendations with their reasons."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from recommender.errors import EmptyLibraryError
from recommender.features import Representation, make_representation
from recommender.items import LibraryItem, Paper, Reason, Recommendation
from recommender.scoring.aggregation import DEFAULT_AGGREGATION, ProfileScores, aggregate
from recommender.text import doi_key, title_key, url_key

log = logging.getLogger(__name__)

DEFAULT_TOP_N = 20


class Recommender:
    """Corpus features computed once; then any number of libraries scored against them.

    Parameters
    ----------
    corpus : the candidate papers, in a fixed order.
    representation : a representation name ("tfidf") or an unfitted Representation.
    aggregation : how item similarities make a paper's score ("max", "mean", "top3", …).
    model : a trained collaborative.CollaborativeModel; when given, scores are the hybrid
        (content blended with collaborative), and the reasons stay the content reasons.
    fusion : a scoring.fusion.Fusion; when given, it makes the scores (content topK fused with
        its other signals, its own collaborative model included) and `model` is not used.
    """

    def __init__(
        self,
        corpus: Sequence[Paper],
        *,
        representation: str | Representation = "tfidf",
        aggregation: str = DEFAULT_AGGREGATION,
        model=None,
        fusion=None,
    ) -> None:
        if not corpus:
            raise ValueError("the corpus has no papers")
        self.corpus = list(corpus)
        self.aggregation = aggregation
        if isinstance(representation, str):
            representation = make_representation(representation)
        self.representation = representation.fit([paper.text for paper in self.corpus])
        self.corpus_rows = self.representation.transform([paper.text for paper in self.corpus])
        self.title_only = sum(paper.abstract is None for paper in self.corpus)
        if fusion is None and getattr(model, "is_fusion", False):
            fusion, model = model, None
        self.model = None if fusion is not None else model
        self.fusion = fusion
        self._corpus_factors = self.model.item_factors([paper.text for paper in self.corpus]) if self.model else None
        self._corpus_keys = CorpusKeys(self.corpus)

    def profile_scores(self, profile: Sequence[LibraryItem]) -> ProfileScores:
        """Aggregated content scores of every corpus paper for these library items."""
        rows = self.representation.transform([item.text for item in profile])
        return aggregate(rows, self.corpus_rows, self.aggregation)

    def recommend(
        self,
        library: Sequence[LibraryItem],
        *,
        top_n: int = DEFAULT_TOP_N,
        profile: Sequence[LibraryItem] | None = None,
    ) -> list[Recommendation]:
        """Rank the corpus for one user.

        `profile` (default: the whole library) builds the scores, e.g. one collection;
        papers anywhere in `library` are never recommended. `top_n=0` keeps every paper.
        """
        profile_items = [item for item in (library if profile is None else profile) if item.text.strip()]
        if not profile_items:
            raise EmptyLibraryError("the library has no item with a title or abstract to learn from")
        scored = self.profile_scores(profile_items)
        scores = scored.scores
        owned = self._corpus_keys.owned(library)
        if self.fusion is not None:
            scores = self.fusion.scores(self, [item.text for item in profile_items], scores, owned)
        elif self.model is not None:
            from recommender.scoring.blend import hybrid_scores

            scores = hybrid_scores(scores, [item.text for item in profile_items], self._corpus_factors, self.model)
        order = np.lexsort((np.arange(len(self.corpus)), -scores))
        order = order[~owned[order]]
        if top_n:
            order = order[:top_n]
        return [
            Recommendation(
                paper=self.corpus[index],
                score=float(scores[index]),
                reasons=_reasons(scored, index, profile_items),
                rank=rank,
            )
            for rank, index in enumerate(order, start=1)
        ]


def _reasons(scored: ProfileScores, index: int, profile: Sequence[LibraryItem]) -> tuple[Reason, ...]:
    reasons = []
    for row, similarity in zip(scored.reason_rows[index], scored.reason_similarities[index]):
        if similarity > 0:
            item = profile[int(row)]
            reasons.append(Reason(item_key=item.key, item_title=item.title, similarity=float(similarity)))
    return tuple(reasons)


class CorpusKeys:
    """The corpus's DOI, URL and title keys, computed once, so "which papers does this user
    already own" costs O(library), not O(corpus), per user."""

    def __init__(self, corpus: Sequence[Paper]) -> None:
        self.size = len(corpus)
        self.by_doi: dict[str, list[int]] = {}
        self.by_url: dict[str, list[int]] = {}
        self.by_title: dict[str, list[int]] = {}
        for index, paper in enumerate(corpus):
            if paper.doi:
                self.by_doi.setdefault(doi_key(paper.doi), []).append(index)
            if paper.url:
                self.by_url.setdefault(url_key(paper.url), []).append(index)
            if not paper.title_derived:
                self.by_title.setdefault(title_key(paper.title), []).append(index)

    def owned(self, library: Sequence[LibraryItem]) -> np.ndarray:
        """True for corpus papers the user already has: same DOI, URL or normalised title."""
        mask = np.zeros(self.size, dtype=bool)
        dois = {doi_key(item.doi) for item in library if item.doi}
        urls = {url_key(item.url) for item in library if item.url}
        titles = {title_key(item.title) for item in library if item.title} - {""}
        for keys, index in ((dois, self.by_doi), (urls, self.by_url), (titles, self.by_title)):
            for key in keys & index.keys():
                mask[index[key]] = True
        return mask


def owned_mask(library: Sequence[LibraryItem], corpus: Sequence[Paper]) -> np.ndarray:
    """True for corpus papers the user already has: same DOI, URL or normalised title."""
    return CorpusKeys(corpus).owned(library)


def recommend(
    library: Sequence[LibraryItem],
    corpus: Sequence[Paper],
    *,
    top_n: int = DEFAULT_TOP_N,
    aggregation: str = DEFAULT_AGGREGATION,
    representation: str | Representation = "tfidf",
    profile: Sequence[LibraryItem] | None = None,
    model=None,
    fusion=None,
) -> list[Recommendation]:
    """Rank `corpus` for the user whose library is `library` (the one entry point)."""
    recommender = Recommender(corpus, representation=representation, aggregation=aggregation, model=model,
                              fusion=fusion)
    return recommender.recommend(library, top_n=top_n, profile=profile)
