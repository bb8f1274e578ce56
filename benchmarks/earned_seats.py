"""Does every seat an interest takes hold a paper worth showing (issue 39)? On CiteULike fold 0's test split,
a seeded sample of users, the shipped form's fused score, each user's top 20 re-ranked by the interests of
their training items, before (the pool of the plain top 10·20, no similarity floor) and after (the plain top
POOL_FACTOR·20 and the match's weak-list floor, recommender/scoring/facets.py):

    python benchmarks/earned_seats.py citeulike-a:../shared/data/citeulike-a [users]

Per rule: the share of the top 20's seat picks (papers placed ahead of the best remaining paper by score)
whose plain rank is below the top 60, the same of every pick, the median plain rank of the seat picks, users
whose list is the plain order, recall@20 and recall@50 of the re-ranked lists.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.interests_citeulike import fold_sample, say, shipped_fusion  # noqa: E402
from recommender.evaluation.folds import means, ranking_metrics  # noqa: E402
from recommender.scoring.aggregation import reasons_for  # noqa: E402
from recommender.scoring.facets import POOL_FACTOR, proportional_order  # noqa: E402
from recommender.scoring.interests import cluster_labels  # noqa: E402
from recommender.scoring.match import CALIBRATIONS  # noqa: E402

WINDOW, SHOWN, DEEP = 20, 20, 60
RULES = {"before: pool 10·20, no floor": (10, 0.0),
         f"after: pool {POOL_FACTOR}·20, floor {CALIBRATIONS['dense'].low_best}": (POOL_FACTOR, CALIBRATIONS["dense"].low_best),
         f"pool {POOL_FACTOR}·20, no floor": (POOL_FACTOR, 0.0),
         "pool 5·20, floor": (5, CALIBRATIONS["dense"].low_best)}


def seat_picks(new: np.ndarray, plain_place: np.ndarray) -> np.ndarray:
    """Whether each of `new`'s papers took a seat: it was placed ahead of the best remaining paper by score."""
    taken = np.zeros(len(plain_place), dtype=bool)
    best, picks = 0, []
    by_place = np.argsort(plain_place)
    for paper in new:
        while taken[by_place[best]]:
            best += 1
        picks.append(paper != by_place[best])
        taken[paper] = True
    return np.asarray(picks)


def main(spec: str, n_users: int) -> None:
    data, fold = fold_sample(spec, n_users)
    shipped = shipped_fusion(fold)[0]
    labels = [cluster_labels(fold.train_vectors[positions]) for positions in fold.positions]
    several = [row for row in range(len(fold.users)) if labels[row].max() >= 1]
    say(f"{data.name} fold 0, {len(fold.users)} users, {len(several)} with two interests or more")
    metrics = means(ranking_metrics(shipped, fold.relevant, seed=0))
    say(f"score order: recall@20 {metrics['recall@20']:.4f}  recall@50 {metrics['recall@50']:.4f}")
    for name, (factor, floor) in RULES.items():
        scores = shipped.copy()
        seats = deep_seats = deep_all = plain_lists = 0
        seat_places: list[int] = []
        for row in several:
            order = np.lexsort((np.arange(shipped.shape[1]), -shipped[row]))
            rows = fold.train_vectors[fold.positions[row]]
            nearest, similarity = reasons_for(rows, fold.test_vectors, order[: factor * WINDOW])
            nearest, similarity = nearest[:, 0], similarity[:, 0]
            new = proportional_order(order, labels[row][nearest], nearest, similarity,
                                     np.bincount(labels[row]) / len(labels[row]), WINDOW, rows, floor=floor)
            scores[row, new] = -np.arange(len(new), dtype=np.float64)
            place = np.empty(len(order), dtype=np.int64)
            place[order] = np.arange(len(order))
            top = new[:SHOWN]
            picked = seat_picks(top, place)
            seats += int(picked.sum())
            deep_seats += int((place[top[picked]] >= DEEP).sum())
            deep_all += int((place[top] >= DEEP).sum())
            plain_lists += int(np.array_equal(new[:SHOWN], order[:SHOWN]))
            seat_places.extend((place[top[picked]] + 1).tolist())
        metrics = means(ranking_metrics(scores, fold.relevant, seed=0))
        say(f"{name:34s} seat picks {seats} ({seats / (SHOWN * len(several)):.1%} of the top 20s), below the plain "
            f"top {DEEP}: {deep_seats / max(seats, 1):.1%} of seat picks, {deep_all / (SHOWN * len(several)):.1%} "
            f"of all picks; median seat pick's plain rank {np.median(seat_places) if seat_places else 0:.0f}; "
            f"plain top 20 {plain_lists / len(several):.0%} of users; recall@20 {metrics['recall@20']:.4f}  "
            f"recall@50 {metrics['recall@50']:.4f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300)
