"""The item-cold evaluation on CiteULike (shared/data/citeulike-a/ANCHORS.md) with every peer's rule side by side.

Items, not saves, are held out: a fold's items lose every save before training, and each user's
held-out items must be found among all of the fold's held-out items from text and the user's
training history alone.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from recommender.collaborative.datasets import InteractionData
from recommender.collaborative.model import ALSSettings, CollaborativeModel, fit_text_map, train_collaborative
from recommender.evaluation import peers
from recommender.scoring.aggregation import DEFAULT_AGGREGATION
from recommender.scoring.blend import choose_blend_weight

log = logging.getLogger(__name__)

FOLD_SEED = 20250101
VALIDATION_SEED = 7
CUTOFFS = (20, 50, 100, 300)
NDCG_AT = 50
CONTENT_AGGREGATIONS = ("max", "mean", "top3", "top5", "top10")
DEFAULT_SVM_USERS = 300
CROSS_FIT_PARTS = 3
VALIDATION_FRACTION = 0.2


def item_cold_folds(n_items: int, n_folds: int = 5, seed: int = FOLD_SEED) -> list[np.ndarray]:
    """ANCHORS.md step 1: one permutation, consecutive blocks; the last block takes the remainder."""
    order = np.random.default_rng(seed).permutation(n_items)
    size = n_items // n_folds
    return [np.sort(order[f * size : (f + 1) * size if f < n_folds - 1 else n_items]) for f in range(n_folds)]


def without_items(interactions: sparse.csr_matrix, items: np.ndarray) -> sparse.csr_matrix:
    """The matrix with every save of `items` removed (the columns stay, empty)."""
    keep = np.ones(interactions.shape[1], dtype=np.float32)
    keep[items] = 0.0
    matrix = (interactions @ sparse.diags(keep)).tocsr()
    matrix.eliminate_zeros()
    return matrix


@dataclass
class FoldContext:
    """Everything the rules in peers.py need for one split; built without reading held-out saves."""

    test_items: np.ndarray
    train_items: np.ndarray
    train_matrix: sparse.csr_matrix
    users: np.ndarray
    relevant: np.ndarray  # (users, test items) bool: the held-out saves, used only for scoring
    user_train_positions: list[np.ndarray]
    model: CollaborativeModel
    user_factors: np.ndarray
    test_factors: np.ndarray
    train_factors_from_text: np.ndarray
    train_rows_compact: sparse.csr_matrix
    test_rows_compact: sparse.csr_matrix
    similarity: np.ndarray  # (train items, test items) cosine


def prepare_fold(
    data: InteractionData, held_out: np.ndarray, settings: ALSSettings, ignored: np.ndarray | None = None
) -> FoldContext:
    """Train on every item except `held_out` (and `ignored`), then set up scoring of `held_out`."""
    excluded = held_out if ignored is None else np.union1d(held_out, ignored)
    train_items = np.setdiff1d(np.arange(data.n_items), excluded)
    train_matrix = without_items(data.interactions, excluded)
    model = train_collaborative(train_matrix, data.texts, settings)
    rows = model.features.transform(data.texts)
    train_rows, test_rows = rows[train_items], rows[held_out]
    held_saves = data.interactions[:, held_out]
    users = np.flatnonzero((held_saves.getnnz(axis=1) > 0) & (train_matrix.getnnz(axis=1) > 0))
    position = np.full(data.n_items, -1)
    position[train_items] = np.arange(len(train_items))
    columns = np.unique(train_rows.indices)
    return FoldContext(
        test_items=held_out,
        train_items=train_items,
        train_matrix=train_matrix,
        users=users,
        relevant=held_saves[users].toarray() > 0,
        user_train_positions=[position[train_matrix[user].indices] for user in users],
        model=model,
        user_factors=model.training_user_factors[users],
        test_factors=model.item_factors_for_rows(test_rows).astype(np.float32),
        train_factors_from_text=_cross_fitted_factors(model, train_rows, train_items, train_matrix),
        train_rows_compact=train_rows[:, columns].astype(np.float64).tocsr(),
        test_rows_compact=test_rows[:, columns].astype(np.float64).tocsr(),
        similarity=(train_rows @ test_rows.T).toarray().astype(np.float32),
    )


def _cross_fitted_factors(model, train_rows, train_items, train_matrix) -> np.ndarray:
    """Each training item's factor predicted by a text map that never saw it (as for a Zotero item)."""
    targets = model.training_item_factors[train_items]
    saved = np.asarray(train_matrix.getnnz(axis=0))[train_items] > 0
    part = np.random.default_rng(VALIDATION_SEED).integers(0, CROSS_FIT_PARTS, len(train_items))
    predicted = np.zeros_like(targets, dtype=np.float32)
    for p in range(CROSS_FIT_PARTS):
        fit_on = saved & (part != p)
        columns, weights, intercept = fit_text_map(
            train_rows[fit_on], targets[fit_on], model.settings.map_regularization
        )
        lookup = np.full(train_rows.shape[1], -1)
        lookup[columns] = np.arange(len(columns))
        block = train_rows[part == p]
        known = lookup[block.indices] >= 0
        compact = sparse.csr_matrix(
            (block.data * known, np.maximum(lookup[block.indices], 0), block.indptr),
            shape=(block.shape[0], len(columns)),
        )
        predicted[part == p] = compact @ weights + intercept
    return predicted


def ranking_metrics(scores: np.ndarray, relevant: np.ndarray, seed: int = 0) -> dict[str, np.ndarray]:
    """Per-user recall@M (no min(M, ·) cap) and nDCG@50 with binary gains; ties broken at random."""
    tie_breaker = np.random.default_rng(seed).random(scores.shape)
    deepest = min(max(CUTOFFS + (NDCG_AT,)), scores.shape[1])
    top = np.lexsort((tie_breaker, -np.asarray(scores, dtype=np.float64)), axis=1)[:, :deepest]
    hits = np.take_along_axis(relevant, top, axis=1)
    found = np.cumsum(hits, axis=1)
    n_relevant = relevant.sum(axis=1)
    metrics = {f"recall@{m}": found[:, min(m, deepest) - 1] / n_relevant for m in CUTOFFS}
    discounts = 1.0 / np.log2(np.arange(2, NDCG_AT + 2))
    dcg = (hits[:, :NDCG_AT] * discounts[: hits[:, :NDCG_AT].shape[1]]).sum(axis=1)
    ideal = np.cumsum(discounts)[np.minimum(n_relevant, NDCG_AT) - 1]
    metrics[f"ndcg@{NDCG_AT}"] = dcg / ideal
    return metrics


def random_floor(n_candidates: int) -> dict[str, float]:
    """Expected recall@M of a random ranking: M / candidates, whatever the user."""
    return {f"recall@{m}": min(m / n_candidates, 1.0) for m in CUTOFFS}


@dataclass
class FoldResult:
    """One fold: per method, the mean of each metric over the fold's users."""

    fold: int
    users: int
    candidates: int
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    blend_weights: dict[str, float] = field(default_factory=dict)
    svm_sample: dict[str, dict[str, float]] = field(default_factory=dict)
    seconds: float = 0.0


def _means(metrics: dict[str, np.ndarray], rows: np.ndarray | slice = slice(None)) -> dict[str, float]:
    return {name: float(np.mean(values[rows])) for name, values in metrics.items()}


def validation_weights(
    data: InteractionData, test_items: np.ndarray, settings: ALSSettings, aggregation: str,
    fraction: float = VALIDATION_FRACTION, users: tuple[str, ...] = ("ALS user", "text user"),
) -> dict[str, float]:
    """Blend weights chosen on a cold split of the training items (test items are left out entirely)."""
    train_items = np.setdiff1d(np.arange(data.n_items), test_items)
    rng = np.random.default_rng(VALIDATION_SEED)
    validation = np.sort(rng.choice(train_items, size=int(fraction * len(train_items)), replace=False))
    context = prepare_fold(data, validation, settings, ignored=test_items)
    content = peers.content_scores(context, aggregation)
    weights = {}
    rules = {"ALS user": peers.ctr_like_scores, "text user": peers.folded_user_scores}
    for name in users:
        collaborative = rules[name](context)
        weights[name] = choose_blend_weight(
            lambda w: float(np.mean(ranking_metrics(peers.hybrid_scores(content, collaborative, w),
                                                    context.relevant)["recall@50"])))
    return weights


def settings_for(data: InteractionData, settings: ALSSettings | None = None) -> ALSSettings:
    """Unigram features for bag-of-words data (word order is gone), the given settings otherwise."""
    settings = settings or ALSSettings()
    if not data.word_order_kept:
        settings = ALSSettings(**{**settings.__dict__, "ngram_range": (1, 1)})
    return settings


def run_fold(
    data: InteractionData, fold: int, test_items: np.ndarray, settings: ALSSettings,
    aggregation: str = DEFAULT_AGGREGATION, svm_users: int = DEFAULT_SVM_USERS,
) -> FoldResult:
    """Every rule on one fold; the hybrids' weights come from a validation split of the training items."""
    started = time.perf_counter()
    weights = validation_weights(data, test_items, settings, aggregation)
    context = prepare_fold(data, test_items, settings)
    result = FoldResult(fold, len(context.users), len(test_items), blend_weights=weights)
    sample = np.sort(np.random.default_rng(fold).choice(
        len(context.users), size=min(svm_users, len(context.users)), replace=False)).astype(np.int64)
    per_user: dict[str, dict[str, np.ndarray]] = {}

    def record(name: str, scores: np.ndarray) -> np.ndarray:
        per_user[name] = ranking_metrics(scores, context.relevant, seed=fold)
        result.metrics[name] = _means(per_user[name])
        if len(sample):
            result.svm_sample[name] = _means(per_user[name], sample)
        log.info("fold %d %-24s recall@50 %.4f", fold, name, result.metrics[name]["recall@50"])
        return scores

    record("random", peers.random_scores(context, seed=fold))
    record("popularity (leak check)", peers.popularity_scores(context))
    content = {name: record(f"content {name}", peers.content_scores(context, name))
               for name in dict.fromkeys((*CONTENT_AGGREGATIONS, aggregation))}
    record("logreg, sampled negatives", peers.logistic_scores(context, seed=fold))
    ctr = record("content→ALS, ALS user", peers.ctr_like_scores(context))
    folded = record("content→ALS, text user", peers.folded_user_scores(context))
    record("hybrid, ALS user", peers.hybrid_scores(content[aggregation], ctr, weights["ALS user"]))
    record("hybrid, text user", peers.hybrid_scores(content[aggregation], folded, weights["text user"]))
    if svm_users:
        svm = ranking_metrics(peers.svm_scores(context, sample), context.relevant[sample], seed=fold)
        result.svm_sample["linear SVM"] = _means(svm)
        log.info("fold %d linear SVM (%d users) recall@50 %.4f", fold, len(sample), np.mean(svm["recall@50"]))
    result.seconds = round(time.perf_counter() - started, 1)
    return result


def evaluate_citeulike(
    data: InteractionData, folds: int = 5, settings: ALSSettings | None = None,
    aggregation: str = DEFAULT_AGGREGATION, svm_users: int = DEFAULT_SVM_USERS,
) -> dict:
    """The protocol on the first `folds` of the 5 folds; returns a JSON-ready report."""
    if not 1 <= folds <= 5:
        raise ValueError(f"folds must be between 1 and 5, got {folds}")
    settings = settings_for(data, settings)
    results = []
    for f, test_items in enumerate(item_cold_folds(data.n_items)[:folds]):
        results.append(run_fold(data, f, test_items, settings, aggregation, svm_users))
        log.debug("fold result %s", json.dumps(results[-1].__dict__))  # partial results of long runs
    return {
        "data": data.name,
        "source": data.source,
        "text": "title only" if data.word_order_kept else "bag of words (unigrams)",
        "folds": folds,
        "settings": settings.__dict__ | {"ngram_range": list(settings.ngram_range)},
        "aggregation": aggregation,
        "random_floor": random_floor(results[0].candidates),
        "methods": _summarise([r.metrics for r in results]),
        "svm_sample": {"users_per_fold": svm_users,
                       "methods": _summarise([r.svm_sample for r in results]) if svm_users else {}},
        "per_fold": [r.__dict__ for r in results],
    }


def _summarise(per_fold: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, list[float]]]:
    """method → metric → [mean, std] over folds (std 0 for a single fold)."""
    summary = {}
    for method in per_fold[0]:
        summary[method] = {
            metric: [float(np.mean(values)), float(np.std(values))]
            for metric in per_fold[0][method]
            for values in [[fold[method][metric] for fold in per_fold]]
        }
    return summary


def format_table(report: dict) -> str:
    """A plain-text table: one row per rule, mean ± std over folds, the random floor beside."""
    metrics = [f"recall@{m}" for m in CUTOFFS] + [f"ndcg@{NDCG_AT}"]
    floor = report["random_floor"]
    lines = [f"{report['data']} item-cold, {report['folds']} fold(s), {report['text']}",
             f"{'rule':<28}" + "".join(f"{m:>17}" for m in metrics),
             f"{'(random floor M/N)':<28}" + "".join(f"{floor.get(m, float('nan')):>17.4f}" for m in metrics)]
    for section, title in ((report["methods"], None), (report["svm_sample"]["methods"], "svm")):
        if title and section:
            users = report["svm_sample"]["users_per_fold"]
            lines.append(f"-- on the same {users} sampled users per fold (the SVM is too slow for all):")
        for method, values in section.items():
            if title and method not in report["svm_sample"].get("rows", (
                    "linear SVM", f"content {report['aggregation']}", "hybrid, ALS user", "hybrid, text user")):
                continue
            cells = "".join(f"{values[m][0]:>10.4f} ±{values[m][1]:.3f}" for m in metrics)
            lines.append(f"{method:<28}{cells}")
    return "\n".join(lines) + "\n"


def train_model(
    data: InteractionData, settings: ALSSettings | None = None, aggregation: str = DEFAULT_AGGREGATION
) -> CollaborativeModel:
    """The model `zotrec train` writes: blend weight from a cold validation split, then fitted on all data."""
    settings = settings_for(data, settings)
    weight = validation_weights(data, np.zeros(0, dtype=np.int64), settings, aggregation,
                                users=("text user",))["text user"]
    model = train_collaborative(data.interactions, data.texts, settings)
    model.blend_weight = weight
    model.provenance.update({"data": data.name, "source": data.source, "aggregation": aggregation,
                             "blend_chosen_on": f"cold validation split of {VALIDATION_FRACTION:.0%} of items"})
    return model
