"""recommend(): library items + corpus → ranked recommendations with their reasons."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from contextlib import nullcontext

import numpy as np

from recommender.errors import EmptyLibraryError
from recommender.features import Representation, make_representation
from recommender.items import LibraryItem, Paper, Reason, Recommendation
from recommender.scoring.aggregation import (
    DEFAULT_AGGREGATION,
    ProfileScores,
    aggregate,
    reasons_for,
    top_values,
)
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
    corpus_extra : `name, build → arrays`, the prepared corpus's store for what a signal derives from
        the corpus (prepared.prepared_extra); None: derived in this process.
    """

    release_encoder = True  # free a neural encoder before scoring (batch scoring keeps it for the next user)

    def __init__(
        self,
        corpus: Sequence[Paper],
        *,
        representation: str | Representation = "tfidf",
        aggregation: str = DEFAULT_AGGREGATION,
        model=None,
        corpus_rows=None,
        corpus_keys: CorpusKeys | None = None,
        incremental=None,
        fusion=None,
        corpus_extra=None,
    ) -> None:
        if not corpus:
            raise ValueError("the corpus has no papers")
        self.corpus = list(corpus)
        self.aggregation = aggregation
        if isinstance(representation, str):
            representation = make_representation(representation)
        self.representation = representation.fit([paper.text for paper in self.corpus])
        if corpus_rows is None:  # else: the rows this representation gave these papers before (prepared.py)
            corpus_rows = self.representation.transform([paper.text for paper in self.corpus])
        self.corpus_rows = corpus_rows
        self.title_only = sum(paper.abstract is None for paper in self.corpus)
        if fusion is None and getattr(model, "is_fusion", False):
            fusion, model = model, None
        self.model = None if fusion is not None else model
        self.fusion = fusion
        self._corpus_factors = self.model.item_factors([paper.text for paper in self.corpus]) if self.model else None
        self._corpus_keys = corpus_keys if corpus_keys is not None else CorpusKeys(self.corpus)
        # an incremental.IncrementalScorer: the last run's rows and top-K values (dense rows only)
        self.incremental = incremental if isinstance(self.corpus_rows, np.ndarray) else None
        self.corpus_extra = corpus_extra

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
        texts = [item.text for item in profile_items]
        with scoring_threads():
            if self.incremental is not None:
                release = (lambda: _release_encoder(self.representation)) if self.release_encoder else None
                rows, values = self.incremental.score(texts, self.representation, self.corpus_rows,
                                                      self.aggregation, release=release)
            else:
                rows = self.representation.transform(texts)
                if self.release_encoder:
                    _release_encoder(self.representation)
                values = top_values(rows, self.corpus_rows, self.aggregation)
            scores = values.scores(self.aggregation)
        owned = self._corpus_keys.owned(library)
        if self.fusion is not None:
            scores = self.fusion.scores(self, texts, scores, owned, profile_rows=rows)
        if self.incremental is not None:
            self.incremental.finish()  # the library state with every signal's values, for the next run
        elif self.model is not None:
            from recommender.scoring.blend import hybrid_scores

            scores = hybrid_scores(scores, [item.text for item in profile_items], self._corpus_factors, self.model)
        order = np.lexsort((np.arange(len(self.corpus)), -scores))
        order = order[~owned[order]]
        if top_n:
            order = order[:top_n]
        with scoring_threads():
            reason_rows, reason_sims = reasons_for(rows, self.corpus_rows, order, self.aggregation)
        return [
            Recommendation(
                paper=self.corpus[index],
                score=float(scores[index]),
                reasons=_reasons(reason_rows[place], reason_sims[place], profile_items),
                rank=place + 1,
            )
            for place, index in enumerate(order)
        ]


_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def scoring_threads():
    """One BLAS thread for the similarity products when the machine is busy (1-minute load at least
    its core count): there a second thread only waits, and cost 0.2 s of CPU per warm 10k run for no
    wall gain (docs/benchmarks-targets.md). A thread count the user set is left alone."""
    if any(os.environ.get(name) for name in _THREAD_VARIABLES):
        return nullcontext()
    try:
        busy = os.getloadavg()[0] >= (os.cpu_count() or 1)
    except OSError:
        busy = False
    if not busy:
        return nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _release_encoder(representation) -> None:
    """Free a neural encoder's session before scoring, so its buffers never add to the scoring peak."""
    for part in (representation, getattr(representation, "dense", None)):
        release = getattr(part, "release_model", None)
        if release is not None:
            release()


def _reasons(rows: np.ndarray, similarities: np.ndarray, profile: Sequence[LibraryItem]) -> tuple[Reason, ...]:
    reasons = []
    for row, similarity in zip(rows, similarities):
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

    def to_json(self) -> dict:
        return {"size": self.size, "doi": self.by_doi, "url": self.by_url, "title": self.by_title}

    @classmethod
    def from_json(cls, data: dict) -> CorpusKeys:
        keys = cls([])
        keys.size, keys.by_doi, keys.by_url, keys.by_title = data["size"], data["doi"], data["url"], data["title"]
        return keys

    def owned(self, library: Sequence[LibraryItem]) -> np.ndarray:
        """True for corpus papers the user already has: same DOI, URL or normalised title."""
        mask = np.zeros(self.size, dtype=bool)
        dois = {doi_key(item.doi) for item in library if item.doi}
        urls = {url_key(item.url) for item in library if item.url}
        titles = {fast_title_key(item.title) for item in library if item.title} - {""}
        for keys, index in ((dois, self.by_doi), (urls, self.by_url), (titles, self.by_title)):
            for key in keys & index.keys():
                mask[index[key]] = True
        return mask


_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def fast_title_key(title: str) -> str:
    """recommender.text.title_key, without its clean-up passes for plain ASCII titles with no TeX
    (there they change nothing a key keeps): a 10,000-item library's keys in a few ms."""
    if title.isascii() and "\\" not in title and "$" not in title and "<" not in title:
        return _NON_ALNUM.sub("", title.lower())
    return title_key(title)


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
