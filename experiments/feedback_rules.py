"""Other ways of using kept and removed papers on the dense fused score, tried and not shipped
(experiments/README.md): the dense feedback simulation (recommender/evaluation/feedback_sim.py) with
hand-picked rules on one fold and a user sample.

- "learned": the removed papers join the fused score's own linear model as weighted negatives, and its
  share in the fusion may be raised (WEIGHT: the share; 0 keeps it); no separate model;
- "rocchio": + WEIGHT × z(kept_weight × z(cosine to the mean kept vector) − removed_weight × z(cosine to the
  mean removed vector)), a Rocchio shift on the dense vectors;
- "linear": the run-time rule (scoring.feedback.linear_feedback_scores), for comparison; "kept": the kept
  papers alone.

    python experiments/feedback_rules.py citeulike-a:../shared/data/citeulike-a 1 1000 linear:0.25 learned:0 rocchio:0.15
    # data spec, fold, users, then rules KIND:WEIGHT[:KEPT_WEIGHT:REMOVED_WEIGHT]; "without feedback" comes first
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.evaluation.feedback_sim import DenseRule, DenseUser  # noqa: E402
from recommender.scoring.fusion import standardise  # noqa: E402


class ExperimentalUser(DenseUser):
    """A DenseUser that also knows the "learned" and "rocchio" rules."""

    def rescore(self, rule: DenseRule, kept: list[int], dismissed: list[int], shown: np.ndarray) -> np.ndarray:
        if rule.kind not in ("learned", "rocchio") or not rule.learn or not (kept or dismissed):
            return super().rescore(rule, kept, dismissed, shown)
        fold = self.fold
        vectors = fold.test_vectors
        if rule.kind == "learned":
            signals = self.signals(kept)
            library = np.vstack([fold.train_vectors[self.position], vectors[kept]])
            signals["learned"] = _learned_with_negatives(library, vectors, kept, dismissed, rule.dismissed_weight,
                                                         self.seed)
            weights = dict(self.weights)
            if rule.weight:  # raise the linear model's share, the others shrink in proportion
                rest = 1.0 - weights["learned"]
                scale = (1.0 - rule.weight) / rest if rest > 0 else 0.0
                weights = {name: value * scale for name, value in weights.items()} | {"learned": rule.weight}
            return self.fused(kept, signals, weights)
        base = self.fused(kept)
        if not rule.weight:
            return base
        shift = np.zeros(len(vectors))
        if kept:
            shift += rule.kept_weight * standardise(vectors @ vectors[kept].mean(axis=0))
        if dismissed:
            shift -= rule.dismissed_weight * standardise(vectors @ vectors[dismissed].mean(axis=0))
        return standardise(base) + rule.weight * standardise(shift)


def _learned_with_negatives(library, candidates, kept, dismissed, dismissed_weight, seed) -> np.ndarray:
    """scoring.learned's model (balanced classes, negatives sampled from the candidates) with the removed
    papers as extra negatives of weight `dismissed_weight`."""
    from recommender.scoring.learned import MIN_NEGATIVES, NEGATIVES_PER_POSITIVE, fit_logistic

    rng = np.random.default_rng(seed)
    pool = np.setdiff1d(np.arange(len(candidates)), np.asarray(kept + dismissed, dtype=np.int64))
    wanted = min(max(MIN_NEGATIVES, NEGATIVES_PER_POSITIVE * len(library)), len(pool))
    negatives = candidates[rng.choice(pool, size=wanted, replace=False)]
    x = np.vstack([library, negatives, candidates[dismissed]]).astype(np.float64)
    y = np.r_[np.ones(len(library)), np.zeros(len(negatives) + len(dismissed))]
    total = len(library) + len(negatives)  # class_weight="balanced" over the library and the sampled negatives
    weight = np.r_[np.full(len(library), total / (2 * len(library))), np.full(len(negatives), total / (2 * len(negatives))),
                   np.full(len(dismissed), dismissed_weight * total / (2 * len(negatives)))]
    return np.asarray(candidates, dtype=np.float64) @ fit_logistic(x, y, sample_weight=weight)


def parse_rule(text: str) -> DenseRule:
    if text == "kept":
        return DenseRule()
    kind, *numbers = text.split(":")
    return DenseRule(kind, *(float(n) for n in numbers))


def main(spec: str, fold: int, users: int, *rules: str) -> None:
    from recommender.collaborative.datasets import load_dataset
    from recommender.evaluation.feedback_sim import NO_FEEDBACK, simulate_fold
    from recommender.evaluation.protocol import dense_report_rows
    from recommender.evaluation.splits import DenseItems
    from recommender.features.dense import MODEL_ID, DenseRepresentation

    data = load_dataset(spec)
    items = DenseItems(dense_report_rows(data, DenseRepresentation()), MODEL_ID)
    arms = {"without feedback": NO_FEEDBACK} | {text: parse_rule(text) for text in rules}
    started = time.process_time()
    report = simulate_fold(data, fold, arms, items=items, users=users, user_type=ExperimentalUser)
    print(f"fold {fold}, {report['users']} users, weights {report['fusion_weights']}, "
          f"{time.process_time() - started:.0f} s CPU")
    base = report["arms"]["without feedback"][-1]
    for arm, rounds in report["arms"].items():
        print(f"{arm:24s}", "  ".join(f"{p:.4f}/{r:.4f}/{f:.4f}" for p, r, f in rounds),
              f"  round 3 ×{rounds[-1][0] / base[0]:.3f} ×{rounds[-1][1] / base[1]:.3f} ×{rounds[-1][2] / base[2]:.3f}")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:])
