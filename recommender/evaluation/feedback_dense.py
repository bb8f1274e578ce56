"""The simulated user of feedback_sim.py on what zotrec's default scoring sees: MiniLM item vectors and the
fused score (scoring/fusion.py: dense top5 + tf-idf top5 + the per-user linear model + the dense collaborative
part, with the shipped model's weights), on the same item-cold folds and the same sampled users.

Each fold is set up by dense_protocol.prepare_dense_fold (ALS and the dense → factor map trained without the
fold's items; the user folded in from their items' predicted factors, as at run time). A kept paper joins the
profile in every signal (its vector, its tf-idf row, its predicted factor), as a kept Zotero item does; the
feedback rule then acts on the fused score as `scoring.feedback.apply_feedback` does at run time.

A rule (`DenseRule`) is one of:
- "linear": + weight × z(a per-user logistic regression with kept papers positive and removed ones negative)
  (`scoring.feedback.linear_feedback_scores`, what zotrec applies at run time), kept / removed papers weighted;
- "learned": the removed papers join the fused score's own linear model as negatives (weighted), and its share
  in the fusion may be raised; no separate model;
- "rocchio": + kept_weight × z(cosine to the mean kept vector) − dismissed_weight × z(cosine to the mean removed
  vector), a Rocchio shift of the profile on the dense vectors.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from recommender.collaborative.datasets import InteractionData
from recommender.collaborative.model import TextFeatures
from recommender.evaluation.dense_protocol import prepare_dense_fold
from recommender.evaluation.feedback_sim import RECALL_AT, ROUNDS, SHOWN, _round_metrics
from recommender.evaluation.peers import aggregate_similarities
from recommender.evaluation.protocol import item_cold_folds, settings_for
from recommender.scoring.feedback import linear_feedback_scores, negative_sample, standardised
from recommender.scoring.fusion import LEARNED_BASE, FusionWeights, default_weights, fuse
from recommender.scoring.learned import linear_user_scores

log = logging.getLogger(__name__)

__all__ = ["DenseRule", "simulate_dense_fold", "RECALL_AT", "SHOWN"]


@dataclass(frozen=True)
class DenseRule:
    """How the kept and removed papers act on the fused score (see the module docstring); kind None: not at
    all (kept papers still join the profile unless `learn` is False: the no-feedback arm)."""

    kind: str | None = None
    weight: float = 0.0
    kept_weight: float = 1.0
    dismissed_weight: float = 1.0
    learn: bool = True


NO_FEEDBACK = DenseRule(learn=False)


def shipped_weights() -> FusionWeights:
    """The fusion weights a zotrec user gets by default (stored in the shipped dense collaborative model)."""
    from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel

    return default_weights(DenseCollaborativeModel.load(SHIPPED_MODEL))


class _User:
    """One user's fused-score signals over the fold's candidates, with the kept papers folded in."""

    def __init__(self, fold, extra, position: np.ndarray, weights: FusionWeights, seed: int) -> None:
        self.fold, self.extra, self.seed = fold, extra, seed
        self.position = position
        self.weights = {"lexical": weights.lexical, "learned": weights.learned, "collaborative": weights.collaborative}

    def fused(self, kept: list[int], dismissed: list[int] | None = None, learned_share: float | None = None,
              dismissed_weight: float = 1.0) -> np.ndarray:
        """The fused score with `kept` in the profile; `dismissed` (when given) negatives of its linear model."""
        fold, extra, p = self.fold, self.extra, self.position
        content = aggregate_similarities(np.vstack([fold.dense_similarity[p], extra["dense"][kept]]), LEARNED_BASE)
        lexical = aggregate_similarities(np.vstack([fold.lexical_similarity[p], extra["lexical"][kept]]), LEARNED_BASE)
        library = np.vstack([fold.train_vectors[p], fold.test_vectors[kept]])
        if dismissed is not None:
            learned = _learned_with_negatives(library, fold.test_vectors, kept, dismissed,
                                              dismissed_weight, self.seed)
        else:
            learned = linear_user_scores(library, fold.test_vectors, fold.test_vectors, seed=self.seed,
                                         exclude=np.asarray(kept, dtype=np.int64))
        factors = np.vstack([fold.train_factors_from_text[p], fold.test_factors[kept]])
        collaborative = fold.test_factors @ fold.model.user_vector(factors)
        weights = dict(self.weights)
        if learned_share is not None:  # raise the linear model's share, the others shrink in proportion
            rest = 1.0 - weights["learned"]
            scale = (1.0 - learned_share) / rest if rest > 0 else 0.0
            weights = {name: value * scale for name, value in weights.items()} | {"learned": learned_share}
        weights["content"] = max(1.0 - sum(weights.values()), 0.0)
        return fuse({"content": content, "lexical": lexical, "learned": learned, "collaborative": collaborative},
                    weights)


def _learned_with_negatives(library, candidates, kept, dismissed, dismissed_weight, seed) -> np.ndarray:
    """scoring.learned's model (balanced classes, negatives sampled from the candidates) with the removed
    papers as extra negatives of weight `dismissed_weight`."""
    from sklearn.linear_model import LogisticRegression

    from recommender.scoring.learned import C, MIN_NEGATIVES, NEGATIVES_PER_POSITIVE

    rng = np.random.default_rng(seed)
    pool = np.setdiff1d(np.arange(len(candidates)), np.asarray(kept + dismissed, dtype=np.int64))
    wanted = min(max(MIN_NEGATIVES, NEGATIVES_PER_POSITIVE * len(library)), len(pool))
    negatives = candidates[rng.choice(pool, size=wanted, replace=False)]
    x = np.vstack([library, negatives, candidates[dismissed]]).astype(np.float64)
    y = np.r_[np.ones(len(library)), np.zeros(len(negatives) + len(dismissed))]
    total = len(library) + len(negatives)  # class_weight="balanced" over the library and the sampled negatives
    weight = np.r_[np.full(len(library), total / (2 * len(library))), np.full(len(negatives), total / (2 * len(negatives))),
                   np.full(len(dismissed), dismissed_weight * total / (2 * len(negatives)))]
    model = LogisticRegression(C=C, max_iter=200).fit(x, y, sample_weight=weight)
    return np.asarray(candidates, dtype=np.float64) @ model.coef_.ravel()


def _scores(user: _User, rule: DenseRule, kept: list[int], dismissed: list[int], shown: np.ndarray) -> np.ndarray:
    fold = user.fold
    if not rule.learn or not (kept or dismissed):
        return user.fused([])
    if rule.kind == "learned":
        return user.fused(kept, dismissed, rule.weight or None, rule.dismissed_weight)
    base = user.fused(kept)
    if rule.kind is None or not rule.weight:
        return base
    vectors = fold.test_vectors
    if rule.kind == "rocchio":
        shift = np.zeros(len(vectors))
        if kept:
            shift += rule.kept_weight * standardised(vectors @ vectors[kept].mean(axis=0))
        if dismissed:
            shift -= rule.dismissed_weight * standardised(vectors @ vectors[dismissed].mean(axis=0))
        return standardised(base) + rule.weight * standardised(shift)
    profile = np.vstack([fold.train_vectors[user.position], vectors[kept]])  # as at run time: kept are library items
    negatives = negative_sample(len(vectors), len(profile), np.flatnonzero(shown), user.seed)
    linear = linear_feedback_scores(profile, vectors[kept], vectors[dismissed], vectors[negatives], vectors,
                                    kept_weight=rule.kept_weight, dismissed_weight=rule.dismissed_weight)
    return standardised(base) + rule.weight * standardised(linear)


def simulate_dense_user(user: _User, relevant: np.ndarray, arms: dict[str, DenseRule], rounds: int = ROUNDS,
                        size: int = SHOWN) -> dict[str, list[tuple[float, float, float]]]:
    """Every arm for one user: arm → [(precision@size, recall@50 over the saves not shown yet, found)]."""
    results = {}
    first = user.fused([])
    for arm, rule in arms.items():
        shown = np.zeros(len(relevant), dtype=bool)
        kept: list[int] = []
        dismissed: list[int] = []
        per_round = []
        for number in range(rounds):
            scores = first if number == 0 or not rule.learn else _scores(user, rule, kept, dismissed, shown)
            top, precision, recall = _round_metrics(scores, shown, relevant, size)
            shown[top] = True
            per_round.append((precision, recall, float((relevant & shown).sum() / max(relevant.sum(), 1))))
            kept += [int(i) for i in top if relevant[i]]
            dismissed += [int(i) for i in top if not relevant[i]]
        results[arm] = per_round
    return results


def simulate_dense_fold(data: InteractionData, vectors: np.ndarray, fold: int, arms: dict[str, DenseRule], *,
                        encoder_id: str, users: int | None = None, weights: FusionWeights | None = None,
                        rounds: int = ROUNDS, size: int = SHOWN, seed: int = 0, settings=None) -> dict:
    """Every arm on one fold, on dense features with the fused score; the users are sampled as in
    feedback_sim.simulate_fold (same seed, same eligible users), so both feature kinds see the same people."""
    started = time.perf_counter()
    weights = weights or shipped_weights()
    test_items = item_cold_folds(data.n_items)[fold]
    settings = settings_for(data, settings)
    prepared = prepare_dense_fold(data, vectors, test_items, settings, encoder_id)
    train_items = prepared.train_items
    features = TextFeatures(settings.n_features, settings.ngram_range).fit([data.texts[i] for i in train_items])
    test_rows = features.transform([data.texts[i] for i in test_items])
    extra = {"dense": prepared.test_vectors @ prepared.test_vectors.T,
             "lexical": (test_rows @ test_rows.T).toarray().astype(np.float32)}
    rows = np.arange(len(prepared.users))
    if users and users < len(rows):
        chosen = np.sort(np.random.default_rng(seed).choice(prepared.users, size=users, replace=False))
        rows = np.searchsorted(prepared.users, chosen)
    totals: dict[str, list[list[tuple]]] = {arm: [[] for _ in range(rounds)] for arm in arms}
    for row in rows:
        user = _User(prepared, extra, prepared.positions[row], weights, seed=int(prepared.users[row]))
        for arm, per_round in simulate_dense_user(user, prepared.relevant[row], arms, rounds, size).items():
            for number, values in enumerate(per_round):
                totals[arm][number].append(values)
    summary = {arm: [[float(np.mean([v[0] for v in values])), float(np.nanmean([v[1] for v in values])),
                      float(np.mean([v[2] for v in values]))] for values in per_round]
               for arm, per_round in totals.items()}
    log.info("dense feedback simulation: fold %d, %d users, %.0f s", fold, len(rows), time.perf_counter() - started)
    return {"fold": fold, "users": int(len(rows)), "candidates": int(len(test_items)), "arms": summary,
            "features": f"dense ({encoder_id}), fused score",
            "fusion_weights": {"lexical": weights.lexical, "learned": weights.learned,
                               "collaborative": weights.collaborative}}


# The rules `choose_dense_rule` compares: the run-time rule (scoring.feedback.linear_feedback_scores) at several
# weights; rocchio and "learned" were tried by hand (docs/evaluation.md) but are not what zotrec can apply after
# the fused score.
DENSE_RULES = tuple(DenseRule("linear", weight) for weight in (0.25, 0.5, 1.0, 4.0))


def rule_name(rule: DenseRule) -> str:
    if not rule.learn:
        return "without feedback"
    if rule.kind is None:
        return "kept papers join the profile only"
    return f"with feedback: {rule.kind} ×{rule.weight:g}"


def evaluate_feedback_dense(data: InteractionData, representation, encoder_id: str, *, fold: int = 0,
                            users: int | None = None, validation_fold: int = 1,
                            candidates: tuple[DenseRule, ...] = DENSE_RULES, settings=None) -> dict:
    """feedback_sim.evaluate_feedback on dense features and the fused score: the linear model's weight chosen by
    round-3 precision on the validation fold, then reported on `fold` against no feedback, the kept papers alone
    and the tf-idf simulation's weight (4)."""
    from recommender.evaluation.dense_protocol import dense_report_rows

    vectors = dense_report_rows(data, representation)
    validation = simulate_dense_fold(data, vectors, validation_fold, {rule_name(r): r for r in candidates},
                                     encoder_id=encoder_id, users=users, settings=settings)
    chosen = max(candidates, key=lambda r: validation["arms"][rule_name(r)][-1][0])
    arms = {rule_name(r): r for r in (NO_FEEDBACK, DenseRule(), DenseRule("linear", 4.0))}
    arms.pop(rule_name(chosen), None)
    arms[rule_name(chosen)] = chosen  # last: the table's ratio line compares it with the first
    report = simulate_dense_fold(data, vectors, fold, arms, encoder_id=encoder_id, users=users, settings=settings)
    report.update(data=data.name, rule=rule_name(chosen), aggregation="fused (dense top5 + tf-idf + linear + ALS)",
                  validation=validation)
    return report
