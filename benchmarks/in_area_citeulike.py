"""A small corpus of one user's field on CiteULike-a (issue 39): does the background, the bundled ICML 2025 list
(recommender/scoring/background.py), serve libraries far from machine learning too?

Each sampled user with at least 6 saves is a researcher: one save held out (seeded), the others the library
(CiteULike-a titles); the candidates are the held-out paper and its 19 nearest CiteULike-a papers by tf-idf cosine
that the user did not save (no dense rule ranks by that draw); grades 2 for the held-out paper, 0 for the rest.
Each rule scores the candidates alone as its corpus, beside the background and without it, on the real shipped
Recommender; the pooled pairwise-order loss and nDCG@10 of benchmarks/lib/own_papers.py, with the paired
bootstrap's standard error against the shipped default beside the background.

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/in_area_citeulike.py ../shared/data/citeulike-a \
        [--users 200] [--seed 0] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.lib.own_papers import NDCG_AT, NEIGHBOURS, graded_ndcg, nearest_papers, pairwise_loss, pooled_loss  # noqa: E402
from benchmarks.own_papers import paired_se  # noqa: E402
from recommender.collaborative.datasets import load_citeulike_a  # noqa: E402
from recommender.features import make_representation  # noqa: E402
from recommender.items import LibraryItem, Paper  # noqa: E402
from recommender.pipeline.build import bundled_background, default_built  # noqa: E402
from recommender.scoring.owned import CorpusKeys  # noqa: E402
from recommender.scoring.ranking import Recommender  # noqa: E402
from recommender.text import title_key  # noqa: E402

MIN_SAVES = 6
REFERENCE = "zotrec default, beside the bundled list"


def cases(saves: list[np.ndarray], space, keys: list[str], users: int, seed: int
          ) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(user, library item indices, candidate indices: the held-out save first) for `users` seeded users whose
    held-out save is not a copy of another of their saves (`keys`: each paper's title key)."""
    rng = np.random.default_rng(seed)
    eligible = [user for user, items in enumerate(saves) if len(items) >= MIN_SAVES]
    chosen = rng.choice(eligible, size=min(users, len(eligible)), replace=False)
    out = []
    for user in sorted(int(u) for u in chosen):
        items = saves[user]
        held_out = int(items[rng.integers(len(items))])
        library = np.array([item for item in items if item != held_out])
        if keys[held_out] in {keys[i] for i in library}:
            continue
        # never the user's own papers, nor a copy of one under another id (CiteULike lists some papers twice)
        own = set(int(i) for i in items) | {n for n, key in enumerate(keys) if key in {keys[i] for i in items}}
        neighbours = nearest_papers(space, held_out, own - {held_out}, NEIGHBOURS)
        out.append((user, library, np.concatenate([[held_out], neighbours])))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="the citeulike-a folder (users.dat, titles.txt)")
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    wall, started = time.perf_counter(), time.process_time()
    data = load_citeulike_a(args.data)
    texts = data.texts
    saves = [data.interactions.indices[data.interactions.indptr[u]:data.interactions.indptr[u + 1]]
             for u in range(data.interactions.shape[0])]
    space = make_representation("tfidf").fit(texts).transform(texts)
    shipped = default_built().recommender
    representation, model = shipped.representation, shipped.model
    background = list(bundled_background())
    rules = {"zotrec default": dict(model=model), "zotrec --model none": dict(model=None),
             "dense top3": dict(aggregation="top3")}
    found: dict[str, list] = {}
    keys = [title_key(text) for text in texts]
    for number, (_, library, candidates) in enumerate(cases(saves, space, keys, args.users, args.seed)):
        papers = [Paper(id=f"citeulike-a:{i}", title=texts[i]) for i in candidates]
        rows = representation.transform([paper.text for paper in papers])
        items = [LibraryItem(key=f"L{i}", title=texts[i]) for i in library]
        grades = np.zeros(len(candidates))
        grades[0] = 2
        for name, settings in rules.items():
            for beside, extra in ((", beside the bundled list", background), (", candidates alone", [])):
                if name == "dense top3" and extra:
                    continue  # the content topK reads no other paper: the background changes nothing
                scorer = Recommender(papers, representation=representation, corpus_rows=rows,
                                     corpus_keys=CorpusKeys(papers), interests=False, background=extra, **settings)
                score = {rec.paper.id: rec.score for rec in scorer.recommend(items, top_n=0)}
                values = np.array([score.get(paper.id, -np.inf) for paper in papers])
                found.setdefault(name + (beside if name != "dense top3" else ""), []).append((values, grades))
        if (number + 1) % 25 == 0:
            print(f"  {number + 1} users, {time.process_time() - started:.0f} s CPU", file=sys.stderr, flush=True)
    losses = {name: [pairwise_loss(*row) for row in rows] for name, rows in found.items()}
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result = {"users": len(found[REFERENCE]), "settings": {k: str(v) for k, v in vars(args).items()},
              "rows": {name: {"loss": round(pooled_loss(parts), 4),
                              "vs_reference": round(pooled_loss(parts) - pooled_loss(losses[REFERENCE]), 4),
                              "vs_reference_se": round(paired_se(parts, losses[REFERENCE]), 4),
                              f"ndcg@{NDCG_AT}": round(float(np.nanmean([graded_ndcg(s, g, NDCG_AT)
                                                                           for s, g in found[name]])), 4)}
                       for name, parts in losses.items()},
              "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "wall_s": round(time.perf_counter() - wall, 1),
              "peak_rss_mb": round(usage.ru_maxrss / 1024)}
    print(f"{result['users']} citeulike-a users, {NEIGHBOURS + 1} candidates each (the held-out save and its "
          f"nearest by tf-idf), the candidates alone as the corpus\n")
    print(f"| rule | loss | − {REFERENCE} (± paired) | nDCG@{NDCG_AT} |\n|---|---|---|---|")
    for name, row in result["rows"].items():
        print(f"| {name} | {row['loss']:.4f} | {row['vs_reference']:+.4f} ± {row['vs_reference_se']:.4f} "
              f"| {row[f'ndcg@{NDCG_AT}']:.4f} |")
    print(f"\nCPU {result['cpu_s']} s, wall {result['wall_s']} s, peak RSS {result['peak_rss_mb']} MB")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
