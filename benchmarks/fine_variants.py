"""Validation sweeps behind docs/evaluation.md's fine-ranking section (issue 25): on the cold validation split of
fold 0's training items (20 %, seed 7; test items left out), the fine benchmark (recommender/evaluation/fine.py:
nDCG@10 among each user's 100 hard candidates) and coarse recall@50 of ways to put the fine order back into the
fused score. Nothing here reads a test fold.

    python benchmarks/fine_variants.py citeulike-a:../shared/data/citeulike-a [hard]
    # hard: instead, the linear model with hard negatives (half of them from the papers ranked 51st to
    # 50 + 5 × their number by the content top5, half at random), alone and fused

Each line: the variant, its fine nDCG@10 (candidates cut from the whole split's scores), its recall@50, and, for the
forms zotrec ships, the fine nDCG@10 when `zotrec score` is run with the candidates as its whole corpus.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.collaborative.datasets import load_dataset  # noqa: E402
from recommender.evaluation import fine, peers  # noqa: E402
from recommender.evaluation.folds import item_cold_folds, recall50, settings_for  # noqa: E402
from recommender.evaluation.protocol import dense_report_rows, fusion_weights, in_area_signals, validation_fold  # noqa: E402
from recommender.evaluation.splits import DenseItems, adapted_fold  # noqa: E402
from recommender.features.dense import MODEL_ID, DenseRepresentation  # noqa: E402
from recommender.scoring.adapter import ADAPTER_BETA  # noqa: E402
from recommender.scoring.fusion import WEIGHT_GRID, cascade, fuse, stepwise_weights  # noqa: E402
from recommender.scoring.learned import MIN_NEGATIVES, NEGATIVES_PER_POSITIVE, linear_scores  # noqa: E402

STARTED = time.time()


def say(line: str) -> None:
    print(f"{line}  ({time.time() - STARTED:.0f} s)", flush=True)


def hard_negative_scores(space, content: np.ndarray, skip: int = 50, seed: int = 0) -> np.ndarray:
    """The per-user linear model with half its negatives near the profile but not nearest (ranked skip+1 … by
    the content topK), half at random from the rest."""
    rng = np.random.default_rng(seed)
    rows = []
    for row, positives in enumerate(space.positions):
        wanted = min(max(MIN_NEGATIVES, NEGATIVES_PER_POSITIVE * len(positives)), content.shape[1] - skip)
        order = np.argsort(-content[row])
        band = order[skip : skip + 5 * wanted]
        near = rng.choice(band, size=min(wanted // 2, len(band)), replace=False)
        rest = np.setdiff1d(np.arange(content.shape[1]), near)
        negatives = np.concatenate([near, rng.choice(rest, size=wanted - len(near), replace=False)])
        rows.append(linear_scores(space.train_vectors[positives], space.test_vectors[negatives], space.test_vectors))
    return np.vstack(rows).astype(np.float32)


def main(spec: str, mode: str = "sweep") -> None:
    data = load_dataset(spec)
    vectors = dense_report_rows(data, DenseRepresentation())
    settings = settings_for(data)
    split = validation_fold(data, item_cold_folds(data.n_items)[0], settings, DenseItems(vectors, MODEL_ID))
    parts = peers.fused_signals(split, "top5")
    adapted = adapted_fold(split, ADAPTER_BETA)
    parts["learned"] = peers.learned_scores(adapted)
    weights = fusion_weights(split, parts)
    parts["nearest"] = peers.content_scores(split, "top3")
    parts["max"] = peers.content_scores(split, "max")
    hard = fine.hard_candidates(fine.profile_nearness(split.train_vectors, split.positions, split.test_vectors),
                                split.relevant)
    say(f"{len(hard.rows)} of {hard.considered} users; shipped weights {weights}")

    def quality(scores: np.ndarray) -> float:
        return float(fine.ndcg_at(hard.on_candidates(scores), hard.relevant).mean())

    def line(name: str, scores: np.ndarray) -> None:
        say(f"{name:50s} fine {quality(scores):.4f}  recall@50 {recall50(scores, split.relevant):.4f}")

    shipped = fuse(parts, weights)
    line("shipped fused", shipped)
    if mode == "hard":
        hard_parts = {**parts, "learned": hard_negative_scores(adapted, parts["content"])}
        line("linear model alone (random negatives)", parts["learned"])
        line("linear model alone (hard negatives)", hard_parts["learned"])
        line("fused, hard negatives, the same weights", fuse(hard_parts, weights))
        hard_weights = fusion_weights(split, {k: hard_parts[k] for k in ("content", "lexical", "learned", "collaborative")})
        line(f"fused, hard negatives, weights {({k: round(v, 3) for k, v in hard_weights.items()})}",
             fuse(hard_parts, hard_weights))
        return
    for name in ("nearest", "max", "content", "lexical", "learned", "collaborative"):
        line(f"{name} alone", parts[name])
    for share in WEIGHT_GRID[1:]:
        blend = {key: value * (1 - share) for key, value in weights.items()} | {"nearest": share}
        line(f"blend: nearest share {share}", fuse(parts, blend))
    fine_names = ("max", "content", "lexical", "learned", "collaborative")
    chosen = {}
    for top in (20, 50, 100):
        line(f"cascade top {top}, nearest alone", cascade(shipped, parts, {"nearest": 1.0}, top))
        chosen[top] = stepwise_weights(lambda w: quality(cascade(shipped, parts, w, top)), fine_names, "nearest")
        line(f"cascade top {top}, fine weights {({k: round(v, 3) for k, v in chosen[top].items()})}",
             cascade(shipped, parts, chosen[top], top))
    in_area = in_area_signals(split, hard, parts, 0, adapted)
    in_area["nearest"], in_area["max"] = hard.on_candidates(parts["nearest"]), hard.on_candidates(parts["max"])
    in_area_shipped = fuse(in_area, weights)
    say(f"in-area corpus: shipped {fine.ndcg_at(in_area_shipped, hard.relevant).mean():.4f}, "
        f"nearest {fine.ndcg_at(in_area['nearest'], hard.relevant).mean():.4f}")
    for top, w in chosen.items():
        scores = cascade(in_area_shipped, in_area, w, top)
        say(f"in-area corpus: cascade top {top} {fine.ndcg_at(scores, hard.relevant).mean():.4f}")
    for share in (0.2, 0.4, 0.6):
        blend = {key: value * (1 - share) for key, value in weights.items()} | {"nearest": share}
        say(f"in-area corpus: blend nearest {share} {fine.ndcg_at(fuse(in_area, blend), hard.relevant).mean():.4f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
