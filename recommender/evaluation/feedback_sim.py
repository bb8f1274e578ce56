"""Does learning from kept and dismissed recommendations help? A simulated Zotero user on CiteULike, item-cold,
on tf-idf (top5 of the profile) or on dense item vectors with zotrec's fused score (the `items` parameter).

Fold f's items lose every save (folds.item_cold_folds); each evaluated user (≥ 1 training save, ≥ 1
held-out save) has a profile made of their training items. Over `rounds` rounds the user is shown a
top-`shown` list of the held-out items not shown before; they keep those among their hidden saves and
remove the others. Every arm excludes what was shown before, so the comparison isolates the learning:

- without feedback: the same profile every round;
- kept papers join the profile, and either a penalty for similarity to removed papers (tf-idf:
  `scoring.feedback.dismissed_penalty`) or a per-user linear model (`scoring.feedback.linear_feedback_scores`,
  the rule zotrec applies) trained with the kept and removed papers.

On dense features each fold is set up as in the protocol (splits.prepare_fold: ALS and the dense map trained
without the fold's items, the user folded in from their items' predicted factors); a kept paper joins the
profile in every signal of the fused score, as a kept Zotero item does.

Per round: precision@`shown` of the shown list, recall@50 of the round's ranking over the user's held-out
saves not shown yet, and `found`: the share of the user's held-out saves shown in this and earlier rounds.
An arm that finds more early leaves fewer, harder saves for later rounds, which lowers its later
per-round figures; `found` shows that side. The rule and its weight are chosen on another fold
(validation) before the reported fold is run (docs/evaluation.md). Both kinds sample the same users.
"""

from __future__ import annotations

from recommender.errors import SettingError
import logging
import time
from dataclasses import dataclass

import numpy as np

from recommender import progress
from recommender.collaborative.datasets import InteractionData
from recommender.evaluation.folds import item_cold_folds, sample_users, settings_for, without_items
from recommender.evaluation.peers import aggregate_similarities
from recommender.evaluation.splits import DenseItems, prepare_fold
from recommender.features.tfidf import TfidfRepresentation
from recommender.scoring.aggregation import TOP5
from recommender.scoring.feedback import dismissed_penalty, linear_feedback_scores, negative_sample, neighbourhood
from recommender.scoring.fusion import LEARNED_BASE, FusionWeights, default_weights, fuse, standardise
from recommender.scoring.learned import linear_user_scores

log = logging.getLogger(__name__)

ROUNDS = 3
SHOWN = 20
RECALL_AT = 50
RULES = (0.5, 1.0, 2.0, ("linear", 0.5, True), ("linear", 1.0, True), ("linear", 2.0, True), ("linear", 4.0, True))
VALIDATION_FOLD = 1


@dataclass(frozen=True)
class DenseRule:
    """How the kept and removed papers act on the fused score; kind None: not at all (kept papers still join
    the profile unless `learn` is False: the no-feedback arm); "linear": + weight × z(the run-time linear
    feedback model), kept / removed papers weighted. Other kinds: experiments/feedback_rules.py."""

    kind: str | None = None
    weight: float = 0.0
    kept_weight: float = 1.0
    dismissed_weight: float = 1.0
    learn: bool = True


NO_FEEDBACK = DenseRule(learn=False)
# The rules the dense run chooses among: the run-time rule at several weights.
DENSE_RULES = tuple(DenseRule("linear", weight) for weight in (0.25, 0.5, 1.0, 4.0))


class TfidfUser:
    """One user's tf-idf content score (the profile's similarities aggregated), and what feedback does to it.

    An arm's setting is None (no feedback), a penalty weight (kept papers join the profile, dismissed ones
    penalise what is like them), or ("linear", weight, with_feedback): the content score plus `weight` × a
    per-user logistic regression (`rows` = (profile rows, candidate rows)); with_feedback=False trains it on
    the profile and random negatives only, to tell the model from the feedback it learns from.
    """

    def __init__(self, profile_sims: np.ndarray, test_sims: np.ndarray, aggregation: str, rows=None,
                 seed: int = 0) -> None:
        self.profile_sims, self.test_sims, self.aggregation, self.rows, self.seed = (
            profile_sims, test_sims, aggregation, rows, seed)
        self.first = aggregate_similarities(profile_sims, aggregation)

    def rescore(self, setting, kept: list[int], dismissed: list[int], shown: np.ndarray) -> np.ndarray:
        if setting is None or not (kept or dismissed):
            return self.first
        if isinstance(setting, tuple):
            _, weight, learn = setting
            sims = np.vstack([self.profile_sims, self.test_sims[kept]]) if kept and learn else self.profile_sims
            content = aggregate_similarities(sims, self.aggregation)
            profile_rows, candidate_rows = self.rows
            used_kept, used_dismissed = (kept, dismissed) if learn else ([], [])
            exclude = np.union1d(np.flatnonzero(shown), neighbourhood(candidate_rows, used_kept))
            negatives = negative_sample(len(shown), profile_rows.shape[0] + len(kept), exclude, self.seed)
            linear = linear_feedback_scores(profile_rows, candidate_rows[used_kept], candidate_rows[used_dismissed],
                                            candidate_rows[negatives], candidate_rows)
            return standardise(content) + weight * standardise(linear)
        sims = np.vstack([self.profile_sims, self.test_sims[kept]]) if kept else self.profile_sims
        scores = aggregate_similarities(sims, self.aggregation)
        if dismissed and setting:
            remaining = ~shown
            nearest = self.test_sims[dismissed].max(axis=0)
            scores = scores.copy()
            scores[remaining] = dismissed_penalty(scores[remaining], nearest[remaining], setting)
        return scores


class DenseUser:
    """One user's fused-score signals over a dense split's candidates, with the kept papers folded in; an
    arm's setting is a DenseRule."""

    def __init__(self, fold, extra, position: np.ndarray, weights: FusionWeights, seed: int) -> None:
        self.fold, self.extra, self.seed = fold, extra, seed
        self.position = position
        self.weights = {"lexical": weights.lexical, "learned": weights.learned, "collaborative": weights.collaborative}
        self.first = self.fused([])

    def signals(self, kept: list[int]) -> dict[str, np.ndarray]:
        """The fused score's inputs with `kept` in the profile (the linear model's negatives never kept ones)."""
        fold, extra, p = self.fold, self.extra, self.position
        library = np.vstack([fold.train_vectors[p], fold.test_vectors[kept]])
        factors = np.vstack([fold.train_factors_from_text[p], fold.test_factors[kept]])
        return {
            "content": aggregate_similarities(np.vstack([fold.similarity[p], extra["dense"][kept]]), LEARNED_BASE),
            "lexical": aggregate_similarities(np.vstack([fold.lexical_similarity[p], extra["lexical"][kept]]),
                                              LEARNED_BASE),
            "learned": linear_user_scores(library, fold.test_vectors, fold.test_vectors, seed=self.seed,
                                          exclude=np.asarray(kept, dtype=np.int64)),
            "collaborative": fold.test_factors @ fold.model.user_vector(factors)}

    def fused(self, kept: list[int], signals: dict[str, np.ndarray] | None = None,
              weights: dict[str, float] | None = None) -> np.ndarray:
        weights = dict(self.weights if weights is None else weights)
        weights["content"] = max(1.0 - sum(weights.values()), 0.0)
        return fuse(self.signals(kept) if signals is None else signals, weights)

    def rescore(self, rule: DenseRule, kept: list[int], dismissed: list[int], shown: np.ndarray) -> np.ndarray:
        if not rule.learn or not (kept or dismissed):
            return self.first
        base = self.fused(kept)
        if rule.kind is None or not rule.weight:
            return base
        if rule.kind != "linear":
            raise SettingError(f"unknown feedback rule '{rule.kind}' (experiments/feedback_rules.py has the others)")
        vectors = self.fold.test_vectors
        profile = np.vstack([self.fold.train_vectors[self.position], vectors[kept]])  # kept are library items now
        exclude = np.union1d(np.flatnonzero(shown), neighbourhood(vectors, kept))
        negatives = negative_sample(len(vectors), len(profile), exclude, self.seed)
        linear = linear_feedback_scores(profile, vectors[kept], vectors[dismissed], vectors[negatives], vectors,
                                        kept_weight=rule.kept_weight, dismissed_weight=rule.dismissed_weight)
        return standardise(base) + rule.weight * standardise(linear)


def _round_metrics(scores: np.ndarray, shown: np.ndarray, relevant: np.ndarray, size: int) -> tuple:
    """The next list (best `size` not shown before), its precision, and recall@50 over what is left."""
    candidates = np.where(shown, -np.inf, scores)
    order = np.argsort(-candidates, kind="stable")
    top = order[:size]
    left = relevant & ~shown
    recall = float(left[order[:RECALL_AT]].sum() / left.sum()) if left.any() else np.nan
    return top, float(relevant[top].sum() / size), recall


def simulate_user(user, relevant: np.ndarray, arms: dict, rounds: int = ROUNDS, size: int = SHOWN
                  ) -> dict[str, list[tuple[float, float, float]]]:
    """One user (TfidfUser or DenseUser), every arm: arm name → [(precision, recall@50, found)] per round."""
    results = {}
    for arm, setting in arms.items():
        shown = np.zeros(len(relevant), dtype=bool)
        kept: list[int] = []
        dismissed: list[int] = []
        per_round = []
        for number in range(rounds):
            scores = user.first if number == 0 else user.rescore(setting, kept, dismissed, shown)
            top, precision, recall = _round_metrics(scores, shown, relevant, size)
            shown[top] = True
            per_round.append((precision, recall, float((relevant & shown).sum() / max(relevant.sum(), 1))))
            kept += [int(i) for i in top if relevant[i]]
            dismissed += [int(i) for i in top if not relevant[i]]
        results[arm] = per_round
    return results


def _tfidf_users(data: InteractionData, test_items: np.ndarray, aggregation: str, users: int | None, seed: int):
    """(user, relevant) for the sampled users of a tf-idf fold (hashed tf-idf fitted on the training items)."""
    train_items = np.setdiff1d(np.arange(data.n_items), test_items)
    train_matrix = without_items(data.interactions, test_items)
    ngrams = (1, 2) if data.word_order_kept else (1, 1)
    rows = TfidfRepresentation(ngram_range=ngrams).fit([data.texts[i] for i in train_items]).transform(data.texts)
    test_rows = rows[test_items]
    test_sims = np.asarray((test_rows @ test_rows.T).toarray(), dtype=np.float32)
    held = data.interactions[:, test_items].tocsr()
    evaluated = np.flatnonzero((held.getnnz(axis=1) > 0) & (train_matrix.getnnz(axis=1) > 0))
    for user in sample_users(evaluated, users, seed):
        profile = rows[train_matrix[user].indices]
        profile_sims = np.asarray((profile @ test_rows.T).toarray(), dtype=np.float32)
        yield (TfidfUser(profile_sims, test_sims, aggregation, (profile, test_rows), seed=int(user)),
               held[user].toarray().ravel() > 0)


def _dense_users(data, test_items, items: DenseItems, weights: FusionWeights, settings, users, seed, user_type):
    """(user, relevant) for the sampled users of a dense fold (the same users _tfidf_users samples)."""
    fold = prepare_fold(data, test_items, settings, items)
    features = TfidfRepresentation(settings.n_features, settings.ngram_range).fit(
        [data.texts[i] for i in fold.train_items])
    test_rows = features.transform([data.texts[i] for i in test_items])
    extra = {"dense": fold.test_vectors @ fold.test_vectors.T,
             "lexical": (test_rows @ test_rows.T).toarray().astype(np.float32)}
    for row in np.searchsorted(fold.users, sample_users(fold.users, users, seed)):
        yield (user_type(fold, extra, fold.positions[row], weights, seed=int(fold.users[row])), fold.relevant[row])


def shipped_weights() -> FusionWeights:
    """The fusion weights a zotrec user gets by default (stored in the shipped dense collaborative model)."""
    from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel

    return default_weights(DenseCollaborativeModel.load(SHIPPED_MODEL))


def simulate_fold(data: InteractionData, fold: int, arms: dict, *, users: int | None = None,
                  aggregation: str = TOP5, rounds: int = ROUNDS, size: int = SHOWN, seed: int = 0,
                  items: DenseItems | None = None, weights: FusionWeights | None = None, settings=None,
                  user_type=DenseUser) -> dict:
    """Every arm on one fold, tf-idf (`items` None; arms: TfidfUser settings) or dense with the fused score
    (arms: DenseRule; `weights`: the shipped model's unless given): arm → per round [mean precision,
    mean recall@50, mean found]."""
    started = time.perf_counter()
    test_items = item_cold_folds(data.n_items)[fold]
    if items is None:
        people = _tfidf_users(data, test_items, aggregation, users, seed)
    else:
        weights = weights or shipped_weights()
        people = _dense_users(data, test_items, items, weights, settings_for(data, settings), users, seed, user_type)
    totals: dict[str, list[list[tuple]]] = {arm: [[] for _ in range(rounds)] for arm in arms}
    count = 0
    with progress.bar("Simulating users", users, log_steps=True) as advance:
        for user, relevant in people:
            count += 1
            for arm, per_round in simulate_user(user, relevant, arms, rounds, size).items():
                for number, values in enumerate(per_round):
                    totals[arm][number].append(values)
            advance(1)
    summary = {arm: [[float(np.mean([v[0] for v in values])), float(np.nanmean([v[1] for v in values])),
                      float(np.mean([v[2] for v in values]))] for values in per_round]
               for arm, per_round in totals.items()}
    log.info("feedback simulation: fold %d, %d users, %.0f s", fold, count, time.perf_counter() - started)
    report = {"fold": fold, "users": count, "candidates": int(len(test_items)), "arms": summary}
    if items is not None:
        report |= {"features": f"dense ({items.encoder_id}), fused score",
                   "fusion_weights": {"lexical": weights.lexical, "learned": weights.learned,
                                      "collaborative": weights.collaborative}}
    return report


def arm_name(setting) -> str:
    """The report's name of a rule: a DenseRule, a tf-idf penalty weight or ("linear", weight, with_feedback)."""
    if isinstance(setting, DenseRule):
        if not setting.learn:
            return "without feedback"
        return "kept papers join the profile only" if setting.kind is None else \
            f"with feedback: {setting.kind} ×{setting.weight:g}"
    if isinstance(setting, tuple):
        weight = f"{setting[1]:g}"
        return f"with feedback: linear model ×{weight}" if setting[2] else f"linear model ×{weight}, no feedback"
    return f"with feedback: penalty {setting:g}"


def evaluate_feedback(data: InteractionData, *, fold: int = 0, users: int | None = None,
                      aggregation: str = TOP5, rule=None, candidates: tuple | None = None,
                      validation_fold: int = VALIDATION_FOLD, representation=None, encoder_id: str | None = None,
                      settings=None) -> dict:
    """Choose the rule by last-round precision on the validation fold (unless given), then run it on `fold`
    against no feedback and the kept papers alone (tf-idf: and the linear model without the feedback
    examples; dense, with a `representation`: and the tf-idf run's weight, 4)."""
    items = None
    if representation is not None:
        from recommender.evaluation.protocol import dense_report_rows

        items = DenseItems(dense_report_rows(data, representation), encoder_id)
    candidates = candidates or (RULES if items is None else DENSE_RULES)
    run = {"users": users, "aggregation": aggregation, "items": items, "settings": settings}
    validation = None
    if rule is None:
        validation = simulate_fold(data, validation_fold, {arm_name(r): r for r in candidates}, **run)
        rule = max(candidates, key=lambda r: validation["arms"][arm_name(r)][-1][0])
    if items is None:
        arms = {"without feedback": None, "kept papers join the profile only": 0.0}
        if isinstance(rule, tuple):
            arms[arm_name(("linear", rule[1], False))] = ("linear", rule[1], False)
    else:
        arms = {arm_name(r): r for r in (NO_FEEDBACK, DenseRule(), DenseRule("linear", 4.0))}
        arms.pop(arm_name(rule), None)
    arms[arm_name(rule)] = rule  # last: the table's ratio line compares it with the first
    report = simulate_fold(data, fold, arms, **run)
    report.update(data=data.name, rule=arm_name(rule),
                  aggregation=aggregation if items is None else "fused (dense top5 + tf-idf + linear + ALS)",
                  validation=validation)
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
