"""docs/evaluation.md's five-fold tables from benchmarks/dense_fold.py outputs (each output's last line is a
FoldResult as JSON): mean ± std over folds per rule, on all users and on the SVM's sampled users, and
the shipped form's ratio to the best peer rule; then the fine benchmark's table (nDCG@10 and Kendall tau among
each user's hard candidates, recommender/evaluation/fine.py).

    python benchmarks/dense_table.py citeulike-a:a_f0.out,a_f1.out,... citeulike-t:t_f0.out,...
    # a name ending in @svm: those outputs count for the SVM users' table only (dense_fold.py ... sample-only)
    # --json PATTERN (first): also write each dataset's per-fold results to PATTERN with {name} filled in,
    #   e.g. --json docs/evaluation-dense-{name}.json
"""

from __future__ import annotations

import json
import sys

import numpy as np

OURS = ("zotrec fused (shipped form)", "zotrec fused, fused order",
        "zotrec fused, plain linear model", "zotrec fused, adapted space",
        "zotrec fused, content only", "zotrec fused without tf-idf", "zotrec linear model (dense)",
        "zotrec linear model (adapted space)", "dense→ALS, text user", "adapted space top5")
SHIPPED = "zotrec fused (shipped form)"
METRICS = ("recall@50", "recall@20", "ndcg@50")
FINE_METRICS = ("ndcg@10", "tau")


RENAMED = {"zotrec fused, fused order (shipped until issue 25)": "zotrec fused, fused order"}  # outputs made before


def load(paths: list[str]) -> list[dict]:
    results = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            result = json.loads(handle.read().strip().splitlines()[-1])
        for key in ("metrics", "svm_sample", "fine"):
            result[key] = {RENAMED.get(name, name): values for name, values in result.get(key, {}).items()}
        results.append(result)
    return results


def summary(folds: list[dict], key: str, metrics=METRICS) -> dict[str, dict[str, tuple[float, float]]]:
    names = [name for name in folds[0].get(key, {}) if all(name in fold.get(key, {}) for fold in folds)]
    return {name: {m: (float(np.mean([f[key][name][m] for f in folds])), float(np.std([f[key][name][m] for f in folds])))
                   for m in metrics if m in folds[0][key][name]} for name in names}


def cell(value: tuple[float, float]) -> str:
    return f"{value[0]:.4f} ± {value[1]:.4f}"


def ratios(table: dict, label: str) -> str:
    # peers on the same (dense) features: tf-idf top5 is one of zotrec's signals, on other features
    peers = {name: values["recall@50"][0] for name, values in table.items()
             if name not in OURS and not name.startswith("tf-idf")}
    if not peers:
        return f"{label}: no peer rule"
    best = max(peers, key=peers.get)
    lines = [f"{label}: best peer {best} {peers[best]:.4f}"]
    for name in OURS:
        if name in table:
            lines.append(f"  {name} {table[name]['recall@50'][0]:.4f} = {table[name]['recall@50'][0] / peers[best]:.3f} ×")
    return "\n".join(lines)


def fine_table(datasets: dict[str, list[dict]]) -> None:
    """The fine benchmark's table: every rule's nDCG@10 and tau among the hard candidates, mean ± std over folds."""
    tables = {name: summary(folds, "fine", FINE_METRICS) for name, folds in datasets.items()
              if not name.endswith("@svm") and all(f.get("fine") for f in folds)}
    if not tables:
        return
    counted = ", ".join(f"{n} {len(datasets[n])} folds, {sum(f['fine_users'] for f in datasets[n])} of "
                        f"{sum(f['users'] for f in datasets[n])} user-folds" for n in tables)
    print(f"\nfine benchmark (users with a save among their hard candidates): {counted}")
    print("| rule | " + " | ".join(f"{n} {m}" for n in tables for m in FINE_METRICS) + " |")
    print("|---|" + "---:|" * (len(FINE_METRICS) * len(tables)))
    for row in dict.fromkeys(row for table in tables.values() for row in table):
        cells = [cell(tables[n][row][m]) if row in tables[n] and m in tables[n][row] else "–"
                 for n in tables for m in FINE_METRICS]
        print(f"| {row} | " + " | ".join(cells) + " |")
    for name, folds in datasets.items():
        if name in tables and SHIPPED in folds[0]["fine"] and "dense top3" in folds[0]["fine"]:
            gaps = [f["fine"][SHIPPED]["ndcg@10"] - f["fine"]["dense top3"]["ndcg@10"] for f in folds]
            print(f"{name}: shipped − dense top3, fine nDCG@10 per fold: " + ", ".join(f"{g:+.4f}" for g in gaps))


def main(specs: list[str]) -> None:
    json_pattern = None
    if specs and specs[0] == "--json":
        json_pattern, specs = specs[1], specs[2:]
    datasets = {}
    for spec in specs:
        name, paths = spec.split(":", 1)
        datasets[name] = load(paths.split(","))
        if json_pattern and not name.endswith("@svm"):
            with open(json_pattern.format(name=name), "w", encoding="utf-8") as handle:
                json.dump({"data": name, "made_by": "benchmarks/dense_fold.py DATA 128 top5 0 FOLD, one run per fold",
                           "per_fold": datasets[name]}, handle, indent=1)
                handle.write("\n")
    for key, title in (("metrics", "all evaluated users"), ("svm_sample", "the SVM's sampled users")):
        tables = {name.removesuffix("@svm"): summary(folds, key) for name, folds in datasets.items()
                  if (key == "svm_sample" or not name.endswith("@svm")) and all(f[key] for f in folds)}
        if not tables:
            continue
        rows = list(dict.fromkeys(row for table in tables.values() for row in table))
        counted = {n.removesuffix("@svm"): (len(f), sum(x["users"] for x in f) if key == "metrics" else "sampled")
                   for n, f in datasets.items()}
        print(f"\n{title}: " + ", ".join(f"{n} {counted[n][0]} folds, {counted[n][1]} users" for n in tables))
        print("| rule | " + " | ".join(f"{n} {m}" for n in tables for m in METRICS) + " |")
        print("|---|" + "---:|" * (len(METRICS) * len(tables)))
        for row in rows:
            cells = [cell(tables[n][row][m]) if row in tables[n] and m in tables[n][row] else "–"
                     for n in tables for m in METRICS]
            print(f"| {row} | " + " | ".join(cells) + " |")
        for name, table in tables.items():
            print(ratios(table, f"{name} ({title})"))
    fine_table(datasets)
    for name, folds in datasets.items():
        print(f"{name} weights per fold:", json.dumps([f["blend_weights"] for f in folds]))


if __name__ == "__main__":
    main(sys.argv[1:])
