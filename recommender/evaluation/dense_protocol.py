"""The item-cold protocol of protocol.py on dense features: every peer rule and zotrec's fused score
on the same embeddings, the same users and the same folds.

zotrec's score is a fusion (scoring/fusion.py) of: dense topK (the reasons' source), tf-idf topK,
the per-user linear model (scoring/learned.py) and the dense collaborative part (collaborative/
dense_model.py, user folded in from text). Its weights are chosen on a cold validation split of the
fold's training items; test items never take part in a choice.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from recommender.collaborative.datasets import InteractionData
from recommender.collaborative.dense_model import (
    DenseCollaborativeModel,
    fit_dense_map,
    knn_factors,
    train_dense_collaborative,
)
from recommender.collaborative.model import ALSSettings, TextFeatures
from recommender.evaluation.protocol import (
    CROSS_FIT_PARTS,
    VALIDATION_FRACTION,
    VALIDATION_SEED,
    FoldResult,
    _means,
    ranking_metrics,
    without_items,
)
from recommender.scoring.adapter import ADAPTER_BETA
from recommender.scoring.fusion import fuse, stepwise_weights
from recommender.scoring.learned import linear_user_scores

log = logging.getLogger(__name__)

DENSE_AGGREGATIONS = ("max", "mean", "top3", "top5", "top10")
FUSED_SIGNALS = ("lexical", "learned", "collaborative")


@dataclass
class DenseFold:
    """One split on dense features (nothing here reads a held-out item's saves except `relevant`)."""

    test_items: np.ndarray
    train_items: np.ndarray
    users: np.ndarray
    relevant: np.ndarray
    positions: list[np.ndarray]
    train_vectors: np.ndarray
    test_vectors: np.ndarray
    dense_similarity: np.ndarray  # (train, test)
    lexical_similarity: np.ndarray  # (train, test) tf-idf cosine
    model: DenseCollaborativeModel
    user_factors: np.ndarray
    test_factors: np.ndarray
    train_factors_from_text: np.ndarray


def prepare_dense_fold(data: InteractionData, vectors: np.ndarray, held_out: np.ndarray, settings: ALSSettings,
                       encoder_id: str, ignored: np.ndarray | None = None) -> DenseFold:
    """Train ALS + the dense map without `held_out` (and `ignored`); set up scoring of `held_out`."""
    excluded = held_out if ignored is None else np.union1d(held_out, ignored)
    train_items = np.setdiff1d(np.arange(data.n_items), excluded)
    train_matrix = without_items(data.interactions, excluded)
    model = train_dense_collaborative(train_matrix, vectors, encoder_id, settings)
    features = TextFeatures(settings.n_features, settings.ngram_range).fit([data.texts[i] for i in train_items])
    rows = features.transform(data.texts)
    held_saves = data.interactions[:, held_out]
    users = np.flatnonzero((held_saves.getnnz(axis=1) > 0) & (train_matrix.getnnz(axis=1) > 0))
    position = np.full(data.n_items, -1)
    position[train_items] = np.arange(len(train_items))
    return DenseFold(
        test_items=held_out, train_items=train_items, users=users,
        relevant=held_saves[users].toarray() > 0,
        positions=[position[train_matrix[user].indices] for user in users],
        train_vectors=vectors[train_items], test_vectors=vectors[held_out],
        dense_similarity=vectors[train_items] @ vectors[held_out].T,
        lexical_similarity=(rows[train_items] @ rows[held_out].T).toarray().astype(np.float32),
        model=model,
        user_factors=model.training_user_factors[users],
        test_factors=model.factors_for_vectors(vectors[held_out]),
        train_factors_from_text=_cross_fitted(model, vectors, train_items, train_matrix),
    )


def _cross_fitted(model, vectors, train_items, train_matrix) -> np.ndarray:
    """Each training item's factor from a map that never saw it (as for a Zotero user's item):
    kNN leaves the item itself out of its neighbours; ridge is cross-fitted in 3 parts."""
    targets = model.training_item_factors[train_items]
    saved = np.asarray(train_matrix.getnnz(axis=0))[train_items] > 0
    if model.map_kind == "knn":
        predicted = model.factors_for_vectors(vectors[train_items[~saved]]) if (~saved).any() else None
        out = np.zeros_like(targets, dtype=np.float32)
        if predicted is not None:
            out[~saved] = predicted
        # the model's neighbours are the saved items in id order, so saved item i is neighbour i
        out[saved] = knn_factors(vectors[train_items[saved]], model.neighbour_vectors, model.neighbour_factors,
                                 self_rows=np.arange(int(saved.sum())))
        return out
    part = np.random.default_rng(VALIDATION_SEED).integers(0, CROSS_FIT_PARTS, len(train_items))
    predicted = np.zeros_like(targets, dtype=np.float32)
    for p in range(CROSS_FIT_PARTS):
        fit_on = saved & (part != p)
        weights, intercept = fit_dense_map(vectors[train_items[fit_on]], targets[fit_on],
                                           model.settings.map_regularization)
        predicted[part == p] = vectors[train_items[part == p]] @ weights + intercept
    return predicted


def _aggregate(similarity: np.ndarray, positions: list[np.ndarray], aggregation: str) -> np.ndarray:
    from recommender.evaluation.peers import aggregate_similarities

    return np.vstack([aggregate_similarities(similarity[p], aggregation) for p in positions]).astype(np.float32)


def learned_scores(fold: DenseFold, seed: int = 0) -> np.ndarray:
    """zotrec's per-user linear model: negatives sampled from the candidates, as at run time."""
    return np.vstack([linear_user_scores(fold.train_vectors[p], fold.test_vectors, fold.test_vectors, seed=seed + row)
                      for row, p in enumerate(fold.positions)]).astype(np.float32)


def peer_logreg_scores(fold: DenseFold, seed: int = 0) -> np.ndarray:
    """Scholar Inbox's rule: negatives sampled from the training items (not the user's)."""
    return np.vstack([linear_user_scores(fold.train_vectors[p], fold.train_vectors, fold.test_vectors,
                                         seed=seed + row, exclude=p)
                      for row, p in enumerate(fold.positions)]).astype(np.float32)


def peer_svm_scores(fold: DenseFold, sample: np.ndarray) -> np.ndarray:
    """arxiv-sanity-lite: LinearSVC(C=0.01, balanced), the user's items against every other training item."""
    from sklearn.svm import LinearSVC

    out = np.empty((len(sample), len(fold.test_items)), dtype=np.float32)
    for i, row in enumerate(sample):
        labels = np.zeros(len(fold.train_items))
        labels[fold.positions[row]] = 1.0
        svm = LinearSVC(C=0.01, class_weight="balanced", tol=1e-4, max_iter=10_000).fit(fold.train_vectors, labels)
        out[i] = svm.decision_function(fold.test_vectors)
    return out


def folded_user_scores(fold: DenseFold) -> np.ndarray:
    """Dense → ALS with the user folded in from their items' predicted factors."""
    return np.vstack([fold.test_factors @ fold.model.user_vector(fold.train_factors_from_text[p])
                      for p in fold.positions]).astype(np.float32)


def signals(fold: DenseFold, aggregation: str, seed: int = 0) -> dict[str, np.ndarray]:
    """The fused score's inputs for every user of the split."""
    return {"content": _aggregate(fold.dense_similarity, fold.positions, aggregation),
            "lexical": _aggregate(fold.lexical_similarity, fold.positions, aggregation),
            "learned": learned_scores(fold, seed),
            "collaborative": folded_user_scores(fold)}


def recall50(scores: np.ndarray, relevant: np.ndarray) -> float:
    """Mean recall@50 (ties by position; used only to choose weights on validation)."""
    top = np.argpartition(-scores, 50, axis=1)[:, :50]
    return float((np.take_along_axis(relevant, top, axis=1).sum(axis=1) / relevant.sum(axis=1)).mean())


def validation_fold(data, vectors, test_items, settings, encoder_id) -> DenseFold:
    """The cold validation split of the training items (20 %, seed 7); the test items are left out entirely."""
    train_items = np.setdiff1d(np.arange(data.n_items), test_items)
    rng = np.random.default_rng(VALIDATION_SEED)
    validation = np.sort(rng.choice(train_items, size=int(VALIDATION_FRACTION * len(train_items)), replace=False))
    return prepare_dense_fold(data, vectors, validation, settings, encoder_id, ignored=test_items)


def choose_weights(data, vectors, test_items, settings, encoder_id, aggregation,
                   names: tuple[str, ...] = FUSED_SIGNALS, fold: DenseFold | None = None,
                   parts: dict[str, np.ndarray] | None = None) -> dict[str, float]:
    """Fusion weights on a cold validation split of the training items (`fold`: that split, already made;
    `parts`: its signals, already computed)."""
    fold = fold or validation_fold(data, vectors, test_items, settings, encoder_id)
    parts = parts if parts is not None else signals(fold, aggregation)
    return stepwise_weights(lambda w: recall50(fuse(parts, w), fold.relevant), names, "content")


def run_dense_fold(data: InteractionData, vectors: np.ndarray, fold_index: int, test_items: np.ndarray,
                   settings: ALSSettings, encoder_id: str, aggregation: str, svm_users: int,
                   adapter_beta: float = ADAPTER_BETA, sample_only: bool = False) -> FoldResult:
    """Every rule on dense features for one fold, plus zotrec's fused score and its ablations.

    The shipped form fits the linear model in the collaborative adapter's space (`adapter_beta`, as
    `zotrec train` does; 0: the plain embeddings). With `adapter_beta` > 0 the fold also records the
    fusion with the plain linear model and the adapter's full form (evaluation/dense_adapter.py).
    `sample_only`: the test fold's rules on the SVM's sampled users alone, the weights chosen as always.
    """
    from recommender.evaluation.dense_adapter import adapted_fold

    started = time.perf_counter()
    validation = validation_fold(data, vectors, test_items, settings, encoder_id)
    plain_parts = signals(validation, aggregation)

    def chosen(parts: dict[str, np.ndarray]) -> dict[str, float]:
        return choose_weights(data, vectors, test_items, settings, encoder_id, aggregation, fold=validation, parts=parts)

    plain_weights = chosen(plain_parts)
    weights, adapter_weights = plain_weights, {}
    if adapter_beta > 0:
        adapted_parts = signals(adapted_fold(validation, adapter_beta), aggregation)
        weights = chosen({**plain_parts, "learned": adapted_parts["learned"]})
        adapter_weights = chosen(adapted_parts)
        del adapted_parts
    del validation, plain_parts
    fold = prepare_dense_fold(data, vectors, test_items, settings, encoder_id)
    result = FoldResult(fold_index, len(fold.users), len(test_items), blend_weights=weights)
    if adapter_beta > 0:
        result.blend_weights = {**weights, "adapter_beta": adapter_beta, "plain": plain_weights,
                                "adapter": adapter_weights}
    sample = np.sort(np.random.default_rng(fold_index).choice(
        len(fold.users), size=min(svm_users, len(fold.users)), replace=False)).astype(np.int64)
    if sample_only and len(sample):
        fold.users, fold.relevant, fold.user_factors = fold.users[sample], fold.relevant[sample], fold.user_factors[sample]
        fold.positions = [fold.positions[row] for row in sample]
        result.users, sample = len(sample), np.arange(len(sample))

    def record(name: str, scores: np.ndarray) -> None:
        per_user = ranking_metrics(scores, fold.relevant, seed=fold_index)
        result.metrics[name] = _means(per_user)
        if len(sample):
            result.svm_sample[name] = _means(per_user, sample)
        log.info("fold %d %-34s recall@50 %.4f", fold_index, name, result.metrics[name]["recall@50"])

    for name in DENSE_AGGREGATIONS:
        record(f"dense {name}", _aggregate(fold.dense_similarity, fold.positions, name))
    parts = signals(fold, aggregation, seed=fold_index)
    record(f"tf-idf {aggregation}", parts["lexical"])
    record("logreg, sampled negatives (dense)", peer_logreg_scores(fold, seed=fold_index))
    record("zotrec linear model (dense)", parts["learned"])
    record("dense→ALS, ALS user (CTR-like)", fold.user_factors @ fold.test_factors.T)
    record("dense→ALS, text user", parts["collaborative"])
    record("zotrec fused, content only", fuse(parts, {**plain_weights, "collaborative": 0.0}))
    shipped = parts
    if adapter_beta > 0:
        record("zotrec fused, plain linear model", fuse(parts, plain_weights))
        adapted_parts = signals(adapted_fold(fold, adapter_beta), aggregation, seed=fold_index)
        record(f"adapted space {aggregation}", adapted_parts["content"])
        record("zotrec linear model (adapted space)", adapted_parts["learned"])
        record("zotrec fused, adapted space", fuse(adapted_parts, adapter_weights))
        shipped = {**parts, "learned": adapted_parts["learned"]}
    record("zotrec fused (shipped form)", fuse(shipped, weights))
    without_lexical = {**weights, "lexical": 0.0, "content": weights.get("content", 0.0) + weights.get("lexical", 0.0)}
    record("zotrec fused without tf-idf", fuse(shipped, without_lexical))  # the run-time form when lexical is 0
    if svm_users:
        svm = ranking_metrics(peer_svm_scores(fold, sample), fold.relevant[sample], seed=fold_index)
        result.svm_sample["linear SVM (dense)"] = _means(svm)
    result.seconds = round(time.perf_counter() - started, 1)
    return result


def dense_report_rows(data: InteractionData, representation) -> np.ndarray:
    """The dataset's item embeddings (collaborative.dense_model.dataset_vectors), logged."""
    from recommender.collaborative.dense_model import dataset_vectors

    started = time.perf_counter()
    vectors = dataset_vectors(data, representation)
    log.info("%s: %d item embeddings in %.1f s", data.name, len(vectors), time.perf_counter() - started)
    return vectors


__all__ = ["DenseFold", "choose_weights", "prepare_dense_fold", "run_dense_fold", "signals"]


def train_dense_model(data: InteractionData, vectors: np.ndarray, settings: ALSSettings, encoder_id: str,
                      aggregation: str, adapter_beta: float = ADAPTER_BETA) -> DenseCollaborativeModel:
    """The model `zotrec train --features dense` writes (and zotrec ships): fusion weights from a cold
    validation split of 20 % of the items (the linear model in the adapter's space when `adapter_beta`
    > 0, as at run time: scoring/fusion.py), then ALS and the map fitted on all the data."""
    from recommender.evaluation.dense_adapter import adapted_fold

    empty = np.zeros(0, dtype=np.int64)
    validation = validation_fold(data, vectors, empty, settings, encoder_id)
    parts = signals(validation, aggregation)
    if adapter_beta > 0:
        parts["learned"] = learned_scores(adapted_fold(validation, adapter_beta))
    weights = choose_weights(data, vectors, empty, settings, encoder_id, aggregation, fold=validation, parts=parts)
    del validation, parts
    model = train_dense_collaborative(data.interactions, vectors, encoder_id, settings)
    model.blend_weight = weights.get("collaborative", 0.0)
    model.provenance.update({
        "data": data.name, "source": data.source, "aggregation": aggregation, "adapter_beta": adapter_beta,
        "fusion_weights": {name: round(weights.get(name, 0.0), 4) for name in FUSED_SIGNALS},
        "weights_chosen_on": f"cold validation split of {VALIDATION_FRACTION:.0%} of items (seed {VALIDATION_SEED})",
    })
    return model


SVM_SAMPLE_ROWS = ("linear SVM (dense)", "logreg, sampled negatives (dense)", "dense top5",
                   "dense→ALS, ALS user (CTR-like)", "zotrec fused (shipped form)")


def evaluate_citeulike_dense(data: InteractionData, representation, encoder_id: str, folds: int = 5,
                             settings: ALSSettings | None = None, aggregation: str = "top5",
                             svm_users: int = 300) -> dict:
    """protocol.evaluate_citeulike on dense features: the same folds, users and report layout."""
    from recommender.evaluation.protocol import _summarise, item_cold_folds, random_floor, settings_for

    if not 1 <= folds <= 5:
        raise ValueError(f"folds must be between 1 and 5, got {folds}")
    settings = settings_for(data, settings)
    vectors = dense_report_rows(data, representation)
    results = [run_dense_fold(data, vectors, f, test_items, settings, encoder_id, aggregation, svm_users)
               for f, test_items in enumerate(item_cold_folds(data.n_items)[:folds])]
    return {
        "data": data.name, "source": data.source, "features": f"dense ({encoder_id})",
        "text": ("title only" if data.word_order_kept
                 else "bag of words: tf-idf weighted mean of the words' embeddings"),
        "folds": folds, "settings": settings.__dict__ | {"ngram_range": list(settings.ngram_range)},
        "aggregation": aggregation, "random_floor": random_floor(results[0].candidates),
        "methods": _summarise([r.metrics for r in results]),
        "svm_sample": {"users_per_fold": svm_users, "rows": list(SVM_SAMPLE_ROWS),
                       "methods": _summarise([r.svm_sample for r in results]) if svm_users else {}},
        "per_fold": [r.__dict__ for r in results],
    }
