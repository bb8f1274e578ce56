"""Ranking quality of tfidf, dense and hybrid features on CiteULike-a titles; writes docs/evaluation-features.md.

Two checks, both content-only with the reading list's own aggregation (top3, and max/mean):

1. **Item-cold fold** (the protocol of ../shared/data/citeulike-a/ANCHORS.md, fold 0 by default):
   3,396 items are hidden from every user; each user's remaining titles rank the hidden ones.
   recall@20/50/100 and nDCG@50, averaged over 2,000 sampled users; the hybrid weight is chosen
   on fold 1. As in zotrec, tf-idf's idf is fitted on the candidates (no interactions are used).
2. **Library leave-out**: for sampled users with ≥ 10 items, the 5 newest-by-position items are
   hidden and ranked among the 3,330 ICML 2025 titles plus themselves (what `zotrec` does for a
   user, with the real corpus as distractors). Reports recall@50 and the median rank.

    python benchmarks/features_quality.py            # about 5 min once the embeddings are cached
    python benchmarks/features_quality.py --quick    # 400 / 200 users, about 1 min
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic import SHARED, read_titles  # noqa: E402

from recommender.features.tfidf import TfidfRepresentation  # noqa: E402

CITEULIKE = SHARED / "data" / "citeulike-a"
ICML = SHARED / "data" / "icml2025" / "papers.jsonl"
FOLD_SEED = 20250101
N_FOLDS = 5
CUTOFFS = (20, 50, 100)
HYBRID_WEIGHTS = (0.3, 0.5, 0.7, 0.85)
AGGREGATIONS = ("top3", "max", "mean")


def read_users() -> list[np.ndarray]:
    """users.dat: line u = `n j1 … jn` (0-based item ids)."""
    lines = (CITEULIKE / "users.dat").read_text().splitlines()
    return [np.array(line.split()[1:], dtype=np.int64) for line in lines]


def aggregate_scores(sims: np.ndarray, aggregation: str) -> np.ndarray:
    """Rows = library items, columns = candidates; the same rules as recommender.scoring.aggregation."""
    if aggregation == "mean":
        return sims.mean(axis=0)
    k = min(1 if aggregation == "max" else int(aggregation[3:]), sims.shape[0])
    if k == 1:
        return sims.max(axis=0)
    return np.partition(sims, sims.shape[0] - k, axis=0)[-k:].mean(axis=0)


def user_metrics(scores: np.ndarray, relevant: np.ndarray) -> dict[str, float]:
    """recall@M (no min cap, as CTR/CDL) and nDCG@50 with binary gains; ties broken by index."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    hits = relevant[order]
    found = np.cumsum(hits)
    n_rel = int(relevant.sum())
    out = {f"recall@{m}": found[m - 1] / n_rel for m in CUTOFFS}
    discounts = 1.0 / np.log2(np.arange(2, 52))
    ideal = discounts[: min(n_rel, 50)].sum()
    out["ndcg@50"] = float((hits[:50] * discounts).sum() / ideal)
    return out


def similarity_blocks(rows: dict, train: np.ndarray, test: np.ndarray) -> dict[str, np.ndarray]:
    """Per representation, the (train items × test items) cosine block."""
    blocks = {}
    for name, matrix in rows.items():
        product = matrix[train] @ matrix[test].T
        blocks[name] = product.toarray() if hasattr(product, "toarray") else np.asarray(product)
    return blocks


def evaluate_fold(rows: dict, users: list[np.ndarray], fold: int, max_users: int | None) -> dict:
    """Mean metrics per (representation, aggregation) over the fold's eligible users."""
    n_items = rows["dense"].shape[0]
    test_items = np.sort(np.random.default_rng(FOLD_SEED).permutation(n_items)[
        fold * (n_items // N_FOLDS) : (fold + 1) * (n_items // N_FOLDS)])
    is_test = np.zeros(n_items, dtype=bool)
    is_test[test_items] = True
    eligible = [u for u, items in enumerate(users) if is_test[items].any() and (~is_test[items]).any()]
    if max_users:
        eligible = list(np.random.default_rng(fold).choice(eligible, size=min(max_users, len(eligible)),
                                                           replace=False))
    totals: dict[str, dict[str, list[float]]] = {}
    for user in eligible:
        items = users[user]
        train, relevant = items[~is_test[items]], np.isin(test_items, items[is_test[items]])
        blocks = similarity_blocks(rows, train, test_items)
        blocks.update({f"hybrid{w}": w * blocks["dense"] + (1 - w) * blocks["tfidf"] for w in HYBRID_WEIGHTS})
        for name, sims in blocks.items():
            for aggregation in AGGREGATIONS if name in rows else ("top3",):
                metrics = user_metrics(aggregate_scores(sims, aggregation), relevant)
                for metric, value in metrics.items():
                    totals.setdefault(f"{name}/{aggregation}", {}).setdefault(metric, []).append(value)
    return {"users": len(eligible), "candidates": len(test_items),
            "results": {key: {m: float(np.mean(v)) for m, v in metrics.items()} for key, metrics in totals.items()}}


def leave_out(titles: list[str], users: list[np.ndarray], dense, max_users: int, hybrid_weight: float) -> dict:
    """Hide each sampled user's last 5 items; rank them among the ICML titles plus themselves."""
    from recommender.corpus.readers import load_corpus

    icml = [paper.text for paper in load_corpus([ICML]).papers]
    icml_dense = dense.transform(icml)
    rng = np.random.default_rng(7)
    pool = [u for u, items in enumerate(users) if len(items) >= 10]
    chosen = rng.choice(pool, size=min(max_users, len(pool)), replace=False)
    all_dense = dense.transform(titles)
    results: dict[str, list[np.ndarray]] = {}
    for user in chosen:
        items = users[user]
        hidden, kept = items[-5:], items[:-5]
        corpus_texts = icml + [titles[i] for i in hidden]
        tfidf = TfidfRepresentation().fit(corpus_texts)
        corpus_t = tfidf.transform(corpus_texts)
        library_t = tfidf.transform([titles[i] for i in kept])
        sims_t = (library_t @ corpus_t.T).toarray()
        sims_d = all_dense[kept] @ np.vstack([icml_dense, all_dense[hidden]]).T
        for name, sims in (("tfidf", sims_t), ("dense", sims_d),
                           (f"hybrid{hybrid_weight}", hybrid_weight * sims_d + (1 - hybrid_weight) * sims_t)):
            scores = aggregate_scores(sims, "top3")
            order = np.lexsort((np.arange(len(scores)), -scores))
            ranks = np.flatnonzero(order >= len(icml)) + 1  # 1-based ranks of the hidden items
            results.setdefault(name, []).append(ranks)
    summary = {}
    for name, rank_lists in results.items():
        ranks = np.concatenate(rank_lists)
        summary[name] = {"recall@50": float(np.mean(ranks <= 50)), "median_rank": float(np.median(ranks)),
                         "users": len(rank_lists), "candidates": len(icml) + 5}
    return summary


def render(report: dict) -> str:
    """docs/evaluation-features.md: both checks as tables, with the command that made them."""
    fold = report["fold0"]
    metrics = ["recall@20", "recall@50", "recall@100", "ndcg@50"]
    lines = [
        "# Text features compared: tf-idf, dense MiniLM, hybrid", "",
        f"Made by `{report['command']}` on {report['date']} ({report['seconds']:.0f} s). Titles only "
        "(CiteULike-a has no abstracts here), content-only ranking, no collaborative model.", "",
        f"## CiteULike-a item-cold, fold 0 ({fold['users']:,} sampled users, {fold['candidates']:,} "
        "hidden items ranked)", "",
        "Protocol of ../shared/data/citeulike-a/ANCHORS.md (fold seed 20250101): every interaction of a "
        "hidden item is removed; each user's remaining titles rank all hidden items. tf-idf's idf is "
        "fitted on the candidates, as `zotrec` fits it on the corpus. The hybrid weight "
        f"(dense share {report['hybrid_weight_from_fold1']}) was chosen on fold 1, not on fold 0. "
        f"Random floor: recall@50 = {50 / fold['candidates']:.4f}.", "",
        "| features / aggregation | " + " | ".join(metrics) + " |", "|---|" + "---:|" * len(metrics),
    ]
    for key, values in sorted(fold["results"].items(), key=lambda kv: -kv[1]["recall@50"]):
        lines.append(f"| {key} | " + " | ".join(f"{values[m]:.4f}" for m in metrics) + " |")
    leave = report["leave_out"]
    any_row = next(iter(leave.values()))
    lines += [
        "", f"## Library leave-out ({any_row['users']:,} users with ≥ 10 items)", "",
        "Each user's last 5 items (by position in users.dat) are hidden and ranked among the 3,330 ICML "
        f"2025 titles plus themselves ({any_row['candidates']:,} candidates), scored by the other items "
        "with top3 aggregation: the check `zotrec` runs for a user. The ICML titles are all machine "
        "learning while CiteULike users also read biology and physics, so this check is easier than "
        "the fold above; compare the representations, not the absolute numbers.", "",
        "| features | recall@50 | median rank |", "|---|---:|---:|",
    ]
    for name, values in leave.items():
        lines.append(f"| {name} | {values['recall@50']:.4f} | {values['median_rank']:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="400 users per check instead of 2,000 / 1,000")
    parser.add_argument("--output", default=str(ROOT / "docs" / "evaluation-features.json"))
    args = parser.parse_args()
    from recommender.features.dense import DenseRepresentation

    started = time.perf_counter()
    titles, users = read_titles(CITEULIKE / "titles.txt"), read_users()
    dense = DenseRepresentation()
    rows = {"dense": dense.transform(titles)}
    limit = 400 if args.quick else 2000
    report = {"command": "python benchmarks/features_quality.py" + (" --quick" if args.quick else "")}
    folds = {}
    for fold in (1, 0):  # fold 1 chooses the hybrid weight, fold 0 reports
        n_items = len(titles)
        test = np.random.default_rng(FOLD_SEED).permutation(n_items)[
            fold * (n_items // N_FOLDS) : (fold + 1) * (n_items // N_FOLDS)]
        # as zotrec does, idf comes from the candidates (the corpus); no interaction is used
        tfidf = TfidfRepresentation().fit([titles[i] for i in test])
        rows["tfidf"] = tfidf.transform(titles).tocsr()
        folds[fold] = evaluate_fold(rows, users, fold, limit)
    validation = folds[1]["results"]
    best_weight = max(HYBRID_WEIGHTS, key=lambda w: validation[f"hybrid{w}/top3"]["recall@50"])
    report["hybrid_weight_from_fold1"] = best_weight
    report["fold0"] = folds[0]
    report["fold1_validation"] = folds[1]
    report["leave_out"] = leave_out(titles, users, dense, 200 if args.quick else 1000, best_weight)
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    Path(args.output).write_text(json.dumps(report, indent=1))
    Path(args.output).with_suffix(".md").write_text(render(report), encoding="utf-8")
    print(json.dumps({"fold0": {k: v for k, v in folds[0]["results"].items() if k.endswith("top3")},
                      "weight": best_weight, "leave_out": report["leave_out"]}, indent=1))


if __name__ == "__main__":
    main()
