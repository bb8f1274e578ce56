"""One item-cold fold on dense features: every peer rule and zotrec's fused score (what `zotrec evaluate citeulike
--features dense --folds 1` runs), printed as recall@50 / recall@20 / nDCG@50 per rule.

    python benchmarks/dense_fold.py citeulike-a:../shared/data/citeulike-a 128 top5 300   # spec, factors, topK, SVM users
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import logging, sys, time, json
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
import numpy as np
from recommender.collaborative.datasets import load_dataset
from recommender.evaluation.protocol import item_cold_folds, settings_for
from recommender.evaluation.dense_protocol import run_dense_fold, dense_report_rows
from recommender.features.dense import DenseRepresentation, MODEL_ID
spec, factors, agg = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = load_dataset(spec)
vectors = dense_report_rows(data, DenseRepresentation())
settings = settings_for(data)
settings.factors = factors
t = time.process_time()
r = run_dense_fold(data, vectors, 0, item_cold_folds(data.n_items)[0], settings, MODEL_ID, agg, int(sys.argv[4]))
print(json.dumps({"weights": r.blend_weights, "seconds": r.seconds, "cpu": time.process_time()-t}))
for k, v in r.metrics.items(): print(f"{k:40s} {v['recall@50']:.4f} {v['recall@20']:.4f} {v['ndcg@50']:.4f}")
for k, v in r.svm_sample.items(): print("svm-sample", f"{k:40s} {v['recall@50']:.4f}")
