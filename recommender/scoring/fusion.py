"""Score-level fusion: each signal (dense topK, tf-idf topK, the per-user linear model, the
collaborative score) is ranked on its own, standardised per user over the candidates, then summed
with weights chosen on validation.

Fusing scores rather than similarities keeps each signal's own aggregation: averaging dense and
tf-idf cosines before the topK (features/hybrid.py) gained nothing in docs/evaluation-features.md,
while this form is what gained on CiteULike a, t and the ICML leave-out (docs/evaluation.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from recommender.scoring.adapter import AdaptedRows, adapted, adapter_beta
from recommender.scoring.blend import standardise

log = logging.getLogger(__name__)

WEIGHT_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
LEARNED = "learned"  # the aggregation name of the fused form: topK + tf-idf topK + the per-user linear model
LEARNED_BASE = "top5"  # the topK inside it (also the source of the reasons)
DEFAULT_SCORING = LEARNED  # chosen on CiteULike a, t and the ICML leave-out (docs/evaluation.md)


@dataclass(frozen=True)
class FusionWeights:
    """Weights of the signals besides the main content score (which has weight 1 − the rest).

    lexical : tf-idf topK.   learned : the per-user linear model.   collaborative : the ALS part.
    """

    lexical: float = 0.0
    learned: float = 0.0
    collaborative: float = 0.0


def default_weights(model=None) -> FusionWeights:
    """The weights stored in a dense collaborative model (chosen with it on validation), else the
    content-only weights measured in docs/evaluation.md."""
    stored = (getattr(model, "provenance", None) or {}).get("fusion_weights")
    if stored:
        return FusionWeights(**{name: float(stored.get(name, 0.0)) for name in ("lexical", "learned", "collaborative")})
    return CONTENT_WEIGHTS


def scoring_plan(aggregation: str, model=None, features: str = "dense") -> tuple[str, object]:
    """(the topK the Recommender aggregates with, what to pass as its `model`): a Fusion for
    "learned" or a dense collaborative model, the old tf-idf model (or None) as it is otherwise.
    On tf-idf features "learned" is plain topK (its extra signals are the dense model and tf-idf)."""
    dense_model = getattr(model, "encoder_id", None) is not None
    if aggregation == LEARNED and features == "tfidf" and not dense_model:
        return LEARNED_BASE, model
    if aggregation != LEARNED and not dense_model:
        return aggregation, model
    weights = default_weights(model if dense_model else None)
    if aggregation != LEARNED:  # topK + the collaborative part only
        total = max(weights.collaborative + (1.0 - weights.lexical - weights.learned - weights.collaborative), 1e-9)
        weights = FusionWeights(collaborative=weights.collaborative / total)
        return aggregation, Fusion(weights, model)
    if not dense_model:
        weights = FusionWeights(lexical=weights.lexical, learned=weights.learned)
    return LEARNED_BASE, Fusion(weights, model if dense_model else None)


def fuse(signals: Mapping[str, np.ndarray], weights: Mapping[str, float]) -> np.ndarray:
    """Σ weight·z(signal) over the signals with a weight > 0 (row by row for matrices)."""
    total = None
    for name, weight in weights.items():
        if weight <= 0 or name not in signals:
            continue
        part = weight * standardise(signals[name])
        total = part if total is None else total + part
    if total is None:
        raise ValueError("no signal has a positive weight")
    return total


def stepwise_weights(
    quality: Callable[[dict[str, float]], float], names: Sequence[str], base: str,
    grid: Sequence[float] = WEIGHT_GRID,
) -> dict[str, float]:
    """Add one signal at a time to `base` with the validation-best share (ties: the smaller share).

    With shares s_1…s_n chosen in turn, signal i ends with s_i·Π_{j>i}(1 − s_j), the base with
    Π(1 − s_j): a greedy path, n·|grid| evaluations instead of |grid|^n.
    """
    weights = {base: 1.0}
    for name in names:
        results = {}
        for share in grid:
            trial = {key: value * (1.0 - share) for key, value in weights.items()} | {name: share}
            results[share] = quality(trial)
        best = max(results, key=lambda share: (round(results[share], 5), -share))
        log.info("fusion %s: %s → %.1f", name, ", ".join(f"{s:.1f}:{q:.4f}" for s, q in results.items()), best)
        weights = {key: value * (1.0 - best) for key, value in weights.items()} | {name: best}
    return weights


# Without a collaborative model: the content-only shares chosen in the shipped model's validation run (citeulike-a,
# 20 % cold items, seed 7: tf-idf share 0.1, then the linear model's share 0.7), docs/evaluation.md.
CONTENT_WEIGHTS = FusionWeights(lexical=0.03, learned=0.7)


class Fusion:
    """The fused score at run time: content topK (the Recommender's own), plus tf-idf topK, the
    per-user linear model and the collaborative score, each z-scored, weighted by `weights`.

    The reasons stay the content topK's ("because you saved …"): every signal but the
    collaborative one is a similarity to the user's own items, and the weights keep content first.
    """

    is_fusion = True  # Recommender(model=Fusion(...)) takes it as its fusion (so BatchRequest.model can carry it)

    def __init__(self, weights: FusionWeights, model=None, lexical_aggregation: str | None = None) -> None:
        self.weights = weights
        self.model = model
        self.lexical_aggregation = lexical_aggregation
        self._lexical = None  # (tf-idf representation fitted on the corpus, corpus rows)
        self._corpus_factors = None
        self._corpus_adapted = None

    def signals(self, recommender, profile_texts: Sequence[str], content: np.ndarray,
                owned: np.ndarray, profile_rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Every signal with a positive weight, for one user (`profile_rows`: the texts' content rows,
        when the caller has them, so they are not looked up again)."""
        parts = {"content": content}
        if self.weights.lexical > 0:
            parts["lexical"] = self._lexical_scores(recommender, profile_texts)
        profile_factors = None
        if self.weights.learned > 0 and isinstance(recommender.corpus_rows, np.ndarray):
            from recommender.scoring.learned import linear_user_scores

            if profile_rows is None:
                profile_rows = recommender.representation.transform(list(profile_texts))
            library, corpus = np.asarray(profile_rows), recommender.corpus_rows
            beta = adapter_beta(self.model) if self.model is not None else 0.0
            if beta > 0:  # the linear model in the collaborative adapter's space (scoring/adapter.py)
                profile_factors = self._profile_factors(recommender, profile_texts)
                library, corpus = AdaptedRows(library, profile_factors, beta), self._adapted_corpus(recommender, beta)
            parts["learned"] = linear_user_scores(library, corpus, corpus, exclude=np.flatnonzero(owned),
                                                  kept=getattr(recommender, "incremental", None))
        if self.weights.collaborative > 0 and self.model is not None:
            if profile_factors is None:
                profile_factors = self._profile_factors(recommender, profile_texts)
            parts["collaborative"] = self._factors(recommender) @ self.model.user_vector(profile_factors)
        return parts

    def _profile_factors(self, recommender, profile_texts: Sequence[str]) -> np.ndarray:
        """The user's items' predicted factors; with the kept library state only new texts are mapped."""
        state = getattr(recommender, "incremental", None)
        if state is None:
            return self.model.item_factors(profile_texts)
        return state.item_factors(self.model, profile_texts)

    def _factors(self, recommender) -> np.ndarray:
        if self._corpus_factors is None:
            self._corpus_factors = corpus_factors(recommender, self.model)
        return self._corpus_factors

    def _adapted_corpus(self, recommender, beta: float) -> np.ndarray:
        """The corpus rows in the adapter's space, made once per Fusion (a batch scores many users)."""
        if self._corpus_adapted is None:
            self._corpus_adapted = adapted(recommender.corpus_rows, self._factors(recommender), beta)
        return self._corpus_adapted

    def scores(self, recommender, profile_texts: Sequence[str], content: np.ndarray, owned: np.ndarray,
               profile_rows: np.ndarray | None = None) -> np.ndarray:
        parts = self.signals(recommender, profile_texts, content, owned, profile_rows)
        weights = {"lexical": self.weights.lexical, "learned": self.weights.learned,
                   "collaborative": self.weights.collaborative}
        weights = {name: weight for name, weight in weights.items() if name in parts}
        weights["content"] = max(1.0 - sum(weights.values()), 0.0)
        return fuse(parts, weights)

    def _lexical_scores(self, recommender, profile_texts: Sequence[str]) -> np.ndarray:
        """tf-idf topK, values only (recommender.features.lexical: TfidfRepresentation's rows
        without scikit-learn); the corpus side comes from the prepared corpus when there is one, and
        the last run's values from the kept library state (only new items are scored)."""
        from recommender.scoring.aggregation import (
            kept,
            merge_top_values,
            parse_aggregation,
            sparse_top_values,
        )

        if self._lexical is None:
            self._lexical = lexical_corpus(recommender)
        index, rows = self._lexical
        aggregation = self.lexical_aggregation or recommender.aggregation
        texts = list(profile_texts)

        def compute(previous):
            start = previous.n_items if previous is not None else 0
            new = sparse_top_values(index.transform(texts[start:]), rows, aggregation) if len(texts) > start else None
            return new if previous is None else merge_top_values(previous, new, aggregation)

        state = getattr(recommender, "incremental", None)
        if state is None or parse_aggregation(aggregation)[0] == "mean":
            return compute(None).scores(aggregation)
        values = state.signal_values(f"lexical-{aggregation}", rows.shape[0],
                                     lambda n_items: kept(aggregation, n_items), compute)
        return values.scores(aggregation)


def corpus_factors(recommender, model) -> np.ndarray:
    """The corpus papers' predicted collaborative factors: kept with the prepared corpus (one file per
    model) when there is one, else from the model's own cache."""
    from recommender.scoring.prepared import factors_name

    def build() -> dict[str, np.ndarray]:
        return {"factors": model.item_factors([paper.text for paper in recommender.corpus])}

    extra, name = getattr(recommender, "corpus_extra", None), factors_name(model)
    if extra is None or name is None:
        return build()["factors"]
    return extra(name, build)["factors"]


def lexical_corpus(recommender):
    """(LexicalIndex fitted on the corpus, the corpus's tf-idf rows): from the recommender's prepared
    corpus (`corpus_extra`, recommender/scoring/prepared.py) when it has one, else fitted now."""
    from scipy import sparse

    from recommender.features.lexical import N_FEATURES, LexicalIndex

    texts = [paper.text for paper in recommender.corpus]

    def build() -> dict[str, np.ndarray]:
        index = LexicalIndex.fit(texts)
        rows = index.transform(texts)
        return {**index.to_arrays(), "stop_words": np.array(sorted(index.stop_words)),
                "data": rows.data, "indices": rows.indices, "indptr": rows.indptr}

    extra = getattr(recommender, "corpus_extra", None)
    arrays = extra("lexical", build) if extra is not None else build()
    index = LexicalIndex.from_arrays(arrays, arrays["stop_words"].tolist())
    rows = sparse.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=(len(texts), N_FEATURES))
    return index, rows
