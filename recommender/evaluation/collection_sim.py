"""How much does a standing collection change when the user acts on one paper? A simulated Zotero user on
CiteULike (item-cold, tf-idf, the feedback rule zotrec ships on tf-idf) with a collection of `size` papers.

Actions alternate: the user acts on one paper of the collection (seeded, uniformly: a hidden save is kept, any
other paper trashed), then saves one of their hidden saves from elsewhere (one new library item). The ranking
is made again with that feedback and the collection refreshed by `scoring.stability.stable_selection` with a
margin (0: the plain top N, what sync did before). Per action: how many papers came in (a trash: the ideal is
1, the refill; a new item: 0); at the end: the share of the collection that are hidden saves (precision) and of
the user's hidden saves ever shown (found), so a margin that freezes the list shows what it costs.

    python -m recommender.evaluation.collection_sim citeulike-a:../shared/data/citeulike-a [users] [actions] [fold]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from recommender.evaluation.feedback_sim import SHOWN, _tfidf_users
from recommender.evaluation.folds import item_cold_folds
from recommender.scoring.aggregation import TOP5
from recommender.scoring.stability import stable_selection

ACTIONS = 6
MARGINS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
RULE = ("linear", 4.0, True)  # the tf-idf rule zotrec applies (scoring.feedback.LINEAR_WEIGHT)


def simulate_collection(user, relevant: np.ndarray, margin: float, *, actions: int = ACTIONS, size: int = SHOWN,
                        seed: int = 0) -> dict:
    """One user's collection through `actions` actions: papers added per action (trash / keep), precision and
    found at the end."""
    rng = np.random.default_rng(seed)
    kept: list[int] = []
    dismissed: list[int] = []
    seen = np.zeros(len(relevant), dtype=bool)
    shown = _refresh(user.first, (), size, margin, [])
    seen[shown] = True
    added: dict[str, list[int]] = {"trash": [], "keep": [], "new item": []}
    for number in range(actions):
        elsewhere = np.flatnonzero(relevant & ~seen & ~np.isin(np.arange(len(relevant)), kept))
        if number % 2 and len(elsewhere):  # the user saved one of their papers from elsewhere
            paper, action = int(elsewhere[rng.integers(len(elsewhere))]), "new item"
        else:
            paper = int(shown[rng.integers(len(shown))])
            action = "keep" if relevant[paper] else "trash"
        (dismissed if action == "trash" else kept).append(paper)
        scores = user.rescore(RULE, kept, dismissed, seen)
        before = set(shown.tolist()) - {paper}
        shown = _refresh(scores, before, size, margin, kept + dismissed)
        added[action].append(len(set(shown.tolist()) - before))
        seen[shown] = True
    return {"added": added, "precision": float(relevant[shown].mean()),
            "found": float((relevant & seen).sum() / max(relevant.sum(), 1))}


def _refresh(scores: np.ndarray, incumbents, size: int, margin: float, gone: list[int]) -> np.ndarray:
    ranked = np.lexsort((np.arange(len(scores)), -scores))
    ranked = ranked[~np.isin(ranked, gone)]
    return np.asarray(stable_selection(ranked.tolist(), scores[ranked].tolist(), incumbents, size, margin))


def simulate(data, *, fold: int = 0, users: int = 100, actions: int = ACTIONS, margins=MARGINS, seed: int = 0) -> dict:
    """margin → median / mean papers added per action (trash, keep, all), share of actions with one refill,
    the most added by one keep, mean precision and found at the end."""
    test_items = item_cold_folds(data.n_items)[fold]
    results: dict[float, list[dict]] = {margin: [] for margin in margins}
    for number, (user, relevant) in enumerate(_tfidf_users(data, test_items, TOP5, users, seed)):
        for margin in margins:
            results[margin].append(simulate_collection(user, relevant, margin, actions=actions, seed=number))
    table = {}
    for margin, runs in results.items():
        trash, keep, new = ([n for run in runs for n in run["added"][kind]] for kind in ("trash", "keep", "new item"))
        table[margin] = {"median": float(np.median(trash + keep + new)), "mean": float(np.mean(trash + keep + new)),
                         "median trash": float(np.median(trash)), "trash = 1": float(np.mean(np.array(trash) == 1)),
                         "median new": float(np.median(new)), "new max": int(max(new, default=0)),
                         "new ≤ 3": float(np.mean(np.array(new) <= 3)), "keeps": len(keep),
                         "precision": float(np.mean([r["precision"] for r in runs])),
                         "found": float(np.mean([r["found"] for r in runs]))}
    return {"users": len(results[margins[0]]), "actions": actions, "size": SHOWN, "table": table}


def format_table(report: dict) -> str:
    lines = [f"{report['users']} users, {report['actions']} actions each, a collection of {report['size']}",
             "papers that come in per action (trash: the ideal is 1, the refill; a new library item: 0)",
             f"{'margin':>6} {'median':>7} {'mean':>6} {'trash':>6} {'trash=1':>8} {'new item':>9} {'new max':>8} "
             f"{'new≤3':>6} {'precision':>10} {'found':>7}"]
    for margin, row in report["table"].items():
        lines.append(f"{margin:>6g} {row['median']:>7g} {row['mean']:>6.2f} {row['median trash']:>6g} "
                     f"{row['trash = 1']:>8.2f} {row['median new']:>9g} {row['new max']:>8d} {row['new ≤ 3']:>6.2f} "
                     f"{row['precision']:>10.4f} {row['found']:>7.4f}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    from recommender.collaborative.datasets import load_dataset

    started = time.process_time()
    data = load_dataset(argv[0])
    users = int(argv[1]) if len(argv) > 1 else 100
    actions = int(argv[2]) if len(argv) > 2 else ACTIONS
    fold = int(argv[3]) if len(argv) > 3 else 0
    print(f"{data.name}, item-cold fold {fold}")
    print(format_table(simulate(data, fold=fold, users=users, actions=actions)), end="")
    print(f"CPU {time.process_time() - started:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
