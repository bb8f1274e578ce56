"""One item-cold fold on dense features: every peer rule and zotrec's fused score (what `zotrec evaluate citeulike
--features dense` runs per fold), printed as recall@50 / recall@20 / nDCG@50 per rule.

    python benchmarks/dense_fold.py citeulike-a:../shared/data/citeulike-a 128 top5 300 [fold] [beta]
    # data spec, ALS factors, the topK inside the fusion, SVM users (0 skips the SVM), fold (default 0),
    # the collaborative adapter's β (default 0.5, as shipped: the shipped form's linear model in the adapter's
    # space, plus the rows "zotrec fused, plain linear model" and the full adapter; 0: the plain form only),
    # "sample-only": every rule of the test fold on the SVM's users alone (weights chosen as always);
    # "full-adapter" anywhere after the fold: also the full adapter's rows (experiments/full_adapter.py)
    # "dump=FOLDER" anywhere after the fold: keep the shipped form's signals and every rule's per-user metrics
    #   under FOLDER/fold{F}/ for benchmarks/weight_choice.py (issue 33; about 0.5 / 1 GB per fold, a / t)

Besides the coarse metrics, every rule's fine-benchmark row (recommender/evaluation/fine.py: nDCG@10 and Kendall
tau among each user's 100 hard candidates). The last line is the whole FoldResult as JSON (every metric, on all
users and on the SVM sample, and the fine rows).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.collaborative.datasets import load_dataset  # noqa: E402
from recommender.evaluation.dumps import FoldDump  # noqa: E402
from recommender.evaluation.folds import item_cold_folds, settings_for  # noqa: E402
from recommender.evaluation.protocol import dense_report_rows, run_fold  # noqa: E402
from recommender.evaluation.splits import DenseItems  # noqa: E402
from recommender.features.dense import MODEL_ID, DenseRepresentation  # noqa: E402
from recommender.scoring.adapter import ADAPTER_BETA  # noqa: E402


def main(spec: str, factors: int, aggregation: str, svm_users: int, fold: int = 0, beta: float = ADAPTER_BETA,
         sample_only: bool = False, full_adapter: bool = False, dump: str | None = None) -> None:
    data = load_dataset(spec)
    vectors = dense_report_rows(data, DenseRepresentation())
    settings = settings_for(data)
    settings.factors = factors
    started = time.process_time()
    result = run_fold(data, fold, item_cold_folds(data.n_items)[fold], settings, aggregation, svm_users,
                      items=DenseItems(vectors, MODEL_ID), adapter_beta=beta, sample_only=sample_only,
                      full_adapter=full_adapter and beta > 0,
                      dump=FoldDump(Path(dump), fold) if dump else None)
    print(json.dumps({"fold": fold, "weights": result.blend_weights, "seconds": result.seconds,
                      "cpu": time.process_time() - started}))
    for name, values in result.metrics.items():
        print(f"{name:40s} {values['recall@50']:.4f} {values['recall@20']:.4f} {values['ndcg@50']:.4f} "
              f"{values['order loss']:.4f}")
    print(f"fine benchmark: {result.fine_users} of {result.users} users with a save among their hard candidates")
    for name, values in result.fine.items():
        print("fine", f"{name:45s} {values['ndcg@10']:.4f} {values['tau']:.4f}")
    for name, values in result.svm_sample.items():
        print("svm-sample", f"{name:40s} {values['recall@50']:.4f}")
    print(json.dumps(result.__dict__))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    dumps = [a.split("=", 1)[1] for a in sys.argv[5:] if a.startswith("dump=")]
    extra = [a for a in sys.argv[5:] if a != "full-adapter" and not a.startswith("dump=")]
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), *([int(extra[0])] if extra else []),
         *(float(a) for a in extra[1:2]), *(a == "sample-only" for a in extra[2:3]),
         full_adapter="full-adapter" in sys.argv[5:], dump=dumps[0] if dumps else None)
