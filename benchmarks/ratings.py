"""Do the page's explicit ratings help the next list? A simulated user on CiteULike (item-cold, tf-idf top5 of
the profile, recommender/evaluation/feedback_sim.py's users) is shown the first 20 picks among the held-out
items and gives their verdict; the next list (the best 20 not shown before) is measured by recall@20 and
nDCG@20 over the user's held-out saves not shown yet, for each way the verdict reaches zotrec:

- without feedback: the same ranking (its next 20);
- Zotero actions alone: the user saves the picks they want (held-out saves) into Zotero: they join the profile
  and the linear model's positives (scoring/feedback.py, as a kept item does); the others get no verdict;
- Zotero actions with removals: the same, and the others are taken out of the collection (dismissed);
- explicit ratings: More like this on the held-out saves, Not for me on the others (feedback/ratings.py): the
  liked papers are the linear model's positives and lift their like (LIKED_BOOST), never join the profile;
- ratings and saves: More like this and Save on the held-out saves, Not for me on the rest.

The lift is chosen on fold 1 (validation) by nDCG@20, then fold 0 is reported with it and with the lift zotrec
ships (scoring/feedback.py LIKED_BOOST); each arm's nDCG@20 is also given as a paired difference per user
against Zotero actions alone, with its standard error.

    python benchmarks/ratings.py ../shared/data/citeulike-a [USERS] [--dense] [--json OUT]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recommender.collaborative.datasets import load_dataset  # noqa: E402
from recommender.evaluation.feedback_sim import DenseRule, TfidfUser, _dense_users, _tfidf_users  # noqa: E402
from recommender.evaluation.folds import item_cold_folds  # noqa: E402
from recommender.scoring.aggregation import TOP5  # noqa: E402
from recommender.scoring.feedback import (  # noqa: E402
    DENSE_LIKED_BOOST,
    DENSE_LINEAR_WEIGHT,
    LIKED_BOOST,
    LINEAR_WEIGHT,
    linear_feedback_scores,
    negative_sample,
    neighbourhood,
)
from recommender.scoring.fusion import standardise  # noqa: E402

SHOWN = 20
BOOSTS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)
ARMS = ("without feedback", "Zotero actions alone", "Zotero actions with removals", "explicit ratings",
        "ratings and saves")


def rated_scores(user: TfidfUser, liked: list[int], disliked: list[int], shown: np.ndarray, kept: list[int],
                 boost: float) -> np.ndarray:
    """apply_feedback's rule on one simulated user: content (the profile grown by `kept` saves only) + the
    linear model (saves and likes positive, dislikes negative) + the lift towards the liked papers."""
    profile_rows, candidate_rows = user.rows
    sims = np.vstack([user.profile_sims, user.test_sims[kept]]) if kept else user.profile_sims
    from recommender.evaluation.peers import aggregate_similarities

    content = aggregate_similarities(sims, user.aggregation)
    positives = sorted(set(liked) | set(kept))
    exclude = np.union1d(np.flatnonzero(shown), neighbourhood(candidate_rows, positives))
    negatives = negative_sample(len(shown), profile_rows.shape[0] + len(positives), exclude, user.seed)
    linear = linear_feedback_scores(profile_rows, candidate_rows[positives], candidate_rows[disliked],
                                    candidate_rows[negatives], candidate_rows)
    adjusted = standardise(content) + LINEAR_WEIGHT * standardise(linear)
    if liked and boost:
        adjusted = adjusted + boost * float(np.std(adjusted)) * np.clip(user.test_sims[liked].max(axis=0), 0, None)
    return adjusted


def dense_rated_scores(user, liked: list[int], disliked: list[int], shown: np.ndarray, kept: list[int],
                       boost: float) -> np.ndarray:
    """The same rule on the fused score of dense rows (`--dense`): the profile grown by `kept` saves in every
    signal, the linear model at DENSE_LINEAR_WEIGHT, the lift by the rows' cosine."""
    fold, vectors = user.fold, user.fold.test_vectors
    base = user.fused(kept) if kept else user.first
    profile = np.vstack([fold.train_vectors[user.position], vectors[kept]])
    positives = sorted(set(liked) | set(kept))
    exclude = np.union1d(np.flatnonzero(shown), neighbourhood(vectors, positives))
    negatives = negative_sample(len(vectors), len(profile) + len(liked), exclude, user.seed)
    linear = linear_feedback_scores(profile, vectors[positives], vectors[disliked], vectors[negatives], vectors)
    adjusted = standardise(base) + DENSE_LINEAR_WEIGHT * standardise(linear)
    if liked and boost:
        adjusted = adjusted + boost * float(np.std(adjusted)) * np.clip(user.extra["dense"][liked].max(axis=0), 0, None)
    return adjusted


def next_list(scores: np.ndarray, shown: np.ndarray, relevant: np.ndarray) -> tuple[float, float]:
    """recall@20 and nDCG@20 of the best 20 not shown before, over the held-out saves not shown yet."""
    left = relevant & ~shown
    if not left.any():
        return np.nan, np.nan
    top = np.argsort(-np.where(shown, -np.inf, scores), kind="stable")[:SHOWN]
    hits = left[top].astype(float)
    gains = hits / np.log2(np.arange(2, SHOWN + 2))
    ideal = (1 / np.log2(np.arange(2, min(SHOWN, int(left.sum())) + 2))).sum()
    return float(hits.sum() / left.sum()), float(gains.sum() / ideal)


def one_user(user: TfidfUser, relevant: np.ndarray, boosts) -> dict[str, tuple[float, float]]:
    first = user.first
    top = np.argsort(-first, kind="stable")[:SHOWN]
    shown = np.zeros(len(relevant), dtype=bool)
    shown[top] = True
    up = [int(i) for i in top if relevant[i]]
    down = [int(i) for i in top if not relevant[i]]
    dense = not isinstance(user, TfidfUser)
    rule = DenseRule("linear", DENSE_LINEAR_WEIGHT) if dense else ("linear", LINEAR_WEIGHT, True)
    rated = dense_rated_scores if dense else rated_scores
    found = {"without feedback": next_list(first, shown, relevant),
             "Zotero actions alone": next_list(user.rescore(rule, up, [], shown), shown, relevant),
             "Zotero actions with removals": next_list(user.rescore(rule, up, down, shown), shown, relevant)}
    for boost in boosts:
        found[f"explicit ratings ×{boost:g}"] = next_list(rated(user, up, down, shown, [], boost), shown, relevant)
        found[f"ratings and saves ×{boost:g}"] = next_list(rated(user, up, down, shown, up, boost), shown, relevant)
    return found


def run_fold(data, fold: int, users: int, boosts, items=None) -> dict:
    started = time.perf_counter()
    totals: dict[str, list] = {}
    count = 0
    test_items = item_cold_folds(data.n_items)[fold]
    if items is None:
        people = _tfidf_users(data, test_items, TOP5, users, seed=0)
    else:
        from recommender.evaluation.feedback_sim import DenseUser, shipped_weights
        from recommender.evaluation.folds import settings_for

        people = _dense_users(data, test_items, items, shipped_weights(), settings_for(data, None), users, 0, DenseUser)
    for user, relevant in people:
        count += 1
        for arm, values in one_user(user, relevant, boosts).items():
            totals.setdefault(arm, []).append(values)
    arms = {arm: [float(np.nanmean([v[0] for v in values])), float(np.nanmean([v[1] for v in values]))]
            for arm, values in totals.items()}
    base = np.array(totals["Zotero actions alone"], dtype=float)
    paired = {}  # arm − Zotero actions alone, per user: mean and standard error of nDCG@20 (noise is per user)
    for arm, values in totals.items():
        difference = np.array(values, dtype=float)[:, 1] - base[:, 1]
        difference = difference[~np.isnan(difference)]
        paired[arm] = [float(difference.mean()), float(difference.std(ddof=1) / np.sqrt(len(difference)))]
    return {"fold": fold, "users": count, "seconds": round(time.perf_counter() - started, 1), "arms": arms,
            "ndcg_vs_zotero_actions": paired}


def main(argv: list[str]) -> None:
    folder, users = argv[0], int(argv[1]) if len(argv) > 1 and not argv[1].startswith("--") else 500
    data = load_dataset(f"citeulike-a:{folder}")
    items = None
    if "--dense" in argv:  # MiniLM rows and the shipped fused score (ALS and the dense map trained per fold)
        from recommender.evaluation.protocol import dense_report_rows
        from recommender.evaluation.splits import DenseItems
        from recommender.features import make_representation

        representation = make_representation("dense")
        items = DenseItems(dense_report_rows(data, representation), representation.model_id)
    validation = run_fold(data, 1, users, BOOSTS, items)
    boost = max(BOOSTS, key=lambda b: validation["arms"][f"explicit ratings ×{b:g}"][1])
    shipped = DENSE_LIKED_BOOST if items else LIKED_BOOST
    report = run_fold(data, 0, users, sorted({boost, shipped}), items)  # the chosen lift and zotrec's
    report |= {"data": data.name, "features": "dense, fused" if items else "tfidf top5", "chosen_boost": boost,
               "validation": validation}
    print(f"{data.name} item-cold fold 0 ({report['features']}), {report['users']} users, first {SHOWN} picks rated; "
          f"LIKED_BOOST {boost:g} chosen on fold 1 by nDCG@{SHOWN}")
    print(f"{'next list':<34}{'recall@20':>11}{'nDCG@20':>10}{'nDCG − Zotero actions alone (± s.e.)':>38}")
    for arm, (recall, ndcg) in report["arms"].items():
        gain, error = report["ndcg_vs_zotero_actions"][arm]
        print(f"{arm:<34}{recall:>11.4f}{ndcg:>10.4f}{gain:>+26.4f} ± {error:.4f}")
    if "--json" in argv:
        Path(argv[argv.index("--json") + 1]).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
