"""The dense feedback simulation (recommender/evaluation/feedback_dense.py) with hand-picked rules on one fold and
a user sample: how the variants in docs/evaluation.md (feedback section, dense) were compared.

    python benchmarks/feedback_dense_rules.py citeulike-a:../shared/data/citeulike-a 1 1000 linear:0.25 learned:0 rocchio:0.15
    # data spec, fold, users, then rules KIND:WEIGHT[:KEPT_WEIGHT:REMOVED_WEIGHT] (KIND: linear, learned, rocchio;
    # "kept" is the kept papers alone); "without feedback" always comes first
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.collaborative.datasets import load_dataset  # noqa: E402
from recommender.evaluation.dense_protocol import dense_report_rows  # noqa: E402
from recommender.evaluation.feedback_dense import NO_FEEDBACK, DenseRule, simulate_dense_fold  # noqa: E402
from recommender.features.dense import MODEL_ID, DenseRepresentation  # noqa: E402


def parse_rule(text: str) -> DenseRule:
    if text == "kept":
        return DenseRule()
    kind, *numbers = text.split(":")
    return DenseRule(kind, *(float(n) for n in numbers))


def main(spec: str, fold: int, users: int, *rules: str) -> None:
    data = load_dataset(spec)
    vectors = dense_report_rows(data, DenseRepresentation())
    arms = {"without feedback": NO_FEEDBACK} | {text: parse_rule(text) for text in rules}
    started = time.process_time()
    report = simulate_dense_fold(data, vectors, fold, arms, encoder_id=MODEL_ID, users=users)
    print(f"fold {fold}, {report['users']} users, weights {report['fusion_weights']}, "
          f"{time.process_time() - started:.0f} s CPU")
    base = report["arms"]["without feedback"][-1]
    for arm, rounds in report["arms"].items():
        print(f"{arm:24s}", "  ".join(f"{p:.4f}/{r:.4f}/{f:.4f}" for p, r, f in rounds),
              f"  round 3 ×{rounds[-1][0] / base[0]:.3f} ×{rounds[-1][1] / base[1]:.3f} ×{rounds[-1][2] / base[2]:.3f}")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:])
