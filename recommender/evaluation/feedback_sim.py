"""Does learning from kept and dismissed recommendations help? A simulated Zotero user on CiteULike, item-cold.

Fold f's items lose every save (protocol.item_cold_folds); each evaluated user (≥ 1 training save, ≥ 1
held-out save) has a profile made of their training items' text. Over `rounds` rounds the user is shown a
top-`shown` list of the held-out items not shown before; they keep those among their hidden saves and
remove the others. Every arm excludes what was shown before, so the comparison isolates the learning:

- without feedback: the same profile every round;
- kept papers join the profile, and either a penalty for similarity to removed papers
  (`scoring.feedback.dismissed_penalty`) or a per-user linear model (`scoring.feedback.linear_feedback_scores`,
  the rule zotrec uses) trained with the kept and removed papers.

Per round: precision@`shown` of the shown list, recall@50 of the round's ranking over the user's held-out
saves not shown yet, and `found`: the share of the user's held-out saves shown in this and earlier rounds (what
the user has kept so far). An arm that finds more early leaves fewer, harder saves for later rounds, which
lowers its later per-round figures; `found` shows that side. The rule and its weight are chosen on another fold (validation) before the
reported fold is run (docs/evaluation.md).
"""

from __future__ import annotations

import logging
import time

import numpy as np

from recommender.collaborative.datasets import InteractionData
from recommender.evaluation.peers import aggregate_similarities
from recommender.evaluation.protocol import item_cold_folds, without_items
from recommender.scoring.aggregation import DEFAULT_AGGREGATION
from recommender.scoring.feedback import (
    dismissed_penalty,
    linear_feedback_scores,
    negative_sample,
    standardised,
)

log = logging.getLogger(__name__)

ROUNDS = 3
SHOWN = 20
RECALL_AT = 50
RULES = (0.5, 1.0, 2.0, ("linear", 0.5, True), ("linear", 1.0, True), ("linear", 2.0, True), ("linear", 4.0, True))
VALIDATION_FOLD = 1


def _features(data: InteractionData, train_items: np.ndarray):
    from recommender.features.tfidf import TfidfRepresentation

    ngrams = (1, 2) if data.word_order_kept else (1, 1)
    representation = TfidfRepresentation(ngram_range=ngrams).fit([data.texts[i] for i in train_items])
    return representation.transform(data.texts)


def _round_metrics(scores: np.ndarray, shown: np.ndarray, relevant: np.ndarray, size: int) -> tuple:
    """The next list (best `size` not shown before), its precision, and recall@50 over what is left."""
    candidates = np.where(shown, -np.inf, scores)
    order = np.argsort(-candidates, kind="stable")
    top = order[:size]
    left = relevant & ~shown
    recall = float(left[order[:RECALL_AT]].sum() / left.sum()) if left.any() else np.nan
    return top, float(relevant[top].sum() / size), recall


def simulate_user(profile_sims: np.ndarray, test_sims: np.ndarray, relevant: np.ndarray, arms: dict,
                  aggregation: str, rounds: int, size: int, rows=None, seed: int = 0
                  ) -> dict[str, list[tuple[float, float, float]]]:
    """One user, every arm: arm name → [(precision, recall@50, found)] per round.

    An arm is None (no feedback), a penalty weight (kept papers join the profile, dismissed ones penalise
    what is like them), or ("linear", weight, with_feedback): the content score plus `weight` × a per-user
    logistic regression (`rows` = (profile rows, candidate rows)); with_feedback=False trains it on the
    profile and random negatives only, to tell the model from the feedback it learns from.
    """
    results: dict[str, list[tuple[float, float]]] = {}
    base = aggregate_similarities(profile_sims, aggregation)
    for arm, setting in arms.items():
        shown = np.zeros(len(relevant), dtype=bool)
        kept: list[int] = []
        dismissed: list[int] = []
        per_round = []
        for _ in range(rounds):
            if setting is None or not (kept or dismissed):
                scores = base
            elif isinstance(setting, tuple):
                _, weight, learn = setting
                sims = np.vstack([profile_sims, test_sims[kept]]) if kept and learn else profile_sims
                content = aggregate_similarities(sims, aggregation)
                profile_rows, candidate_rows = rows
                negatives = negative_sample(len(relevant), profile_rows.shape[0] + len(kept), np.flatnonzero(shown),
                                            seed)
                used_kept, used_dismissed = (kept, dismissed) if learn else ([], [])
                linear = linear_feedback_scores(profile_rows, candidate_rows[used_kept], candidate_rows[used_dismissed],
                                                candidate_rows[negatives], candidate_rows)
                scores = standardised(content) + weight * standardised(linear)
            else:
                sims = np.vstack([profile_sims, test_sims[kept]]) if kept else profile_sims
                scores = aggregate_similarities(sims, aggregation)
                if dismissed and setting:
                    remaining = ~shown
                    nearest = test_sims[dismissed].max(axis=0)
                    scores = scores.copy()
                    scores[remaining] = dismissed_penalty(scores[remaining], nearest[remaining], setting)
            top, precision, recall = _round_metrics(scores, shown, relevant, size)
            shown[top] = True
            per_round.append((precision, recall, float((relevant & shown).sum() / max(relevant.sum(), 1))))
            if setting is not None:
                kept += [int(i) for i in top if relevant[i]]
                dismissed += [int(i) for i in top if not relevant[i]]
        results[arm] = per_round
    return results


def simulate_fold(data: InteractionData, fold: int, penalties: dict, *, users: int | None = None,
                  aggregation: str = DEFAULT_AGGREGATION, rounds: int = ROUNDS, size: int = SHOWN,
                  seed: int = 0) -> dict:
    """Every arm on one fold: arm → per round [mean precision, mean recall@50, mean found]."""
    started = time.perf_counter()
    test_items = item_cold_folds(data.n_items)[fold]
    train_items = np.setdiff1d(np.arange(data.n_items), test_items)
    train_matrix = without_items(data.interactions, test_items)
    rows = _features(data, train_items)
    test_rows = rows[test_items]
    test_sims = np.asarray((test_rows @ test_rows.T).toarray(), dtype=np.float32)
    held = data.interactions[:, test_items].tocsr()
    evaluated = np.flatnonzero((held.getnnz(axis=1) > 0) & (train_matrix.getnnz(axis=1) > 0))
    if users and users < len(evaluated):
        evaluated = np.sort(np.random.default_rng(seed).choice(evaluated, size=users, replace=False))
    totals: dict[str, list[list[float]]] = {arm: [[] for _ in range(rounds)] for arm in penalties}
    for user in evaluated:
        profile = rows[train_matrix[user].indices]
        profile_sims = np.asarray((profile @ test_rows.T).toarray(), dtype=np.float32)
        relevant = held[user].toarray().ravel() > 0
        for arm, per_round in simulate_user(profile_sims, test_sims, relevant, penalties, aggregation,
                                            rounds, size, (profile, test_rows), seed=int(user)).items():
            for r, values in enumerate(per_round):
                totals[arm][r].append(values)
    summary = {arm: [[float(np.mean([v[0] for v in values])), float(np.nanmean([v[1] for v in values])),
                      float(np.mean([v[2] for v in values]))]
                     for values in per_round] for arm, per_round in totals.items()}
    log.info("feedback simulation: fold %d, %d users, %.0f s", fold, len(evaluated), time.perf_counter() - started)
    return {"fold": fold, "users": int(len(evaluated)), "candidates": int(len(test_items)), "arms": summary}


def _arm_name(setting) -> str:
    if isinstance(setting, tuple):
        return f"with feedback: linear model ×{setting[1]:g}" if setting[2] else f"linear model ×{setting[1]:g}, no feedback"
    return f"with feedback: penalty {setting:g}"


def choose_rule(data: InteractionData, *, users: int | None = None, aggregation: str = DEFAULT_AGGREGATION,
                fold: int = VALIDATION_FOLD, candidates: tuple = RULES) -> tuple[object, dict]:
    """The feedback rule (a penalty weight or a linear-model weight) with the best last-round precision on a
    validation fold."""
    arms = {_arm_name(setting): setting for setting in candidates}
    report = simulate_fold(data, fold, arms, users=users, aggregation=aggregation)
    best = max(candidates, key=lambda setting: report["arms"][_arm_name(setting)][-1][0])
    return best, report


def evaluate_feedback(data: InteractionData, *, fold: int = 0, users: int | None = None,
                      aggregation: str = DEFAULT_AGGREGATION, rule=None) -> dict:
    """Choose the rule on the validation fold (unless given), then run it against no feedback on `fold`
    (with two ablations: the kept papers alone, and the linear model without the feedback examples)."""
    validation = None
    if rule is None:
        rule, validation = choose_rule(data, users=users, aggregation=aggregation)
    arms = {"without feedback": None, "kept papers join the profile only": 0.0}
    if isinstance(rule, tuple):
        arms[_arm_name(("linear", rule[1], False))] = ("linear", rule[1], False)
    arms[_arm_name(rule)] = rule
    report = simulate_fold(data, fold, arms, users=users, aggregation=aggregation)
    report.update(data=data.name, rule=_arm_name(rule), aggregation=aggregation, validation=validation)
    return report


def format_feedback_table(report: dict) -> str:
    """One row per arm and round; the last line gives round-3 with ÷ without feedback."""
    lines = [f"{report['data']} item-cold fold {report['fold']}, {report['users']} users, "
             f"{report['candidates']} candidates, aggregation {report['aggregation']}",
             f"{'arm':<34}{'round':>6}{'precision@' + str(SHOWN):>15}{'recall@' + str(RECALL_AT):>12}{'found':>8}"]
    for arm, per_round in report["arms"].items():
        for number, (precision, recall, found) in enumerate(per_round, start=1):
            lines.append(f"{arm:<34}{number:>6}{precision:>15.4f}{recall:>12.4f}{found:>8.4f}")
    arms = list(report["arms"].values())
    without, with_feedback = arms[0][-1], arms[-1][-1]
    if without[0] > 0:
        lines.append(f"last round, with ÷ without feedback: precision {with_feedback[0] / without[0]:.3f}×, "
                     f"recall@{RECALL_AT} {with_feedback[1] / without[1]:.3f}×, found {with_feedback[2] / without[2]:.3f}×")
    return "\n".join(lines) + "\n"
