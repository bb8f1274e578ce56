"""How far is a library from CiteULike's kind, and what does choosing the form by it cost on CiteULike (issue 39)?

A library's *reach* (library_reach below): the median over its items of the cosine to
the nearest item the shipped collaborative model was trained on (its kNN map's 16,980 CiteULike-a items). The
collaborative factors and the adapter's space are only as good as those neighbours. Fold 0's test split of a
CiteULike dataset, a seeded sample of users; each user's reach leaves their own items out of the neighbours (a
Zotero user's items are not CiteULike's); recall@50 of the shipped form, of the content form (`--model none`'s
weights, the linear model on plain rows) and of the choice by reach at each threshold, pooled and by library
size (≤ 20, 21–50, > 50 training items). Measured for issue 39's "a default that holds outside its training
data" and not shipped (docs/evaluation.md).

    python benchmarks/library_reach.py citeulike-a:../shared/data/citeulike-a [users]
    python benchmarks/library_reach.py --items [LIBRARY …]   # item reach: CiteULike-a and ICML titles, libraries
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.interests_citeulike import fold_sample, say, shipped_fusion  # noqa: E402
from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel  # noqa: E402
from recommender.evaluation import peers  # noqa: E402
from recommender.evaluation.folds import ranking_metrics  # noqa: E402
from recommender.features.dense import DenseRepresentation  # noqa: E402
from recommender.scoring.fusion import CONTENT_WEIGHTS, fuse  # noqa: E402

THRESHOLDS = (0.56, 0.58, 0.60, 0.62, 0.64)
BUCKETS = (("≤ 20", 0, 20), ("21–50", 21, 50), ("> 50", 51, 10**9))


SAMPLE = 256  # library items a reach is measured on (seeded)


def library_reach(rows: np.ndarray, neighbour_vectors: np.ndarray, own: np.ndarray | None = None) -> float:
    """The median over (a seeded sample of SAMPLE of) a library's `rows` of the cosine to the nearest of the
    model's unit `neighbour_vectors`; `own[i]`: row i's own index among the neighbours, left out."""
    rows = np.asarray(rows, dtype=np.float32)
    picked = np.arange(len(rows))
    if len(rows) > SAMPLE:
        picked = np.sort(np.random.default_rng(0).choice(len(rows), size=SAMPLE, replace=False))
    rows = rows[picked] / np.maximum(np.linalg.norm(rows[picked], axis=1, keepdims=True), 1e-12)
    similarity = rows @ neighbour_vectors.T
    if own is not None:
        similarity[np.arange(len(picked)), np.asarray(own)[picked]] = -np.inf
    return float(np.median(similarity.max(axis=1))) if len(picked) else 0.0


def main(spec: str, n_users: int) -> None:
    data, fold = fold_sample(spec, n_users)
    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    model._load_neighbours()
    neighbours = model.neighbour_vectors
    same_data = data.name == model.provenance.get("data")
    reach = np.array([library_reach(fold.train_vectors[positions], neighbours,
                                    fold.train_items[positions] if same_data else None)
                      for positions in fold.positions])
    sizes = np.array([len(positions) for positions in fold.positions])
    say(f"{data.name} fold 0, {len(fold.users)} users; library reach (own items left out: {same_data}): median "
        f"{np.median(reach):.3f}, q10 {np.quantile(reach, 0.1):.3f}, q25 {np.quantile(reach, 0.25):.3f}; "
        + ", ".join(f"< {t}: {np.mean(reach < t):.1%}" for t in THRESHOLDS))
    shipped, parts, _, _ = shipped_fusion(fold)
    content_parts = dict(parts, learned=peers.learned_scores(fold))
    content = fuse(content_parts, CONTENT_WEIGHTS.shares(list(content_parts)))
    recall = {"shipped": ranking_metrics(shipped, fold.relevant, seed=0)["recall@50"],
              "content form (--model none)": ranking_metrics(content, fold.relevant, seed=0)["recall@50"]}
    for threshold in THRESHOLDS:
        chosen = np.where((reach >= threshold)[:, None], shipped, content)
        recall[f"by reach, threshold {threshold}"] = ranking_metrics(chosen, fold.relevant, seed=0)["recall@50"]
    evaluated = ~np.isnan(recall["shipped"])
    header = " ".join(f"{name} (n={np.sum(evaluated & (sizes >= low) & (sizes <= high))})" for name, low, high in BUCKETS)
    say(f"recall@50: pooled, {header}")
    for name, values in recall.items():
        cells = [np.nanmean(values)] + [np.nanmean(values[(sizes >= low) & (sizes <= high)]) for _, low, high in BUCKETS]
        say(f"  {name:34s} " + "  ".join(f"{cell:.4f}" for cell in cells))


def items(paths: list[str]) -> None:
    """The reach of single items: 500 seeded CiteULike-a titles (their own id left out), 500 ICML 2025 titles,
    and each library file's items (title and abstract, as zotrec reads them)."""
    import json

    from zotero_bridge.sources.dispatch import read_library

    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    model._load_neighbours()
    representation, rng = DenseRepresentation(), np.random.default_rng(0)
    root = Path("../shared/data")
    titles = (root / "citeulike-a" / "titles.txt").read_text(encoding="utf-8").splitlines()
    icml = [json.loads(line)["title"] for line in (root / "icml2025" / "papers.jsonl").read_text(encoding="utf-8").splitlines()]
    picked = rng.choice(len(titles), 500, replace=False)
    groups = {"citeulike-a titles (own id left out)": ([titles[i] for i in picked], picked),
              "ICML 2025 titles": ([icml[i] for i in rng.choice(len(icml), 500, replace=False)], None)}
    for path in paths:
        groups[Path(path).name] = ([item.text for item in read_library([path]).items if item.text.strip()], None)
    for name, (texts, own) in groups.items():
        rows = representation.transform(texts)
        reach = [library_reach(rows[i : i + 1], model.neighbour_vectors, None if own is None else own[i : i + 1])
                 for i in range(len(texts))]
        say(f"{name}: {len(texts)} items, median {np.median(reach):.3f}, quartiles {np.quantile(reach, 0.25):.3f}–"
            f"{np.quantile(reach, 0.75):.3f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--items"]:
        items(sys.argv[2:])
    else:
        main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1000)
