"""The item-cold evaluation on CiteULike (shared/data/citeulike-a/ANCHORS.md) with every peer's rule side by
side, on tf-idf rows or on dense item vectors (the `items` parameter), and `zotrec train`'s model.

Items, not saves, are held out: a fold's items lose every save before training, and each user's
held-out items must be found among all of the fold's held-out items from text and the user's
training history alone. Weights (the tf-idf hybrids' blend, or zotrec's fusion on dense features)
are chosen on a cold validation split of the fold's training items; test items never take part.
"""

from __future__ import annotations

from recommender.errors import SettingError
import json
import logging
import time

import numpy as np

from recommender import progress
from recommender.collaborative.datasets import InteractionData
from recommender.collaborative.model import ALSSettings
from recommender.evaluation import fine, peers
from recommender.evaluation.dumps import FoldDump
from recommender.evaluation.folds import (
    CUTOFFS,
    NDCG_AT,
    VALIDATION_FRACTION,
    VALIDATION_SEED,
    FoldResult,
    item_cold_folds,
    means,
    random_floor,
    ranking_metrics,
    recall50,
    settings_for,
    summarise,
    validation_items,
)
from recommender.evaluation.order import order_losses
from recommender.evaluation.splits import DenseItems, Fold, adapted_fold, prepare_fold, users_only
from recommender.scoring.adapter import ADAPTER_BETA
from recommender.scoring.aggregation import TOP5
from recommender.scoring.fusion import FINE_SIGNALS, FINE_TOP, cascade, fuse, stepwise_weights
from recommender.scoring.signals import learned_signal

log = logging.getLogger(__name__)

CONTENT_AGGREGATIONS = ("max", "mean", "top3", "top5", "top10")
DEFAULT_SVM_USERS = 300
FUSED_SIGNALS = ("lexical", "learned", "collaborative")
TFIDF_SVM_ROWS = ("linear SVM", "content {aggregation}", "hybrid, ALS user", "hybrid, text user")
DENSE_SVM_ROWS = ("linear SVM (dense)", "logreg, sampled negatives (dense)", "dense top5",
                  "dense→ALS, ALS user (CTR-like)", "zotrec fused (shipped form)")


def validation_fold(data: InteractionData, test_items: np.ndarray, settings: ALSSettings,
                    items: DenseItems | None = None) -> Fold:
    """The cold validation split of the training items (20 %, seed 7); the test items are left out entirely."""
    return prepare_fold(data, validation_items(data.n_items, test_items), settings, items, ignored=test_items)


def blend_weights(validation: Fold, aggregation: str, users: tuple[str, ...] = ("ALS user", "text user")
                  ) -> dict[str, float]:
    """The tf-idf hybrids' blend weights, each the best recall@50 on the validation split."""
    content = peers.content_scores(validation, aggregation)
    rules = {"ALS user": peers.ctr_like_scores, "text user": peers.folded_user_scores}
    weights = {}
    for name in users:
        collaborative = rules[name](validation)
        weights[name] = peers.choose_blend_weight(
            lambda w: float(np.mean(ranking_metrics(peers.hybrid_scores(content, collaborative, w),
                                                    validation.relevant)["recall@50"])))
    return weights


def fusion_weights(validation: Fold, parts: dict[str, np.ndarray]) -> dict[str, float]:
    """zotrec's fusion weights (stepwise, from content only) with the best recall@50 on the validation split."""
    return stepwise_weights(lambda w: recall50(fuse(parts, w), validation.relevant), FUSED_SIGNALS, "content")


def shipped_parts(fold: Fold, aggregation: str, seed: int = 0, adapter_beta: float = ADAPTER_BETA
                  ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(the shipped form's signals, the plain ones) on a split: the fused score's and the fine order's nearest-items
    signals as Recommender.signals computes them (peers.shipped_signals); the shipped form's linear model in the
    adapter's space when `adapter_beta` > 0, the plain signals' on the plain embeddings."""
    plain = peers.shipped_signals(fold, aggregation, seed)
    if adapter_beta <= 0:
        return plain, plain
    learned = peers.shipped_signals(fold, aggregation, seed, beta=adapter_beta, wanted=("learned",))["learned"]
    return {**plain, "learned": learned}, plain


def hard_candidates_of(fold: Fold) -> fine.HardCandidates:
    """The fine benchmark's users and candidates on a dense split (nearness on its dense vectors)."""
    return fine.hard_candidates(fine.profile_nearness(fold.train_vectors, fold.positions, fold.test_vectors),
                                fold.relevant)


def choose_fine_weights(validation: Fold, parts: dict[str, np.ndarray], weights: dict[str, float],
                        names: tuple[str, ...] = FINE_SIGNALS) -> dict[str, float]:
    """The fine order's weights (stepwise from the content top3) with the best fine nDCG@10 on the validation
    split, for the cascade on the fused score with these `weights` (`parts`: shipped_parts' signals)."""
    hard = hard_candidates_of(validation)
    coarse = fuse(parts, weights)

    def quality(trial: dict[str, float]) -> float:
        ordered = cascade(coarse, parts, trial, FINE_TOP)
        return float(fine.ndcg_at(hard.on_candidates(ordered), hard.relevant).mean())

    return stepwise_weights(quality, [name for name in names if name != "nearest" and name in parts], "nearest")


def _dense_weights(validation: Fold, aggregation: str, adapter_beta: float, full_adapter: bool,
                   dump: FoldDump | None = None) -> dict:
    """The shipped form's fusion weights (its linear model in the adapter's space when `adapter_beta` > 0),
    with the plain linear model's ("plain"), the fine order's ("fine") and, for the full adapter, every content
    signal adapted ("adapter"). `dump` keeps the shipped form's validation signals (evaluation/dumps.py)."""
    shipped, plain_parts = shipped_parts(validation, aggregation, 0, adapter_beta)
    if dump is not None:
        dump.split("validation", shipped, validation.relevant, validation.positions, hard_candidates_of(validation))
    plain = fusion_weights(validation, plain_parts)
    if adapter_beta <= 0:
        return {**plain, "fine": choose_fine_weights(validation, plain_parts, plain)}
    weights = fusion_weights(validation, shipped)
    fine_order = choose_fine_weights(validation, shipped, weights)
    weights = {**weights, "adapter_beta": adapter_beta, "plain": plain, "fine": fine_order}
    if full_adapter:
        adapted = adapted_fold(validation, adapter_beta)
        weights["adapter"] = fusion_weights(validation, peers.fused_signals(adapted, aggregation))
    return weights


def _tfidf_rules(fold: Fold, record, aggregation: str, weights: dict, seed: int) -> None:
    record("random", peers.random_scores(fold, seed=seed))
    record("popularity (leak check)", peers.popularity_scores(fold))
    content = {name: record(f"content {name}", peers.content_scores(fold, name))
               for name in dict.fromkeys((*CONTENT_AGGREGATIONS, aggregation))}
    record("logreg, sampled negatives", peers.logistic_scores(fold, seed=seed))
    ctr = record("content→ALS, ALS user", peers.ctr_like_scores(fold))
    folded = record("content→ALS, text user", peers.folded_user_scores(fold))
    record("hybrid, ALS user", peers.hybrid_scores(content[aggregation], ctr, weights["ALS user"]))
    record("hybrid, text user", peers.hybrid_scores(content[aggregation], folded, weights["text user"]))


def in_area_signals(fold: Fold, hard: fine.HardCandidates, parts: dict[str, np.ndarray], seed: int,
                    space: Fold | None = None) -> dict[str, np.ndarray]:
    """The fused score's signals as `zotrec score` makes them when the corpus is only a user's hard candidates:
    per-paper signals cut to the candidates, the linear model refitted with its negatives drawn from them
    (in `space`'s vectors: the adapter's for the shipped form)."""
    space = fold if space is None else space
    signals = {name: hard.on_candidates(values) for name, values in parts.items() if name != "learned"}
    signals["learned"] = np.vstack([
        learned_signal(space.train_vectors[space.positions[row]], candidates, np.zeros(len(columns), dtype=bool),
                       peers.eval_negatives(seed, int(row)))  # held-out candidates: none of them the user's own
        for row, columns in zip(hard.rows, hard.columns) for candidates in [space.test_vectors[columns]]])
    return signals


def _dense_rules(fold: Fold, record, aggregation: str, weights: dict, seed: int, full_adapter: bool,
                 hard: fine.HardCandidates | None = None, record_fine=None, dump: FoldDump | None = None) -> None:
    record("random", peers.random_scores(fold, seed=seed))
    for name in CONTENT_AGGREGATIONS:
        record(f"dense {name}", peers.content_scores(fold, name))
    beta = weights.get("adapter_beta", 0.0)
    shipped, parts = shipped_parts(fold, aggregation, seed, beta)
    record(f"tf-idf {aggregation}", parts["lexical"])
    record("logreg, sampled negatives (dense)", peers.logistic_scores(fold, seed=seed))
    record("zotrec linear model (dense)", parts["learned"])
    record("dense→ALS, ALS user (CTR-like)", peers.ctr_like_scores(fold))
    record("dense→ALS, text user", parts["collaborative"])
    shipped_weights = {name: weights[name] for name in ("content", *FUSED_SIGNALS) if name in weights}
    plain = {name: value for name, value in weights.get("plain", shipped_weights).items() if name != "fine"}
    content_only = {**plain, "collaborative": 0.0}
    fine_order = weights.get("fine", {"nearest": 1.0})
    record("zotrec fused, content only", fuse(parts, content_only))
    adapted = None
    if "adapter_beta" in weights:
        record("zotrec fused, plain linear model", fuse(parts, plain))
        adapted = adapted_fold(fold, beta)
        if full_adapter:  # every content signal in the adapter's space: measured, not shipped (experiments/)
            adapted_parts = peers.fused_signals(adapted, aggregation, seed=seed)
            record(f"adapted space {aggregation}", adapted_parts["content"])
        record("zotrec linear model (adapted space)", shipped["learned"])
        if full_adapter:
            record("zotrec fused, adapted space", fuse(adapted_parts, weights["adapter"]))
    fused, shipped_form = peers.shipped_order(shipped, shipped_weights, fine_order)
    record("zotrec fused, fused order", fused)
    record("zotrec fused (shipped form)", shipped_form)
    without_lexical = {**shipped_weights, "lexical": 0.0,
                       "content": shipped_weights.get("content", 0.0) + shipped_weights.get("lexical", 0.0)}
    record("zotrec fused without tf-idf", fuse(shipped, without_lexical))  # the run-time form when lexical is 0
    if hard is not None and record_fine is not None and len(hard.rows):
        # the held-out view: `zotrec score` run with a corpus of the user's hard candidates only
        in_area = in_area_signals(fold, hard, parts, seed, adapted)  # the nearest-items signals cut, too
        if dump is not None:
            dump.split("test", shipped, fold.relevant, fold.positions, hard, in_area)
        old = record_fine("zotrec fused, fused order, in-area corpus", fuse(in_area, shipped_weights))
        record_fine("zotrec fused (shipped form), in-area corpus", cascade(old, in_area, fine_order, FINE_TOP))
        plain_in_area = in_area if adapted is None else in_area_signals(fold, hard, parts, seed)
        no_model = {name: value for name, value in fine_order.items() if name != "collaborative"} or {"nearest": 1.0}
        old = record_fine("zotrec fused, content only, in-area corpus", fuse(plain_in_area, content_only))
        record_fine("zotrec fused, content only + fine order, in-area corpus",
                    cascade(old, plain_in_area, no_model, FINE_TOP))


def run_fold(data: InteractionData, fold_index: int, test_items: np.ndarray, settings: ALSSettings,
             aggregation: str = TOP5, svm_users: int = DEFAULT_SVM_USERS, *,
             items: DenseItems | None = None, adapter_beta: float = ADAPTER_BETA, sample_only: bool = False,
             full_adapter: bool = False, dump: FoldDump | None = None) -> FoldResult:
    """Every rule on one fold, on tf-idf (`items` None) or on the dense item vectors with zotrec's fused score.

    Dense: the shipped form fits the linear model in the collaborative adapter's space (`adapter_beta`, as
    `zotrec train` does; 0: the plain embeddings), and records the fusion with the plain linear model
    beside; `full_adapter` adds the adapter's full form (experiments/README.md). `sample_only`: the
    test fold's rules on the SVM's sampled users alone, the weights chosen as always. `dump` (dense only):
    keep the shipped form's signals and every rule's per-user metrics for the weight choice (dumps.py).
    """
    started = time.perf_counter()
    validation = validation_fold(data, test_items, settings, items)
    weights = (blend_weights(validation, aggregation) if items is None
               else _dense_weights(validation, aggregation, adapter_beta, full_adapter, dump))
    del validation
    fold = prepare_fold(data, test_items, settings, items)
    result = FoldResult(fold_index, len(fold.users), len(test_items), blend_weights=weights)
    sample = np.sort(np.random.default_rng(fold_index).choice(
        len(fold.users), size=min(svm_users, len(fold.users)), replace=False)).astype(np.int64)
    if sample_only and len(sample):
        fold = users_only(fold, sample)
        result.users, sample = len(sample), np.arange(len(sample))

    hard = None
    if items is not None:  # the fine benchmark (fine.py) on the same users, nearness on the dense vectors
        hard = hard_candidates_of(fold)
        result.fine_users = len(hard.rows)
        log.info("fold %d fine benchmark: %d of %d users have a save among their %d nearest held-out items",
                 fold_index, len(hard.rows), hard.considered, hard.columns.shape[1] if len(hard.rows) else 0)

    def record_fine(name: str, on_candidates: np.ndarray) -> np.ndarray:
        per_user = fine.fine_metrics(on_candidates, hard.relevant, seed=fold_index)
        per_user["order loss"] = order_losses(on_candidates, hard.relevant)
        result.fine[name] = fine.fine_means(per_user)
        if dump is not None:
            dump.rule(name, {f"fine.{metric}": values for metric, values in per_user.items()})
        log.info("fold %d %-34s fine nDCG@%d %.4f tau %.4f", fold_index, name, fine.FINE_AT,
                 result.fine[name][f"ndcg@{fine.FINE_AT}"], result.fine[name]["tau"])
        return on_candidates

    def record(name: str, scores: np.ndarray) -> np.ndarray:
        per_user = ranking_metrics(scores, fold.relevant, seed=fold_index)
        per_user["order loss"] = order_losses(scores, fold.relevant)
        result.metrics[name] = means(per_user)
        if dump is not None:
            dump.rule(name, per_user)
        if len(sample):
            result.svm_sample[name] = means(per_user, sample)
        log.info("fold %d %-34s recall@50 %.4f", fold_index, name, result.metrics[name]["recall@50"])
        if hard is not None and len(hard.rows):
            record_fine(name, hard.on_candidates(scores))
        return scores

    if items is None:
        _tfidf_rules(fold, record, aggregation, weights, fold_index)
    else:
        _dense_rules(fold, record, aggregation, weights, fold_index, full_adapter, hard, record_fine, dump)
    if svm_users:
        svm = ranking_metrics(peers.svm_scores(fold, sample), fold.relevant[sample], seed=fold_index)
        result.svm_sample["linear SVM" if items is None else "linear SVM (dense)"] = means(svm)
        log.info("fold %d linear SVM (%d users) recall@50 %.4f", fold_index, len(sample), np.mean(svm["recall@50"]))
    if dump is not None:
        dump.close()
    result.seconds = round(time.perf_counter() - started, 1)
    return result


def dense_report_rows(data: InteractionData, representation) -> np.ndarray:
    """The dataset's item embeddings (collaborative.dense_model.dataset_vectors), logged."""
    from recommender.collaborative.dense_model import dataset_vectors

    started = time.perf_counter()
    vectors = dataset_vectors(data, representation)
    log.info("%s: %d item embeddings in %.1f s", data.name, len(vectors), time.perf_counter() - started)
    return vectors


def evaluate_citeulike(data: InteractionData, folds: int = 5, settings: ALSSettings | None = None,
                       aggregation: str = TOP5, svm_users: int = DEFAULT_SVM_USERS, *,
                       representation=None, encoder_id: str | None = None, full_adapter: bool = False) -> dict:
    """The protocol on the first `folds` of the 5 folds, on tf-idf or (with a dense `representation` and its
    `encoder_id`) on its item embeddings; returns a JSON-ready report."""
    if not 1 <= folds <= 5:
        raise SettingError(f"folds must be between 1 and 5, got {folds}")
    settings = settings_for(data, settings)
    items = None if representation is None else DenseItems(dense_report_rows(data, representation), encoder_id)
    results = []
    with progress.bar("Evaluating folds", folds, log_steps=True) as advance:
        for f, test_items in enumerate(item_cold_folds(data.n_items)[:folds]):
            progress.step(f"Fold {f + 1} of {folds}: fitting and scoring every rule", log=True)
            results.append(run_fold(data, f, test_items, settings, aggregation, svm_users, items=items,
                                    full_adapter=full_adapter))
            log.debug("fold result %s", json.dumps(results[-1].__dict__, default=float))  # partial results of long runs
            advance(1)
    if items is None:
        text, rows = ("title only" if data.word_order_kept else "bag of words (unigrams)"), TFIDF_SVM_ROWS
    else:
        text = "title only" if data.word_order_kept else "bag of words: tf-idf weighted mean of the words' embeddings"
        rows = DENSE_SVM_ROWS
    report = {"data": data.name, "source": data.source}
    if items is not None:
        report["features"] = f"dense ({encoder_id})"
    return report | {
        "text": text,
        "folds": folds,
        "settings": settings.__dict__ | {"ngram_range": list(settings.ngram_range)},
        "aggregation": aggregation,
        "random_floor": random_floor(results[0].candidates),
        "methods": summarise([r.metrics for r in results]),
        "svm_sample": {"users_per_fold": svm_users, "rows": [row.format(aggregation=aggregation) for row in rows],
                       "methods": summarise([r.svm_sample for r in results]) if svm_users else {}},
        "fine": {"candidates": fine.HARD_CANDIDATES, "users": [r.fine_users for r in results],
                 "nearness": "cosine of the item's dense vector to the mean of the user's training items' unit vectors",
                 "methods": summarise([r.fine for r in results]) if results[0].fine else {}},
        "per_fold": [r.__dict__ for r in results],
    }


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
            if title and method not in report["svm_sample"]["rows"]:
                continue
            cells = "".join(f"{values[m][0]:>10.4f} ±{values[m][1]:.3f}" for m in metrics)
            lines.append(f"{method:<28}{cells}")
    fine_rows = report.get("fine", {}).get("methods")
    if fine_rows:
        users = sum(report["fine"]["users"])
        lines.append(f"-- fine: among each user's {report['fine']['candidates']} hard candidates ({users} user-folds "
                     f"with a save among them)")
        width = max(len(method) for method in fine_rows) + 1
        lines.append(f"{'rule':<{width}}" + "".join(f"{m:>17}" for m in (f"ndcg@{fine.FINE_AT}", "tau")))
        for method, values in fine_rows.items():
            cells = "".join(f"{values[m][0]:>10.4f} ±{values[m][1]:.3f}" for m in (f"ndcg@{fine.FINE_AT}", "tau"))
            lines.append(f"{method:<{width}}{cells}")
    return "\n".join(lines) + "\n"


def train_model(data: InteractionData, vectors: np.ndarray, settings: ALSSettings, encoder_id: str,
                aggregation: str = TOP5, adapter_beta: float = ADAPTER_BETA):
    """The model `zotrec train` writes (and zotrec ships): fusion weights from a cold validation split of
    20 % of the items (the linear model in the adapter's space when `adapter_beta` > 0, as at run time:
    scoring/fusion.py), then ALS and the dense map fitted on all the data."""
    from recommender.collaborative.dense_model import train_dense_collaborative

    with progress.bar("Training", 2, log_steps=True) as advance:
        progress.step("Training 1 of 2: fusion weights on a cold validation split", log=True)
        validation = validation_fold(data, np.zeros(0, dtype=np.int64), settings, DenseItems(vectors, encoder_id))
        parts, _ = shipped_parts(validation, aggregation, 0, adapter_beta)
        weights = fusion_weights(validation, parts)
        fine_order = choose_fine_weights(validation, parts, weights)
        del validation, parts
        advance(1)
        progress.step("Training 2 of 2: ALS and the embedding → factor map on all the data", log=True)
        model = train_dense_collaborative(data.interactions, vectors, encoder_id, settings)
        advance(1)
    model.provenance.update({
        "data": data.name, "source": data.source, "aggregation": aggregation, "adapter_beta": adapter_beta,
        "fusion_weights": {name: round(weights.get(name, 0.0), 4) for name in FUSED_SIGNALS},
        "fine_weights": {name: round(value, 4) for name, value in fine_order.items() if value > 0},
        "weights_chosen_on": f"cold validation split of {VALIDATION_FRACTION:.0%} of items (seed {VALIDATION_SEED})",
    })
    return model
