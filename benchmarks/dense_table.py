"""docs/evaluation.md's five-fold tables from benchmarks/dense_fold.py outputs (each output's last line is a
FoldResult as JSON): mean ± std over folds per rule, on all users and on the SVM's sampled users, and
the shipped form's ratio to the best peer rule.

    python benchmarks/dense_table.py citeulike-a:a_f0.out,a_f1.out,... citeulike-t:t_f0.out,...
    # a name ending in @svm: those outputs count for the SVM users' table only (dense_fold.py ... sample-only)
"""

from __future__ import annotations

import json
import sys

import numpy as np

OURS = ("zotrec fused (shipped form)", "zotrec fused, plain linear model", "zotrec fused, adapted space",
        "zotrec fused, content only", "zotrec fused without tf-idf", "zotrec linear model (dense)",
        "zotrec linear model (adapted space)", "dense→ALS, text user", "adapted space top5")
SHIPPED = "zotrec fused (shipped form)"
METRICS = ("recall@50", "recall@20", "ndcg@50")


def load(paths: list[str]) -> list[dict]:
    results = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            results.append(json.loads(handle.read().strip().splitlines()[-1]))
    return results


def summary(folds: list[dict], key: str) -> dict[str, dict[str, tuple[float, float]]]:
    names = [name for name in folds[0][key] if all(name in fold[key] for fold in folds)]
    return {name: {m: (float(np.mean([f[key][name][m] for f in folds])), float(np.std([f[key][name][m] for f in folds])))
                   for m in METRICS if m in folds[0][key][name]} for name in names}


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


def main(specs: list[str]) -> None:
    datasets = {}
    for spec in specs:
        name, paths = spec.split(":", 1)
        datasets[name] = load(paths.split(","))
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
    for name, folds in datasets.items():
        print(f"{name} weights per fold:", json.dumps([f["blend_weights"] for f in folds]))


if __name__ == "__main__":
    main(sys.argv[1:])
