"""The author signal (recommender/scoring/authors.py): how its weight and cap move a hidden paper, and what
it does to examples/library.bib's list.

1. ICML 2025 leave-out. For sampled ICML 2025 authors with at least 3 papers in the bundled list (by
   name key), one of their papers is hidden; the "researcher" library is their other ICML 2025 papers
   (titles and full author lists, as a Zotero export has them) plus the titles of one CiteULike-a
   user's reading (no authors: CiteULike has none) — the user who saved most of the 50 CiteULike-a
   titles nearest (tf-idf) to the author's titles. The bundled list is ranked with the CLI's default
   scoring (dense, fused, shipped collaborative part); per weight and cap, the hidden paper's rank
   among the unowned papers, and what the step brings into the top 20: papers with a library author
   besides the hidden one, and the most papers one author has there.
   Bias, said plainly: the hidden paper always has a library author, so the lift is an upper bound of
   what the signal does for a real reader; the top-20 counts are its cost.
2. examples/library.bib (36 items, real creators): its top 20 with and without the step.

    OPENBLAS_NUM_THREADS=1 python benchmarks/authors_signal.py [--authors 150] [--reading 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recommender.collaborative.datasets import load_dataset  # noqa: E402
from recommender.features.authors import split_name  # noqa: E402
from recommender.features.lexical import LexicalIndex  # noqa: E402
from recommender.items import Creator, LibraryItem  # noqa: E402
from recommender.scoring.authors import AUTHOR_WEIGHT, PAPERS_PER_AUTHOR, match_authors, with_authors  # noqa: E402
from recommender.scoring.corpus_side import corpus_authors  # noqa: E402
from recommender.pipeline.build import default_built  # noqa: E402

CITEULIKE_A = ROOT.parent / "shared" / "data" / "citeulike-a"
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
CAPS = (1, 2, 3, 1000)  # papers per author that get the author's part (1000: no cap)
TOP = 20


def paper_item(paper, key: str) -> LibraryItem:
    """A corpus paper as a library item with its creators split as a Zotero export does."""
    creators = tuple(Creator(last=family, first=given) for given, family in map(split_name, paper.authors))
    return LibraryItem(key=key, title=paper.title, abstract=paper.abstract or "", creators=creators)


def base_scores(recommender, items, nearest: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(the default scores without the author step, the owned mask): the same library without creators.
    `nearest`, when given, gets each paper's closest library item key (its first reason)."""
    bare = [dataclasses.replace(item, creators=()) for item in items]
    position = {id(paper): number for number, paper in enumerate(recommender.corpus)}
    scores = np.full(len(recommender.corpus), -np.inf)
    for recommendation in recommender.recommend(bare, top_n=0):
        scores[position[id(recommendation.paper)]] = recommendation.score
        if nearest is not None and recommendation.reasons:
            nearest[position[id(recommendation.paper)]] = recommendation.reasons[0].item_key
    return scores, np.isinf(scores)


def ranked(scores: np.ndarray, owned: np.ndarray) -> np.ndarray:
    """Unowned corpus indices best first, ties by index (the Recommender's order)."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    return order[~owned[order]]


def top_stats(order: np.ndarray, matches, hidden: int | None) -> tuple[int, int]:
    """(papers in the top 20 with a library author, other than `hidden`; the most one author has there)."""
    top = set(order[:TOP].tolist())
    boosted = {match.paper for match in matches.matches if match.paper in top and match.paper != hidden}
    per_author = defaultdict(set)
    for match in matches.matches:
        if match.paper in top:
            per_author[match.key].add(match.paper)
    return len(boosted), max((len(found) for found in per_author.values()), default=0)


def reading_users(corpus_titles: list[list[str]], reading: int, rng) -> list[list[str]]:
    """Per author (their titles), the titles of the CiteULike-a user closest to them, `reading` at most."""
    data = load_dataset(f"citeulike-a:{CITEULIKE_A}")
    index = LexicalIndex.fit(data.texts)
    rows = index.transform(data.texts)
    saves = data.interactions.tocsc()
    out = []
    for titles in corpus_titles:
        similarity = (index.transform(titles) @ rows.T).toarray().max(axis=0)
        nearest = np.argsort(-similarity)[:50]
        user = int(np.argmax(np.asarray(saves[:, nearest].sum(axis=1)).ravel()))
        items = data.interactions[user].indices
        chosen = rng.choice(items, size=min(reading, len(items)), replace=False)
        out.append([data.texts[item] for item in chosen])
    return out


def leave_out(recommender, index, n_authors: int, reading: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    papers_of = defaultdict(set)
    for family, given, paper in zip(index.family, index.given, index.paper):
        if len(given) > 1:
            papers_of[(str(family), str(given))].add(int(paper))
    eligible = sorted(key for key, found in papers_of.items() if len(found) >= 3)
    chosen = [eligible[i] for i in sorted(rng.choice(len(eligible), size=min(n_authors, len(eligible)), replace=False))]
    corpus = recommender.corpus
    plans = []
    for key in chosen:
        found = sorted(papers_of[key])
        hidden = int(rng.choice(found))
        plans.append((key, hidden, [p for p in found if p != hidden]))
    readings = reading_users([[corpus[p].title for p in own] for _, _, own in plans], reading, rng)
    ranks = {(w, cap): [] for w in WEIGHTS for cap in CAPS}
    tops = {(w, cap): [] for w in WEIGHTS for cap in CAPS}
    seconds = []
    for (key, hidden, own), titles in zip(plans, readings):
        items = [paper_item(corpus[p], f"own-{p}") for p in own]
        items += [LibraryItem(key=f"cu-{n}", title=title) for n, title in enumerate(titles)]
        scores, owned = base_scores(recommender, items)
        started = time.process_time()
        matches = match_authors(index, items)
        seconds.append(time.process_time() - started)
        for w in WEIGHTS:
            for cap in CAPS:
                order = ranked(with_authors(scores, matches, owned, w, cap), owned)
                ranks[w, cap].append(int(np.flatnonzero(order == hidden)[0]) + 1)
                tops[w, cap].append(top_stats(order, matches, hidden))
    rows = []
    for (w, cap), found in ranks.items():
        found = np.array(found)
        boosted, flood = np.array(tops[w, cap]).T
        rows.append({"weight": w, "cap": cap, "median_rank": float(np.median(found)),
                     "mrr": round(float(np.mean(1 / found)), 4), "recall@20": round(float(np.mean(found <= 20)), 4),
                     "recall@50": round(float(np.mean(found <= 50)), 4),
                     "other_author_papers_in_top20": round(float(boosted.mean()), 2),
                     "most_by_one_author_in_top20_mean": round(float(flood.mean()), 2),
                     "most_by_one_author_in_top20_max": int(flood.max())})
    return {"authors": len(plans), "eligible": len(eligible),
            "library_sizes": [len(own) + len(t) for (_, _, own), t in zip(plans, readings)],
            "match_ms_median": round(1000 * float(np.median(seconds)), 2), "rows": rows}


def example_library(recommender, index) -> dict:
    from benchmarks.topic_coverage import library_topics

    items, topics = library_topics(ROOT / "examples" / "library.bib")
    nearest: dict[int, str] = {}
    scores, owned = base_scores(recommender, items, nearest)
    matches = match_authors(index, items)
    before = ranked(scores, owned)[:TOP]
    out = {"matched_corpus_papers": len({m.paper for m in matches.matches}), "lists": []}
    for w in WEIGHTS:
        for cap in CAPS:
            order = ranked(with_authors(scores, matches, owned, w, cap), owned)
            boosted, flood = top_stats(order, matches, None)
            entered = [i for i in order[:TOP].tolist() if i not in set(before.tolist())]
            covered = {topics.get(nearest.get(i, ""), "?") for i in order[:TOP].tolist()}
            out["lists"].append({"weight": w, "cap": cap, "with_library_author": boosted, "most_by_one_author": flood,
                                 "new_in_top20": len(entered), "topics": len(covered - {"?"}),
                                 "entered": [f"{recommender.corpus[i].title[:70]} — by " + ", ".join(
                                     f"{r.name} ({r.library_items})" for r in matches.reasons(i, recommender.corpus[i]))
                                     for i in entered]})
    shipped = recommender.recommend(items, top_n=TOP)  # the real path gives what the default weight and cap give
    expected = ranked(with_authors(scores, matches, owned, AUTHOR_WEIGHT, PAPERS_PER_AUTHOR), owned)[:TOP]
    position = {id(paper): number for number, paper in enumerate(recommender.corpus)}
    out["shipped_equals_default"] = [position[id(r.paper)] for r in shipped] == expected.tolist()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", type=int, default=150)
    parser.add_argument("--reading", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    recommender = default_built().recommender
    started = time.process_time()
    index = corpus_authors(recommender.corpus)
    print(f"name index: {len(index.family)} author entries, {time.process_time() - started:.2f} s CPU", flush=True)
    print(json.dumps({"example_library": example_library(recommender, index)}, indent=1, ensure_ascii=False), flush=True)
    print(json.dumps({"leave_out": leave_out(recommender, index, args.authors, args.reading, args.seed)}, indent=1),
          flush=True)


if __name__ == "__main__":
    main()
