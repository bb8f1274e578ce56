"""What the re-ranking by interests (recommender/scoring/facets.py) costs on CiteULike: fold 0's test split,
a seeded sample of its users, the shipped form's fused score (the shipped model's fusion weights, its linear
model in the adapter's space) before and after each user's list is re-ranked by the interests found in their
training items (clusters: CiteULike has no collections).

    python benchmarks/interests_citeulike.py citeulike-a:../shared/data/citeulike-a [users]

Coarse: recall@50 with the top 50 re-ranked (the shown list is the metric's), and with the top 20.
Fine (recommender/evaluation/fine.py): nDCG@10 and Kendall tau among each user's 100 hard candidates, the
candidates cut from the whole split's scores and, as `zotrec score` with those candidates as its whole
corpus, from the in-area signals; each list re-ranked with a window of 20 (the default list).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.collaborative.datasets import load_dataset  # noqa: E402
from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel  # noqa: E402
from recommender.evaluation import fine, peers  # noqa: E402
from recommender.evaluation.folds import item_cold_folds, means, ranking_metrics, settings_for  # noqa: E402
from recommender.evaluation.protocol import dense_report_rows, in_area_signals  # noqa: E402
from recommender.evaluation.splits import DenseItems, adapted_fold, prepare_fold, users_only  # noqa: E402
from recommender.features.dense import MODEL_ID, DenseRepresentation  # noqa: E402
from recommender.scoring.aggregation import reasons_for  # noqa: E402
from recommender.scoring.facets import POOL_FACTOR, proportional_order  # noqa: E402
from recommender.scoring.fusion import fuse  # noqa: E402
from recommender.scoring.interests import cluster_labels  # noqa: E402

STARTED = time.time()


def say(line: str) -> None:
    print(f"{line}  ({time.time() - STARTED:.0f} s)", flush=True)


def reranked(scores: np.ndarray, item_rows: np.ndarray, labels: np.ndarray, candidate_rows: np.ndarray,
             window: int, spread: bool = True) -> np.ndarray:
    """One user's scores replaced by rank scores of the order facets.py gives them (unchanged: one interest)."""
    if labels.max() < 1:
        return scores
    order = np.lexsort((np.arange(len(scores)), -scores))
    nearest, similarity = reasons_for(item_rows, candidate_rows, order[: POOL_FACTOR * window])
    nearest, similarity = nearest[:, 0], similarity[:, 0]
    shares = np.bincount(labels) / len(labels)
    new = proportional_order(order, labels[nearest], nearest, similarity, shares, window,
                             item_rows if spread else None)
    out = np.empty(len(scores), dtype=np.float64)
    out[new] = -np.arange(len(new), dtype=np.float64)
    return out


def fold_sample(spec: str, n_users: int):
    """(the dataset, fold 0's test split with a seeded sample of `n_users` of its users) on dense rows."""
    data = load_dataset(spec)
    vectors = dense_report_rows(data, DenseRepresentation())
    fold = prepare_fold(data, item_cold_folds(data.n_items)[0], settings_for(data), DenseItems(vectors, MODEL_ID))
    sample = np.sort(np.random.default_rng(0).choice(len(fold.users), size=min(n_users, len(fold.users)),
                                                     replace=False))
    return data, users_only(fold, sample)


def shipped_fusion(fold):
    """(the shipped form's fused scores, its signals, the fold in the adapter's space, its weights): the shipped
    model's fusion weights and its linear model in the adapter's space, as a Zotero user of the default gets them."""
    provenance = DenseCollaborativeModel.load(SHIPPED_MODEL).provenance
    weights = dict(provenance["fusion_weights"])
    weights["content"] = 1.0 - sum(weights.values())
    parts = peers.fused_signals(fold, "top5")
    adapted = adapted_fold(fold, provenance["adapter_beta"])
    parts["learned"] = peers.learned_scores(adapted)
    return fuse(parts, weights), parts, adapted, weights


def main(spec: str, n_users: int) -> None:
    data, fold = fold_sample(spec, n_users)
    shipped, parts, adapted, weights = shipped_fusion(fold)
    labels = [cluster_labels(fold.train_vectors[positions]) for positions in fold.positions]
    counts = np.array([label.max() + 1 for label in labels])
    say(f"{data.name} fold 0, {len(fold.users)} users, weights {weights}; interests per user: "
        f"median {np.median(counts):.0f}, one interest {np.mean(counts == 1):.0%}, max {counts.max()}")

    def user_rows(row: int) -> np.ndarray:
        return fold.train_vectors[fold.positions[row]]

    coarse = {"score order": shipped}
    for window in (50, 20):
        for spread in (True, False):
            coarse[f"interests, top {window}{'' if spread else ', no spread'}"] = np.vstack([
                reranked(shipped[row], user_rows(row), labels[row], fold.test_vectors, window, spread)
                for row in range(len(fold.users))])
    for name, scores in coarse.items():
        metrics = means(ranking_metrics(scores, fold.relevant, seed=0))
        say(f"coarse {name:32s} recall@50 {metrics['recall@50']:.4f}  recall@20 {metrics['recall@20']:.4f}")

    hard = fine.hard_candidates(fine.profile_nearness(fold.train_vectors, fold.positions, fold.test_vectors),
                                fold.relevant)
    in_area = fuse(in_area_signals(fold, hard, parts, 0, adapted), weights)
    views = {"cut from the split": hard.on_candidates(shipped), "in-area corpus": in_area}
    for view, scores in views.items():
        lists = {"score order": scores}
        for window in (20, 10):
            lists[f"interests, top {window}"] = np.vstack([
                reranked(scores[place], user_rows(row), labels[row], fold.test_vectors[hard.columns[place]],
                         window)
                for place, row in enumerate(hard.rows)])
        for name, values in lists.items():
            metrics = fine.fine_means(fine.fine_metrics(values, hard.relevant, seed=0))
            say(f"fine ({view}, {len(hard.rows)} users) {name:20s} nDCG@10 {metrics['ndcg@10']:.4f}  "
                f"tau {metrics['tau']:.4f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 500)
