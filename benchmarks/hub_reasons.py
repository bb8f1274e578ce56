"""Issue 39, reasons with content: would a hubness correction (CSLS, Conneau et al. 2018) choose better reasons?

A pick y's reasons are its nearest library items by cosine (recommender/scoring/aggregation.py, reasons_for). The
candidate rule: among the REASON_POOL nearest items, the reason strength of item x is cos(x, y) - r_x, where r_x is
the mean cosine of x to its k nearest corpus papers (an item near many papers, a textbook, counts for less); or by
rank: the number of corpus papers x is nearer to than to y (fewest first). The ranking is not touched.

    python benchmarks/hub_reasons.py citeulike ../shared/data/citeulike-a 300   # held-out saves: tags, co-saves
    python benchmarks/hub_reasons.py lists [--background CITEULIKE_A] [--corpus FILE] LIBRARY...   # top 20s (ICML 2025)

`citeulike`: users with >= 10 items (seeded), one saved item held out as the pick, the user's other items the
library, dense MiniLM title rows; the top reason judged by the tags it shares with the pick (item-tag.dat, picks
with tags), whether another user saved both, and whether it is form-tagged (book, review, survey, …: the
CiteULike analogue of a general item). r_x over every other CiteULike-a item ("cul") or the bundled ICML rows.
`lists`: runs `zotrec reading-list -n 20` in this process with the reasons' rows captured (the reasons printed
are the CLI's), counts the top reasons that are general items (GENERAL: counted by hand, for the control-theory
database; evaluation only, never a rule) and how far each changed reason's cosine falls.
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout

import numpy as np

REASON_POOL = 10  # the nearest items a reason is chosen from
FORM_TAGS = {"review", "reviews", "book", "books", "textbook", "survey", "tutorial", "introduction", "thesis"}
# hsteinshiromoto+bibliography.sqlite's general items, by hand: textbooks, manuals, "Introduction to …", a cookbook,
# a note on the general linear model (21 of its 38 items with text)
GENERAL = ("Probabilistic Machine Learning: An Introduction", "Neural Networks and Deep Learning",
           "An Introduction to Statistical Learning", "The Elements of Statistical Learning", "The general linear model",
           "Recommender Systems", "Nonparametric Statistics for Non-Statisticians", "Principles of Data Mining",
           "An Introduction to Machine Learning", "Foundations of Programming Languages", "Introduction to Data Science",
           "Concise Guide to Software Engineering", "Time Series Analysis and Its Applications",
           "The Algorithm Design Manual", "Introduction to Algorithms for Data Mining and Machine Learning",
           "The Matrix Cookbook", "The Data Science Design Manual", "Principles of Econometrics",
           "Design and Analysis of Control Systems", "Probability and Statistics for Computer Science",
           "Probability and Statistics")


def unit(rows) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def hub_levels(items: np.ndarray, corpus: np.ndarray, k: int, exclude_self: bool = False) -> np.ndarray:
    """r_x: each item row's mean cosine to its k nearest corpus rows (unit rows; `exclude_self`: items are the
    corpus's first rows, an item's own row left out)."""
    out = np.zeros(len(items))
    for first in range(0, len(items), 2000):
        sims = items[first:first + 2000] @ corpus.T
        if exclude_self:
            sims[np.arange(sims.shape[0]), np.arange(first, first + sims.shape[0])] = -np.inf
        out[first:first + 2000] = np.mean(-np.partition(-sims, k, axis=1)[:, :k], axis=1)
    return out


def choose(sims: np.ndarray, hub: np.ndarray | None = None, ranks: np.ndarray | None = None) -> int:
    """The place in `sims` (the pool, nearest first) of the top reason: raw (neither), hub-corrected, or by rank."""
    if ranks is not None:
        return int(np.argmin(ranks))
    return 0 if hub is None else int(np.argmax(sims - hub))


def shipped_corpus_rows() -> np.ndarray:
    from recommender.pipeline.build import default_built

    return unit(default_built(features="dense", with_model=False).recommender.corpus_rows)


def citeulike(folder: str, users: int, seed: int = 0) -> None:
    from recommender.collaborative.datasets import load_citeulike_a
    from recommender.features import make_representation

    data = load_citeulike_a(folder)
    rows = unit(make_representation("dense").fit(data.texts).transform(data.texts))
    icml = shipped_corpus_rows()
    names = [line.strip() for line in open(f"{folder}/tags.dat", encoding="utf-8")]
    form = {i for i, name in enumerate(names) if name in FORM_TAGS}
    tags = [set(map(int, line.split()[1:])) for line in open(f"{folder}/item-tag.dat", encoding="utf-8")]
    tags += [set()] * (data.n_items - len(tags))
    matrix = data.interactions.tocsr().astype(np.float32)
    by_item = matrix.T.tocsr()
    rng = np.random.default_rng(seed)
    chosen = rng.choice([u for u in range(data.n_users) if matrix[u].nnz >= 10], size=users, replace=False)
    hubs = {"raw": None}
    for k in (10, 50):
        hubs[f"CSLS k={k}, r over CiteULike-a"] = hub_levels(rows, rows, k, exclude_self=True)
        hubs[f"CSLS k={k}, r over ICML 2025"] = hub_levels(rows, icml, k)
    hubs["rank among x's CiteULike-a neighbours"] = hubs["rank among x's ICML 2025 neighbours"] = None
    picks = []
    for user in chosen:
        items = matrix[user].indices
        held = rng.choice(items)
        library = items[items != held]
        sims = rows[library] @ rows[held]
        near = np.argsort(-sims, kind="stable")[:REASON_POOL]
        pool, pool_sims = library[near], sims[near]
        both = np.asarray((by_item[pool] @ by_item[held].T).todense()).ravel() - 1  # other users who saved both
        rank_cul = ((rows[pool] @ rows.T) > pool_sims[:, None]).sum(1) - 1  # x's own row left out
        rank_icml = ((rows[pool] @ icml.T) > pool_sims[:, None]).sum(1)
        picks.append((held, pool, pool_sims, both, rank_cul, rank_icml))
    tagged = sum(bool(tags[p[0]]) for p in picks)
    print(f"{users} CiteULike-a users with >= 10 items (seed {seed}), one save held out; {tagged} held-out saves tagged")
    print("| top reason by | shares a tag with the pick | shares a tag other than book/review/… | co-saved by another "
          "user | form-tagged (book, review, survey, …) | changed | its mean cosine |")
    print("|---|---|---|---|---|---|---|")
    for name, hub in hubs.items():
        tag = content = cosaved = general = changed = 0
        cosines = []
        for held, pool, pool_sims, both, rank_cul, rank_icml in picks:
            ranks = rank_cul if "CiteULike-a neighbours" in name else rank_icml if "ICML 2025 neighbours" in name else None
            place = choose(pool_sims, None if hub is None else hub[pool], ranks)
            shared = tags[pool[place]] & tags[held]
            tag += bool(shared)
            content += bool(shared - form)
            cosaved += both[place] > 0
            general += bool(tags[pool[place]] & form)
            changed += place != 0
            cosines.append(pool_sims[place])
        print(f"| {name} | {100 * tag / tagged:.1f} % | {100 * content / tagged:.1f} % | {100 * cosaved / users:.1f} % "
              f"| {100 * general / users:.1f} % | {100 * changed / users:.1f} % | {np.mean(cosines):.3f} |")


def captured_list(library: str, corpus: list[str]) -> tuple[list[dict], dict]:
    """`zotrec reading-list --library LIBRARY -n 20 --format json` run here, with the library rows, corpus rows,
    profile titles and final order the reasons are found from."""
    import recommender.scoring.ranking as ranking
    from zotero_bridge.cli.main import cli

    captured: dict = {}
    found, named = ranking.reasons_for, ranking._reasons

    def reasons_for(rows, corpus_rows, order, *args, **kwargs):
        captured.update(rows=unit(rows), corpus=unit(corpus_rows), order=np.asarray(order))
        return found(rows, corpus_rows, order, *args, **kwargs)

    def reasons(rows, sims, profile):
        captured["titles"] = [item.title for item in profile]
        return named(rows, sims, profile)

    ranking.reasons_for, ranking._reasons = reasons_for, reasons
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            cli(args=["reading-list", "--library", library, "-n", "20", "--format", "json", *corpus], prog_name="zotrec",
                standalone_mode=False)
    finally:
        ranking.reasons_for, ranking._reasons = found, named
    return json.loads(out.getvalue()), captured


def lists(libraries: list[str], folder: str = "../shared/data/citeulike-a", corpus: list[str] = ()) -> None:
    background = None
    for library in libraries:
        shown, got = captured_list(library, list(corpus))
        rows, corpus_rows, titles = got["rows"], got["corpus"], got["titles"]
        general = np.array([title.startswith(GENERAL) for title in titles])
        sims = rows @ corpus_rows[got["order"]].T  # items × picks
        assert [titles[i] for i in np.argsort(-sims[:, 0], kind="stable")[:3]] == [r["title"] for r in shown[0]["reasons"]]
        if background is None:
            from recommender.collaborative.datasets import load_citeulike_a
            from recommender.features import make_representation

            texts = load_citeulike_a(folder).texts
            background = unit(make_representation("dense").fit(texts).transform(texts))
        variants = {"raw (main)": None}
        for k in (10, 50):
            variants[f"CSLS k={k}, r over the corpus"] = hub_levels(rows, corpus_rows, k)
        variants["rank among x's corpus neighbours"] = "rank"
        for k in (10, 50):
            variants[f"CSLS k={k}, r over CiteULike-a titles"] = hub_levels(rows, background, k)
        print(f"{library.rsplit('/', 1)[-1]} against {corpus[1] if corpus else 'the bundled ICML 2025 list'} "
              f"({len(corpus_rows)} papers): {len(titles)} items with text, {general.sum()} general (by hand)")
        print("| top reason by | general top reason, top 20 | general among the 3 shown | top reason changed | "
              "cosine lost by a changed top reason: mean, max |")
        print("|---|---|---|---|---|")
        for name, hub in variants.items():
            top = among = changed = 0
            lost = []
            for place in range(sims.shape[1]):
                pool = np.argsort(-sims[:, place], kind="stable")[:REASON_POOL]
                pool_sims = sims[pool, place]
                if isinstance(hub, str):
                    strength = -((rows[pool] @ corpus_rows.T) > pool_sims[:, None]).sum(1).astype(float)
                else:
                    strength = pool_sims - (0 if hub is None else hub[pool])
                shown_three = pool[np.argsort(-strength, kind="stable")[:3]]
                top += general[shown_three[0]]
                among += general[shown_three].sum()
                if shown_three[0] != pool[0]:
                    changed += 1
                    lost.append(pool_sims[0] - sims[shown_three[0], place])
            lost_text = f"{np.mean(lost):.3f}, {np.max(lost):.3f}" if lost else "—"
            print(f"| {name} | {top}/{sims.shape[1]} | {among}/{3 * sims.shape[1]} | {changed} | {lost_text} |")
        specific = ~general
        if general.any() and specific.any():
            gaps = [sims[:, p].max() - sims[specific, p].max() for p in range(sims.shape[1]) if general[sims[:, p].argmax()]]
            if gaps:
                print(f"picks whose nearest item is general: {len(gaps)}; the nearest specific item is "
                      f"{np.mean(gaps):.3f} less similar on average (least {np.min(gaps):.3f})")
        print()


if __name__ == "__main__":
    if sys.argv[1] == "citeulike":
        citeulike(sys.argv[2], int(sys.argv[3]))
    else:
        args, options = sys.argv[2:], {}
        while args and args[0] in ("--background", "--corpus"):
            options[args[0]], args = args[1], args[2:]
        lists(args, options.get("--background", "../shared/data/citeulike-a"),
              ["--corpus", options["--corpus"]] if "--corpus" in options else [])
