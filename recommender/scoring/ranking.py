"""The Recommender: library items + corpus → ranked recommendations with their reasons.

The one scoring path: the library's rows give each paper its content topK (aggregation.py); the
fused scoring adds the tf-idf topK, the per-user linear model (learned.py) and the collaborative
score, each a function of plain arrays, summed by fusion.py; the reasons are the content topK's.
Papers by the library's authors then gain a capped step (authors.py), named in `author_reasons`.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Sequence
from contextlib import nullcontext

import numpy as np

from recommender.errors import EmptyLibraryError, InputError, SettingError
from recommender.features import Representation, make_representation
from recommender.features.base import cosine, is_dense, stacked
from recommender.items import LibraryItem, Paper, Reason, Recommendation
from recommender.scoring.adapter import adapted, adapter_beta
from recommender.scoring.aggregation import (
    TopValues,
    kept,
    merge_top_values,
    parse_aggregation,
    reasons_for,
    sparse_top_values,
    top_values,
)
from recommender.scoring.authors import AuthorMatches, match_authors, with_authors
from recommender.scoring.background import background_tag, beside
from recommender.scoring.caches import NO_CACHES, ScoringCaches
from recommender.scoring.corpus_side import corpus_authors, corpus_factors, factors_name, lexical_corpus, tagged
from recommender.scoring.evidence import combined, evidence_weights
from recommender.scoring.facets import interest_name, interest_order
from recommender.scoring.fusion import (
    DEFAULT_SCORING,
    FINE_TOP,
    LEARNED,
    FusionWeights,
    cascade,
    fine_weights,
    fuse,
    library_fine_weights,
    scoring_weights,
)
from recommender.scoring.learned import SETTINGS
from recommender.scoring.match import CALIBRATIONS
from recommender.scoring.owned import CorpusKeys
from recommender.scoring.recency import recency_weights, scaled_rows
from recommender.scoring.signals import SHIPPED_NEGATIVES, UserInputs, needs_factors, user_signals, wanted_signals
from recommender.scoring.steering import Steering, scale_for, steer_reasons, steered_scores
from recommender.scoring.unread import Unread, unread_mask

log = logging.getLogger(__name__)

DEFAULT_TOP_N = 20


class Ranked(list):
    """A ranked list of Recommendations and the library interests with no paper good enough for a seat in
    this corpus (facets.py), for the list's header."""

    def __init__(self, recs=(), unserved: tuple[str, ...] = ()):
        super().__init__(recs)
        self.unserved = tuple(unserved)


class Recommender:
    """Corpus features computed once; then any number of libraries scored against them.

    Keyword parameters
    ------------------
    representation : "tfidf", "dense" or an unfitted Representation.
    aggregation : "learned" (the fused scoring, the default), "max", "mean" or "topK" such as "top3".
    model : a dense collaborative model (recommender/collaborative/dense_model.py) or None for content only.
    weights : the fused signals' weights; default: those stored in the model, else the content-only ones.
    fine_order : for the fused scoring, order its FINE_TOP best papers by the fine fusion (fusion.cascade,
        fusion.fine_weights); False keeps the fused order (as before issue 25).
    corpus_rows, corpus_keys : the rows and identity keys a prepared corpus already holds for these papers.
    interests : give each library interest its share of the list (facets.py); False keeps the score order.
    background : papers a small corpus is scored beside and never shows (background.py: the bundled list); a
        corpus as large as the background ignores it.

    Only scoring parameters and the corpus's own data: what a call may reuse between runs (the kept
    library state, arrays derived from the corpus, whether to keep the encoder loaded) is handed to each
    `recommend` call as a `ScoringCaches` (recommender/scoring/caches.py).
    """

    def __init__(
        self,
        corpus: Sequence[Paper],
        *,
        representation: str | Representation = "tfidf",
        aggregation: str = DEFAULT_SCORING,
        model=None,
        weights: FusionWeights | None = None,
        corpus_rows=None,
        corpus_keys: CorpusKeys | None = None,
        interests: bool = True,
        fine_order: bool = True,
        background: Sequence[Paper] = (),
    ) -> None:
        if not corpus:
            raise InputError("the corpus has no papers")
        self.corpus = list(corpus)  # the papers a ranking shows
        self._corpus_keys = corpus_keys if corpus_keys is not None else CorpusKeys(self.corpus)
        extra = beside(self.corpus, self._corpus_keys, background)
        # What is scored: the corpus, then the background papers beside it (none for a large corpus).
        self._papers = self.corpus + extra
        self.background_tag = background_tag(extra)
        if isinstance(representation, str):
            representation = make_representation(representation)
        self.representation = representation.fit([paper.text for paper in self._papers])
        if corpus_rows is None:
            corpus_rows = self.representation.transform([paper.text for paper in self.corpus])
        self.corpus_rows = corpus_rows
        self._rows = (stacked(corpus_rows, self.representation.transform([paper.text for paper in extra]))
                      if extra else corpus_rows)
        self._scored_keys = CorpusKeys(self._papers) if extra else self._corpus_keys
        self.dense = dense = is_dense(corpus_rows)  # MiniLM rows, not tf-idf or hybrid (features/base.py)
        if model is not None and not dense:
            raise SettingError("the collaborative model needs dense features (--features dense)")
        if model is not None and weights is None and not model.card.fusion_weights:
            raise SettingError("this collaborative model has no fusion weights (a tf-idf model from an older "
                             "zotrec?): train a new one with `zotrec train`")
        self.aggregation, self.model = aggregation, model
        self.base, self.weights = scoring_weights(aggregation, model, dense)
        if weights is not None:
            self.weights = weights
        self.fine = fine_weights(model) if fine_order and aggregation == LEARNED and self.weights is not None else {}
        parse_aggregation(self.base)
        self.beta = adapter_beta(model)
        self.title_only = sum(paper.abstract is None for paper in self.corpus)
        self.interests = interests
        self._lexical = self._factors = self._adapted = None  # corpus-side arrays, made on first use
        self._authors = None  # the corpus authors' name keys, made on first use
        self._unread_papers = None  # bool per paper: MiniLM cannot read it (scoring/unread.py), made on first use

    @property
    def corpus_keys(self) -> CorpusKeys:
        """The corpus's DOI, URL and title keys (owned.CorpusKeys)."""
        return self._corpus_keys

    def recommend(
        self,
        library: Sequence[LibraryItem],
        *,
        top_n: int = DEFAULT_TOP_N,
        profile: Sequence[LibraryItem] | None = None,
        steering: Steering | None = None,
        caches: ScoringCaches = NO_CACHES,
    ) -> list[Recommendation]:
        """Rank the corpus for one user.

        `profile` (default: the whole library) builds the scores, e.g. one collection;
        papers anywhere in `library` are never recommended. `top_n=0` keeps every paper.
        `steering`: prefer / avoid texts and the recency half-life (steering.py); applied after the
        kept library state, so a kept value never holds it. The interests' order does not depend on `top_n`
        (facets.py: every -n shows a prefix of one order). `caches`: what this call may reuse.
        """
        profile_items = [item for item in (library if profile is None else profile) if item.text.strip()]
        if not profile_items:
            raise EmptyLibraryError("the library has no item with a title or abstract to learn from")
        texts = [item.text for item in profile_items]
        owned = self._scored_keys.owned(library)
        hidden = owned.copy()  # what the list never shows: the user's papers and the background
        hidden[len(self.corpus):] = True
        steer_rows, prefer = self._steer_rows(steering), None  # the rows before the encoder may be released
        item_weights = (recency_weights([item.date_added for item in profile_items], steering.half_life_days)
                        if steering is not None and steering.half_life_days is not None else None)
        evidence = evidence_weights([item.item_type for item in profile_items])  # books weigh less (evidence.py)
        kept_state = caches.library_state() if caches.library_state is not None and self.dense else None
        memo = tagged(caches.corpus_memo, self.background_tag)
        with scoring_threads():
            release = None if caches.keep_encoder else self._release
            rows, values = self._content_values(texts, kept_state, release, evidence)
            unread = self._unread_items(texts, memo)
            if unread is not None:  # items MiniLM cannot read are matched on their tf-idf rows (unread.py)
                values = unread.values(rows, self._rows, self.base, combined(item_weights, evidence))
            elif item_weights is not None:  # the kept state holds no recency-weighted values: these are not kept
                weighted = scaled_rows(rows, combined(item_weights, evidence))
                values = top_values(weighted, self._rows, self.base)
            scores = values.scores(self.base)
            if self.weights is not None:
                signals = self.signals(texts, rows, scores, owned, values, item_weights, kept_state, memo)
                scores = fuse(signals, self.weights.shares(list(signals), len(texts)))
                if self.fine:  # the fused score picks the top papers, the fine fusion orders them
                    fine = library_fine_weights(self.fine, self.weights, len(texts))
                    scores = cascade(scores, signals, fine, FINE_TOP, eligible=~owned)
            authors = self._author_matches(library if profile is None else profile, memo)
            scores = with_authors(scores, authors, owned)  # papers by the library's authors, each author capped
            if steer_rows is not None:  # last: what the user asked for in words outweighs what the library implies
                prefer, avoid = self._steer_similarities(steering, steer_rows)
                scores = steered_scores(scores, prefer, avoid, scale_for(self.representation))
        if kept_state is not None:
            kept_state.finish()  # the library state with every signal's values, for the next run
        order = np.lexsort((np.arange(len(self._papers)), -scores))
        order = order[~hidden[order]]
        # Steering texts say which way to lean: quotas by interest would undo that, so they step aside.
        cover = self.interests and steer_rows is None
        # The same order for every top_n (facets.py): the first k of -n N are the first k of -n M. The seats, their
        # bar and the interest each paper serves use the unweighted similarities; only the reasons weigh books less.
        nearest = None if unread is None else functools.partial(unread.reasons, rows, self._rows)
        # a seat needs the weak-list similarity (match.py); unread items' tf-idf reasons are on another scale
        calibration = CALIBRATIONS.get(self.representation.name)
        floor = calibration.low_best if calibration is not None and unread is None else 0.0
        order, interests, unserved = (interest_order(profile_items, rows, self._rows, order, nearest=nearest,
                                                     floor=floor, memo=caches.library_memo)
                                      if cover else (order, None, ()))
        if top_n:
            order = order[:top_n]
        with scoring_threads():
            reason_rows, reason_sims = self._reasons(rows, order, unread, evidence)
            seat_rows, seat_sims = (self._reasons(rows, order, unread, None) if evidence is not None and
                                    interests is not None and len(interests.names) > 1 else (reason_rows, reason_sims))
        return Ranked([
            Recommendation(
                paper=self.corpus[index],
                score=float(scores[index]),
                reasons=_reasons(reason_rows[place], reason_sims[place], profile_items),
                rank=place + 1,
                interest=interest_name(interests, seat_rows[place], seat_sims[place]),
                author_reasons=authors.reasons(index, self.corpus[index]),
                steer_reasons=self._prefer_reasons(steering, prefer, index),
            )
            for place, index in enumerate(order)
        ], unserved)

    def _reasons(self, rows, order: np.ndarray, unread: Unread | None, weights: np.ndarray | None):
        """The chosen papers' best items and similarities, each item's similarities times its weight (None:
        unweighted), on the unread items' mixed similarities when there are any (unread.py)."""
        if unread is not None:
            return unread.reasons(rows, self._rows, order, weights)
        return reasons_for(rows if weights is None else scaled_rows(rows, weights), self._rows, order, self.base)

    def _steer_rows(self, steering: Steering | None):
        """The prefer then avoid texts' rows (None: no text)."""
        if steering is None or not steering.steers:
            return None
        return self.representation.transform([*steering.prefer, *steering.avoid])

    def _prefer_reasons(self, steering: Steering | None, prefer: np.ndarray | None, index: int):
        """The prefer texts paper `index` matches (steering.steer_reasons); () without prefer texts."""
        if prefer is None or not len(prefer):
            return ()
        return steer_reasons(steering.prefer, prefer[:, index], scale_for(self.representation))

    def _steer_similarities(self, steering: Steering, steer_rows) -> tuple[np.ndarray, np.ndarray]:
        """(prefer texts × papers, avoid texts × papers) cosine similarities."""
        similarities = cosine(steer_rows, self._rows).astype(np.float64)
        return similarities[: len(steering.prefer)], similarities[len(steering.prefer):]

    def _content_values(self, texts: list[str], kept_state=None, release=None,
                        evidence: np.ndarray | None = None) -> tuple[np.ndarray, TopValues]:
        """The texts' rows and each paper's best similarities to them, each item's times its `evidence`
        weight (the content topK's values); `release` frees the encoder once the rows are made."""
        if kept_state is not None:
            return kept_state.score(texts, self.representation, self._rows, self.base, release=release,
                                    weights=evidence)
        rows = self.representation.transform(texts)
        if release is not None:
            release()
        return rows, top_values(rows if evidence is None else scaled_rows(rows, evidence), self._rows,
                                self.base)

    def signals(self, texts: list[str], rows: np.ndarray, content: np.ndarray,
                owned: np.ndarray, values: TopValues | None = None,
                item_weights: np.ndarray | None = None, kept_state=None, memo=None) -> dict[str, np.ndarray]:
        """Every signal with a positive weight, in the fused score or in the fine order, for one user: its
        texts, their rows, the content topK scores, the owned mask, (for the fine order's nearest-items
        signals, from the same kept similarities) the content values, and the items' recency weights
        (recency.py; None: all count the same); `kept_state` and `memo` as `recommend`'s caches hold them.
        This gathers the inputs; the arithmetic is signals.user_signals, the evaluation's too."""
        wanted = wanted_signals(self.weights, self.fine)
        beta, factors = self.beta, None  # beta is 0 without a model (adapter.adapter_beta)
        if self.model is not None and needs_factors(wanted, beta):
            factors = self._profile_factors(texts, kept_state)
        inputs = UserInputs(
            content=content, rows=rows, candidates=self._rows, owned=owned, values=values,
            lexical=self._lexical_values(texts, item_weights, kept_state, memo) if "lexical" in wanted else None,
            factors=factors, user_vector=self.model.user_vector if self.model is not None else None,
            candidate_factors=self._corpus_factors(memo) if factors is not None and "collaborative" in wanted else None,
            adapted_candidates=functools.partial(self._adapted_corpus, memo) if beta > 0 else None,
            item_weights=item_weights)
        keep = None
        if kept_state is not None:
            # The rows and factors follow from the texts (which the kept state keys by) and the models named here.
            keys = (SETTINGS, self.beta, factors_name(self.model) if self.beta > 0 else None, np.flatnonzero(owned))
            if item_weights is not None:  # a recency-weighted fit is kept under its own key
                keys += (item_weights,)
            keep = functools.partial(kept_state.kept_value, "learned", keys)
        return user_signals(inputs, self.base, wanted, SHIPPED_NEGATIVES, beta, keep)

    def _author_matches(self, items: Sequence[LibraryItem], memo=None) -> AuthorMatches:
        """The corpus authors who wrote these items (the name index made once per corpus)."""
        if self._authors is None:
            self._authors = corpus_authors(self._papers, memo)
        return match_authors(self._authors, items)

    def _lexical_values(self, texts: list[str], item_weights: np.ndarray | None = None, kept_state=None,
                        memo=None) -> TopValues:
        """tf-idf topK values; with the kept state only texts new since the last run are scored (and
        the corpus's tf-idf rows, scipy's sparse matrices, are not even loaded when there are none)."""
        def lexical():
            return self._lexical_corpus(memo)

        if item_weights is not None:  # recency-weighted values are never kept
            index, corpus_rows = lexical()
            return sparse_top_values(scaled_rows(index.transform(texts), item_weights), corpus_rows, self.base)

        def compute(previous: TopValues | None) -> TopValues:
            start = previous.n_items if previous is not None else 0
            if previous is not None and len(texts) <= start:
                return previous
            index, corpus_rows = lexical()
            new = sparse_top_values(index.transform(texts[start:]), corpus_rows, self.base)
            return new if previous is None else merge_top_values(previous, new, self.base)

        if kept_state is None or parse_aggregation(self.base)[0] == "mean":
            return compute(None)
        return kept_state.signal_values(f"lexical-{self.base}", len(self._papers),
                                        lambda n_items: kept(self.base, n_items), compute)

    def _lexical_corpus(self, memo=None):
        """(the tf-idf index fitted on the corpus, the corpus's tf-idf rows), made once."""
        if self._lexical is None:
            self._lexical = lexical_corpus(self._papers, memo)
        return self._lexical

    def _unread_items(self, texts: list[str], memo=None) -> Unread | None:
        """Which of `texts` and of the corpus MiniLM cannot read, with their tf-idf rows (scoring/unread.py);
        None on tf-idf or hybrid rows (which read every script) or when every text is read."""
        if not self.dense:
            return None
        if self._unread_papers is None:  # a regular-expression search per paper: milliseconds, nothing to keep
            self._unread_papers = unread_mask([paper.text for paper in self._papers])
        items = unread_mask(texts)
        if not items.any() and not self._unread_papers.any():
            return None
        index, corpus_rows = self._lexical_corpus(memo)
        return Unread(items, self._unread_papers, index.transform(texts), corpus_rows)

    def _profile_factors(self, texts: list[str], kept_state=None) -> np.ndarray:
        """The user's items' predicted factors; with the kept state only new texts are mapped."""
        if kept_state is None:
            return self.model.item_factors(texts)
        return kept_state.item_factors(self.model, texts)

    def _corpus_factors(self, memo=None) -> np.ndarray:
        if self._factors is None:
            self._factors = corpus_factors(self._papers, self.model, memo)
        return self._factors

    def _adapted_corpus(self, memo=None) -> np.ndarray:
        """The corpus rows in the adapter's space, made once (a batch scores many users)."""
        if self._adapted is None:
            self._adapted = adapted(self._rows, self._corpus_factors(memo), self.beta)
        return self._adapted

    def _release(self) -> None:
        """Free a neural encoder's session before scoring, so its buffers never add to the scoring peak."""
        for part in (self.representation, getattr(self.representation, "dense", None)):
            release = getattr(part, "release_model", None)
            if release is not None:
                release()


_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def scoring_threads():
    """One BLAS thread for the similarity products when the machine is busy (1-minute load at least
    its core count): there a second thread only waits (docs/performance.md). A thread count the user
    set is left alone."""
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


def _reasons(rows: np.ndarray, similarities: np.ndarray, profile: Sequence[LibraryItem]) -> tuple[Reason, ...]:
    reasons = []
    for row, similarity in zip(rows, similarities):
        if similarity > 0:
            item = profile[int(row)]
            reasons.append(Reason(item_key=item.key, item_title=item.title, similarity=float(similarity)))
    return tuple(reasons)
