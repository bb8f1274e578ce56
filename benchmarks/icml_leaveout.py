"""The ICML leave-out of benchmarks/features_quality.py for the scoring rules of the fused default.

For sampled CiteULike-a users with ≥ 10 items, the last 5 items (by position in users.dat) are
hidden and ranked among the 3,330 ICML 2025 titles plus themselves, from the user's other titles:
the check `zotrec` runs for a user, with the real corpus as distractors. Rules: dense top3/top5,
and the fusion (recommender/scoring/fusion.py) of dense topK with tf-idf topK, the per-user linear
model and the dense collaborative part; and the same fusion in the collaborative adapter's space
(experiments/full_adapter.py), or with only its linear model in that space. The collaborative model is trained on citeulike-a with
every save of every hidden item removed (they are cold, as ICML papers are), and a user's kept items
get their factors from their nearest *other* training items (never themselves: a Zotero user's items
are not in CiteULike).

    python benchmarks/icml_leaveout.py '{"lexical": 0.1, "learned": 0.6, "collaborative": 0.2}' [users] [factors] \
        [adapter weights] [adapted-linear-model weights]   # either may be '{}'

Prints recall@50 / recall@20 / median rank per rule (lower median is better).
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
from recommender.collaborative.dense_model import knn_factors, train_dense_collaborative  # noqa: E402
from recommender.corpus.readers import load_corpus  # noqa: E402
from recommender.scoring.adapter import ADAPTER_BETA, adapted  # noqa: E402
from recommender.evaluation.peers import aggregate_similarities  # noqa: E402
from recommender.evaluation.folds import settings_for, without_items  # noqa: E402
from recommender.features.dense import MODEL_ID, DenseRepresentation  # noqa: E402
from recommender.features.tfidf import TfidfRepresentation  # noqa: E402
from recommender.scoring.fusion import fuse  # noqa: E402
from recommender.scoring.learned import linear_user_scores  # noqa: E402

SHARED = ROOT.parent / "shared"
ICML = SHARED / "data" / "icml2025" / "papers.jsonl"
HIDDEN = 5


def own_left_out(model, matrix, vectors: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Items' predicted factors with each item left out of its own neighbours (the model's neighbours
    are the items with saves in `matrix`, in id order)."""
    position = np.cumsum(np.asarray(matrix.getnnz(axis=0)) > 0) - 1
    saved = np.asarray(matrix.getnnz(axis=0))[items] > 0
    out = model.factors_for_vectors(vectors[items])
    if saved.any():
        out[saved] = knn_factors(vectors[items[saved]], model.neighbour_vectors, model.neighbour_factors,
                                 self_rows=position[items[saved]])
    return out


def main(weights: dict[str, float], n_users: int = 1000, factors: int = 128,
         adapter: dict[str, float] | None = None, adapted_linear: dict[str, float] | None = None) -> dict:
    started = time.process_time()
    data = load_dataset(f"citeulike-a:{SHARED / 'data' / 'citeulike-a'}")
    with open(SHARED / "data" / "citeulike-a" / "users.dat") as handle:
        users = [np.array(line.split()[1:], dtype=np.int64) for line in handle]
    rng = np.random.default_rng(7)
    pool = [u for u, items in enumerate(users) if len(items) >= 10]
    chosen = rng.choice(pool, size=min(n_users, len(pool)), replace=False)
    hidden_all = np.unique(np.concatenate([users[u][-HIDDEN:] for u in chosen]))
    dense = DenseRepresentation()
    icml = [paper.text for paper in load_corpus([ICML]).papers]
    icml_vectors = dense.transform(icml)
    vectors = dense.transform(data.texts)
    settings = settings_for(data)
    settings.factors = factors
    matrix = without_items(data.interactions, hidden_all)
    model = train_dense_collaborative(matrix, vectors, MODEL_ID, settings)
    tfidf = TfidfRepresentation().fit(icml)
    icml_rows, title_rows = tfidf.transform(icml), tfidf.transform(data.texts)
    icml_factors = model.factors_for_vectors(icml_vectors)
    ranks: dict[str, list[np.ndarray]] = {}
    for user in chosen:
        items = users[user]
        hidden, kept = items[-HIDDEN:], items[:-HIDDEN]
        corpus_vectors = np.vstack([icml_vectors, vectors[hidden]])
        dense_sims = vectors[kept] @ corpus_vectors.T
        lexical_sims = (title_rows[kept] @ title_rows[hidden].T).toarray()
        lexical_sims = np.hstack([(title_rows[kept] @ icml_rows.T).toarray(), lexical_sims])
        corpus_factors = np.vstack([icml_factors, model.factors_for_vectors(vectors[hidden])])
        kept_factors = own_left_out(model, matrix, vectors, kept)
        parts = {"content": aggregate_similarities(dense_sims, "top5"),
                 "top3": aggregate_similarities(dense_sims, "top3"),
                 "lexical": aggregate_similarities(lexical_sims, "top5"),
                 "learned": linear_user_scores(vectors[kept], corpus_vectors, corpus_vectors),
                 "collaborative": corpus_factors @ model.user_vector(kept_factors)}
        rules = {"dense top3": parts["top3"], "dense top5": parts["content"]}
        for name in ("lexical", "learned", "collaborative"):
            rules[f"top5 + {name}"] = fuse(parts, {"content": 1 - weights.get(name, 0.0), name: weights.get(name, 0.0)})
        content_only = {k: v for k, v in weights.items() if k != "collaborative"}
        rules["fused, content only"] = fuse(parts, {"content": 1 - sum(content_only.values()), **content_only})
        rules["fused (all)"] = fuse(parts, {"content": 1 - sum(weights.values()), **weights})
        if adapter or adapted_linear:
            kept_adapted = adapted(vectors[kept], kept_factors, ADAPTER_BETA)
            corpus_adapted = adapted(corpus_vectors, corpus_factors, ADAPTER_BETA)
            adapted_parts = dict(parts, content=aggregate_similarities(kept_adapted @ corpus_adapted.T, "top5"),
                                 learned=linear_user_scores(kept_adapted, corpus_adapted, corpus_adapted))
            rules["adapted top5"] = adapted_parts["content"]
            if adapter:
                rules["fused, adapted space"] = fuse(adapted_parts, {"content": 1 - sum(adapter.values()), **adapter})
            if adapted_linear:
                rules["fused, adapted linear model"] = fuse(
                    dict(parts, learned=adapted_parts["learned"]),
                    {"content": 1 - sum(adapted_linear.values()), **adapted_linear})
        for name, scores in rules.items():
            order = np.lexsort((np.arange(len(scores)), -scores))
            ranks.setdefault(name, []).append(np.flatnonzero(order >= len(icml)) + 1)
    summary = {}
    for name, lists in ranks.items():
        r = np.concatenate(lists)
        summary[name] = {"recall@20": float(np.mean(r <= 20)), "recall@50": float(np.mean(r <= 50)),
                         "median_rank": float(np.median(r))}
        print(f"{name:24s} recall@20 {summary[name]['recall@20']:.4f}  recall@50 {summary[name]['recall@50']:.4f}"
              f"  median rank {summary[name]['median_rank']:.0f}", flush=True)
    print(f"{len(chosen)} users, {len(icml) + HIDDEN} candidates, weights {json.dumps(weights)}, "
          f"factors {factors}, CPU {time.process_time() - started:.0f} s")
    return summary


if __name__ == "__main__":
    main(json.loads(sys.argv[1]), *(int(a) for a in sys.argv[2:4]),
         *(json.loads(a) or None for a in sys.argv[4:6]))
