"""Issue 39, reasons with content: whole-field items (textbooks, handbooks) as weaker content evidence, measured.

The rule (recommender/scoring/evidence.py, shipped at w = 0.75): a library item whose Zotero item type is a
whole-field kind (`book`, `encyclopediaArticle`, `dictionaryEntry`) counts with weight w as content evidence: its
similarities to the corpus papers are multiplied by w in the content topK (and so in the fine order's nearest-item
signals) and in the choice and similarity of the reasons; the interests' seats, their bar, the interest a paper is
said to serve, the per-user linear model and the feedback keep the unweighted similarities.

    python benchmarks/book_evidence.py lists [--corpus FILE] LIBRARY...     # top 20s, w = 1, 0.75, 0.5
    python benchmarks/book_evidence.py citeulike ../shared/data/citeulike-a 500   # held-out save among 100

`lists`: `zotrec reading-list --library LIBRARY -n 20 --format json [--corpus FILE]` run in this process (the
bundled ICML 2025 list by default) with the product's weight set to each w in turn (w = 1: zotrec without the
rule) and the kept library state off (it would hand one w's values to the next). Per w: the top reasons that are
whole-field items, the lowest match, the ranks of the picks whose top reason is a specific item, where each
specific item's nearest paper stands in the whole order, the picks that changed, and the top 5 with their reasons.

`citeulike`: weak_picks.py's protocol (seeded users with >= 6 items, one saved item held out, dense MiniLM title
rows), restricted to users with at least one book-tagged item (BOOK_TAGS, item-tag.dat) among the items kept as
the profile. The held-out save is ranked among a fixed candidate set: itself and 99 random items the user did not
save (the same set for every w), by the content top-5 (aggregation.block_values, zotrec's default aggregation)
of the profile's similarities with the book rows' similarities times w. Paired differences against w = 1, with a
bootstrap standard error over users (2,000 resamples).
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout

import numpy as np

from recommender.scoring.evidence import WHOLE_FIELD_TYPES as WHOLE_FIELD  # the product's own list

BOOK_TAGS = frozenset({"book", "books", "textbook", "handbook"})
WEIGHTS = (1.0, 0.75, 0.5)


def run_list(library: str, corpus: list[str], w: float) -> tuple[list[dict], dict]:
    """The CLI's JSON rows for one library with the product's whole-field weight set to w (the kept state off),
    and what the run saw: the profile items, their unweighted rows, the corpus rows, the whole order."""
    import recommender.pipeline.build as build
    import recommender.scoring.evidence as evidence
    import recommender.scoring.ranking as ranking
    from zotero_bridge.cli.main import cli

    saved = {"shipped": build.shipped_recommender, "recommend": ranking.Recommender.recommend,
             "order": ranking.interest_order, "weight": evidence.WHOLE_FIELD_WEIGHT}
    seen: dict = {}

    def shipped(*args, **kwargs):
        kwargs["keep_state"] = False
        return saved["shipped"](*args, **kwargs)

    def recommend(self, library_items, *args, **kwargs):
        profile = kwargs.get("profile")
        seen["items"] = [item for item in (library_items if profile is None else profile) if item.text.strip()]
        return saved["recommend"](self, library_items, *args, **kwargs)

    def interest_order(profile, rows, corpus_rows, order, *args, **kwargs):
        got = saved["order"](profile, rows, corpus_rows, order, *args, **kwargs)
        seen.update(rows=rows, corpus=corpus_rows, order=np.asarray(got[0]))
        return got

    build.shipped_recommender, evidence.WHOLE_FIELD_WEIGHT = shipped, w
    ranking.Recommender.recommend, ranking.interest_order = recommend, interest_order
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            cli(args=["reading-list", "--library", library, "-n", "20", "--format", "json", *corpus],
                prog_name="zotrec", standalone_mode=False)
    finally:
        build.shipped_recommender, evidence.WHOLE_FIELD_WEIGHT = saved["shipped"], saved["weight"]
        ranking.Recommender.recommend, ranking.interest_order = saved["recommend"], saved["order"]
    return json.loads(out.getvalue()), seen


def _top_key(row: dict) -> str | None:
    reasons = row.get("reasons") or []
    return (reasons[0].get("key") or reasons[0].get("item_key")) if reasons else None


def _reasons_line(row: dict, titles: dict, whole: set) -> str:
    """'title — reasons: item (similarity), …', whole-field items marked [book]."""
    named = [f"{titles.get(k, '—')[:45]}{' [book]' if k in whole else ''} ({r.get('similarity', 0):.2f})"
             for r in row.get("reasons") or [] for k in [r.get("key") or r.get("item_key")]]
    return f"#{row['rank']} {row['title'][:70]} ({row.get('match')} %) — {'; '.join(named) or 'no reason'}"


def lists(libraries: list[str], corpus: list[str]) -> None:
    for library in libraries:
        plain, seen = run_list(library, corpus, 1.0)
        items = seen["items"]
        whole = {item.key for item in items if item.item_type in WHOLE_FIELD}
        titles = {item.key: item.title for item in items}
        mask = np.array([item.item_type in WHOLE_FIELD for item in items])
        print(f"## {library.rsplit('/', 1)[-1]} against {corpus[1] if corpus else 'the bundled ICML 2025 list'}: "
              f"{len(items)} items with text, {mask.sum()} whole-field ({', '.join(sorted(WHOLE_FIELD))})")
        print("| w | top reason whole-field, top 20 | whole-field among reasons shown | lowest match | weak picks | "
              "ranks of picks whose top reason is specific | specific items' nearest paper: in top 20, median rank "
              "| picks changed vs w = 1 |")
        print("|---|---|---|---|---|---|---|---|")
        base = [row["id"] for row in plain]
        changes, tops = {}, {}
        for w in WEIGHTS:
            rows, got = (plain, seen) if w == 1.0 else run_list(library, corpus, w)
            if not mask.any():  # no whole-field item: the list of w = 1, byte for byte
                assert rows == plain, "a library with no whole-field item ranks differently under the weight"
            keys = [_top_key(row) for row in rows]
            assert all(k is None or k in titles for k in keys), "reasons do not carry the item keys"
            top_whole = sum(k in whole for k in keys)
            shown = [(r.get("key") or r.get("item_key")) for row in rows for r in row.get("reasons") or []]
            specific_ranks = [row["rank"] for row, k in zip(rows, keys) if k is not None and k not in whole]
            nearest = "—"
            if (~mask).any() and "order" in got:
                order = got["order"]
                sims = np.asarray(got["rows"])[~mask] @ np.asarray(got["corpus"])[order].T
                places = np.sort(np.unique(sims.argmax(axis=1))) + 1
                nearest = f"{int((places <= 20).sum())} of {len(places)} papers, median {int(np.median(places))}"
            ids = [row["id"] for row in rows]
            changed = [row for row in rows if row["id"] not in base]
            changes[w] = (changed, [row for row in plain if row["id"] not in ids])
            tops[w] = rows[:5]
            matches = [row["match"] for row in rows if row.get("match") is not None]
            print(f"| {w} | {top_whole}/{len(rows)} | {sum(k in whole for k in shown)}/{len(shown)} | "
                  f"{min(matches, default='—')} % | {sum(bool(row.get('weak')) for row in rows)} | "
                  f"{', '.join(map(str, specific_ranks)) or '—'} | {nearest} | {len(changed)} |")
        for w, (entered, left) in changes.items():
            if not entered and not left:
                continue
            print(f"w = {w}:")
            for row in entered:
                print(f"  + #{row['rank']} {row['title'][:80]} ({row.get('match')} %; top reason: "
                      f"{titles.get(_top_key(row), '—')[:50]})")
            for row in left:
                print(f"  - was #{row['rank']} {row['title'][:80]} (top reason: {titles.get(_top_key(row), '—')[:50]})")
        for w, rows in tops.items():
            print(f"top 5 at w = {w}:")
            for row in rows:
                print("  " + _reasons_line(row, titles, whole))
        print()


def _bootstrap(values: np.ndarray, rng, n: int = 2000) -> float:
    picks = rng.integers(len(values), size=(n, len(values)))
    return float(values[picks].mean(axis=1).std())


def citeulike(folder: str, users: int, seed: int = 0, candidates: int = 99) -> None:
    from recommender.collaborative.datasets import load_citeulike_a
    from recommender.features import make_representation
    from recommender.scoring.aggregation import TOP5, block_values

    data = load_citeulike_a(folder)
    names = [line.strip() for line in open(f"{folder}/tags.dat", encoding="utf-8")]
    book_tags = {i for i, name in enumerate(names) if name.lower() in BOOK_TAGS}
    tagged = [set(map(int, line.split()[1:])) for line in open(f"{folder}/item-tag.dat", encoding="utf-8")]
    is_book = np.zeros(data.n_items, dtype=bool)
    is_book[[i for i, tags in enumerate(tagged[:data.n_items]) if tags & book_tags]] = True
    rows = make_representation("dense").fit(data.texts).transform(data.texts)
    rng = np.random.default_rng(seed)
    matrix = data.interactions.tocsr()
    pool = [u for u in rng.permutation(data.n_users) if matrix[u].nnz >= 6]
    found = []  # (held, profile, candidate set)
    for user in pool:
        items = matrix[user].indices
        held = rng.choice(items)
        profile = items[items != held]
        others = []
        while len(others) < candidates:
            other = int(rng.integers(data.n_items))
            if other not in items and other not in others:
                others.append(other)
        if is_book[profile].any():
            found.append((held, profile, np.array([held, *others])))
        if len(found) == users:
            break
    eligible = sum(1 for u in pool if matrix[u].nnz >= 6)
    results = {}
    for w in WEIGHTS:
        ranks = []
        for held, profile, cands in found:
            sims = (rows[profile] @ rows[cands].T).astype(np.float32)  # (profile items, candidates)
            sims[is_book[profile]] *= w
            scores = block_values(sims, TOP5).scores(TOP5)
            ranks.append(1 + np.sum(scores[1:] > scores[0]) + 0.5 * np.sum(scores[1:] == scores[0]))
        results[w] = np.array(ranks, dtype=float)
    held_book = np.array([is_book[h] for h, _, _ in found])
    book_share = np.array([is_book[p].mean() for _, p, _ in found])
    print(f"{len(found)} CiteULike-a users (seed {seed}; of {eligible} with >= 6 items, the first {len(found)} in a "
          f"seeded order whose profile holds an item tagged {'/'.join(sorted(BOOK_TAGS))}; "
          f"{int(is_book.sum())} such items in all); the held-out save among itself + {candidates} random unsaved "
          f"items; dense title rows, content top-5; profile book share: median {np.median(book_share):.2f}; "
          f"held-out save itself book-tagged: {held_book.sum()}")
    print("| w | users | mean rank (1–100) | Δ vs w=1 ± SE | recall@10 | Δ ± SE | MRR | Δ ± SE | users improved / worse |")
    print("|---|---|---|---|---|---|---|---|---|")
    boot = np.random.default_rng(seed + 1)
    for subset, name in ((np.ones(len(found), bool), "all"), (~held_book, "held-out not a book"),
                         (held_book, "held-out a book")):
        if not subset.any():
            continue
        for w in WEIGHTS:
            r, r1 = results[w][subset], results[1.0][subset]
            cells = []
            for f in (lambda x: x, lambda x: (x <= 10).astype(float), lambda x: 1.0 / x):
                diff = f(r) - f(r1)
                cells.append(f"{f(r).mean():.4f} | {diff.mean():+.4f} ± {_bootstrap(diff, boot):.4f}")
            print(f"| {w} ({name}) | {subset.sum()} | {' | '.join(cells)} | {int((r < r1).sum())} / {int((r > r1).sum())} |")


if __name__ == "__main__":
    if sys.argv[1] == "citeulike":
        citeulike(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[2:3] == ["--corpus"]:
        lists(sys.argv[4:], ["--corpus", sys.argv[3]])
    else:
        lists(sys.argv[2:], [])
