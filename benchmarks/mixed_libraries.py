"""Interests for mixed libraries (issue 33): libraries merged from CiteULike-a users of unrelated fields, ranked by
the shipped Recommender (dense features, the fused score with the shipped collaborative model, interests on), and
how many of the merged fields reach the top 20.

    python benchmarks/mixed_libraries.py ../shared/data/citeulike-a [libraries] [fields] [others]

Users with 40–150 items are candidates (one of users with the same items). A library's users are drawn seeded, each next user's tag profile (tf-idf
over users of the tags on their items) at most MAX_TAG_COSINE similar to every user drawn before: different fields
by their own tags, not by the title embeddings the recommender reads. Each user's items are split once, seeded:
a quarter held out. The corpus (one for every library) is every drawn user's held-out items plus `others` random
items of nobody drawn. A top-20 paper's field, three ways:
  - tags: the drawn user whose tag profile is nearest the paper's tags (cosine ≥ TAG_FLOOR; untagged held-out
    papers: their user), else none (the embedding takes no part);
  - nearest: the user whose library item is the paper's first reason (what the list says it serves);
  - held out: a field whose own held-out papers reach the top 20 (strict: other good papers of the field count not).
Single-field libraries (each drawn user alone, same corpus) give recall@20 and nDCG@20 of their held-out papers,
the check that one-field lists are not harmed. Times: wall and CPU seconds of the scoring loop.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel  # noqa: E402
from recommender.features.dense import DenseRepresentation  # noqa: E402
from recommender.items import LibraryItem, Paper  # noqa: E402
from recommender.scoring.fusion import DEFAULT_SCORING  # noqa: E402
from recommender.scoring.ranking import Recommender  # noqa: E402

MIN_ITEMS, MAX_ITEMS = 40, 150
MAX_TAG_COSINE = 0.02  # unrelated fields: the users' tag profiles share (almost) nothing
TAG_FLOOR = 0.05  # a paper whose tags are this far from every drawn user's has no field
HELD_OUT = 0.25
TOP = 20


def read_lists(path: Path) -> list[np.ndarray]:
    return [np.array(line.split()[1:], dtype=np.int64) for line in path.read_text().splitlines()]


def tag_space(users: list[np.ndarray], item_tags: list[np.ndarray], n_tags: int):
    """(user profiles, idf): each user's tag counts over their items, weighted by idf over users, unit rows."""
    from scipy import sparse

    rows, columns = [], []
    for user, items in enumerate(users):
        for item in items:
            columns.extend(item_tags[item].tolist())
            rows.extend([user] * len(item_tags[item]))
    counts = sparse.csr_matrix((np.ones(len(rows)), (rows, columns)), shape=(len(users), n_tags))
    counts.sum_duplicates()
    idf = np.log((1 + len(users)) / (1 + counts.getnnz(axis=0))) + 1.0
    profiles = counts @ sparse.diags(idf)
    norms = np.sqrt(np.asarray(profiles.multiply(profiles).sum(axis=1))).ravel()
    return sparse.diags(1 / np.maximum(norms, 1e-12)) @ profiles, idf


def draw_libraries(profiles, candidates: np.ndarray, libraries: int, fields: int, rng) -> list[list[int]]:
    drawn: list[list[int]] = []
    similarity = (profiles[candidates] @ profiles[candidates].T).toarray()
    for _ in range(libraries * 50):
        if len(drawn) == libraries:
            break
        picked = [int(rng.integers(len(candidates)))]
        for place in rng.permutation(len(candidates)):
            if len(picked) == fields:
                break
            if all(similarity[place, other] <= MAX_TAG_COSINE for other in picked):
                picked.append(int(place))
        if len(picked) == fields:
            drawn.append([int(candidates[place]) for place in picked])
    return drawn


def main(root: str, libraries: int = 50, fields: int = 4, others: int = 3000) -> None:
    root = Path(root)
    started = time.time()
    users = read_lists(root / "users.dat")
    item_tags = read_lists(root / "item-tag.dat")
    titles = (root / "titles.txt").read_text(encoding="utf-8").splitlines()
    tags = (root / "tags.dat").read_text(encoding="utf-8").splitlines()
    profiles, idf = tag_space(users, item_tags, len(tags))
    rng = np.random.default_rng(0)
    sizes = np.array([len(items) for items in users])
    seen: set[tuple[int, ...]] = set()
    candidates = np.array([user for user in np.flatnonzero((sizes >= MIN_ITEMS) & (sizes <= MAX_ITEMS))
                           if not (tuple(users[user]) in seen or seen.add(tuple(users[user])))])  # one per library
    drawn = draw_libraries(profiles, candidates, libraries, fields, rng)
    people = sorted({user for library in drawn for user in library})
    held = {}
    for user in people:
        items = np.random.default_rng(user).permutation(users[user])
        cut = max(5, int(round(HELD_OUT * len(items))))
        held[user] = (np.sort(items[cut:]), np.sort(items[:cut]))  # (library, held out)
    mine = set(np.concatenate([users[user] for user in people]).tolist())
    outside = np.array(sorted(set(range(len(titles))) - mine))
    corpus_items = np.unique(np.concatenate([*(held[user][1] for user in people),
                                             rng.choice(outside, size=min(others, len(outside)), replace=False)]))
    vectors = DenseRepresentation().transform([titles[item] for item in corpus_items])
    papers = [Paper(id=str(item), title=titles[item]) for item in corpus_items]
    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    recommender = Recommender(papers, representation=DenseRepresentation(), aggregation=DEFAULT_SCORING, model=model,
                              corpus_rows=vectors)
    print(f"{len(drawn)} libraries of {fields} users ({len(people)} users), corpus {len(papers)} titles; "
          f"setup {time.time() - started:.0f} s", flush=True)

    def paper_tags(item: int) -> np.ndarray:
        row = np.zeros(len(tags))
        np.add.at(row, item_tags[item], idf[item_tags[item]])
        return row / max(np.linalg.norm(row), 1e-12)

    def library_of(members: list[int]) -> tuple[list[LibraryItem], dict[str, int]]:
        owner: dict[int, int] = {}
        for field, user in enumerate(members):
            for item in held[user][0]:
                owner[int(item)] = -1 if int(item) in owner else field  # shared by two fields: nobody's
        items = [LibraryItem(key=str(item), title=titles[item]) for item, field in owner.items() if field >= 0]
        return items, {str(item): field for item, field in owner.items() if field >= 0}

    def field_by_tags(item: int, members: list[int]) -> int:
        for field, user in enumerate(members):
            if item in held_sets[user]:
                if not len(item_tags[item]):
                    return field
        if not len(item_tags[item]):
            return -1
        similarity = np.asarray(profiles[members] @ paper_tags(item)).ravel()
        return int(np.argmax(similarity)) if similarity.max() >= TAG_FLOOR else -1

    held_sets = {user: set(held[user][1].tolist()) for user in people}
    libraries_built = [library_of(members) for members in drawn]
    clock, cpu = time.perf_counter(), time.process_time()
    for interests in (False, True):
        recommender.interests = interests
        views = {"tags": [], "nearest": [], "held out": []}
        found, recall = [], []
        for members, (items, owner) in zip(drawn, libraries_built):
            shown = recommender.recommend(items, top_n=TOP)
            ids = [int(rec.paper.id) for rec in shown]
            views["tags"].append([field_by_tags(item, members) for item in ids])
            views["nearest"].append([owner[rec.reasons[0].item_key] if rec.reasons else -1 for rec in shown])
            views["held out"].append([field for field, user in enumerate(members) for item in ids
                                      if item in held_sets[user]])
            found.append(len({rec.interest for rec in shown} - {""}))
            pool = set().union(*(held_sets[user] for user in members))
            recall.append(len(pool & set(ids)) / len(pool))
        label = "interests" if interests else "score order"
        for view, fields_shown in views.items():
            report(f"{label:11s} by {view:8s}", fields_shown, fields, view == "held out", libraries_built)
        print(f"{label:11s} interests named in the top {TOP}: mean {np.mean(found):.2f}, one or none "
              f"{np.mean(np.array(found) <= 1):.0%}; held-out recall@{TOP} {np.mean(recall):.4f}", flush=True)
    print(f"merged libraries: {time.perf_counter() - clock:.0f} s wall, {time.process_time() - cpu:.0f} s CPU",
          flush=True)
    icml(drawn, libraries_built, fields)
    single(recommender, people, held, held_sets, titles)


def report(label: str, fields_shown: list[list[int]], fields: int, strict: bool, libraries_built) -> None:
    """Fields with at least 1 and at least 3 of the top TOP, and (not for held-out hits) how far the top TOP's
    field shares are from the library's (total variation: 0 is each field's share of the items, 1 disjoint)."""
    counts = np.array([np.bincount([field for field in shown if field >= 0], minlength=fields)
                       for shown in fields_shown])
    one, three = (counts >= 1).sum(axis=1), (counts >= 3).sum(axis=1)
    line = (f"{label}: fields with ≥1 of the top {TOP}: mean {one.mean():.2f} of {fields}, ≥3 fields in "
            f"{np.mean(one >= 3):.0%}; fields with ≥3 places: mean {three.mean():.2f}, ≥3 fields in "
            f"{np.mean(three >= 3):.0%}")
    if not strict:
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        owned = np.array([np.bincount(list(owner.values()), minlength=fields) for _, owner in libraries_built])
        owned = owned / owned.sum(axis=1, keepdims=True)
        line += f"; distance from the library's shares {np.mean(np.abs(shares - owned).sum(axis=1) / 2):.3f}"
    print(line, flush=True)


def icml(drawn: list[list[int]], libraries_built, fields: int) -> None:
    """The same libraries against the default corpus (ICML 2025, no held-out papers): a field with no papers
    there cannot appear; fields by nearest item."""
    from recommender.pipeline.build import default_built

    recommender = default_built().recommender
    clock, cpu = time.perf_counter(), time.process_time()
    for interests in (False, True):
        recommender.interests = interests
        fields_shown = []
        for items, owner in libraries_built:
            shown = recommender.recommend(items, top_n=TOP)
            fields_shown.append([owner[rec.reasons[0].item_key] if rec.reasons else -1 for rec in shown])
        report(f"ICML 2025 corpus, {'interests' if interests else 'score order'} by nearest", fields_shown, fields,
               False, libraries_built)
    print(f"ICML 2025 corpus: {time.perf_counter() - clock:.0f} s wall, {time.process_time() - cpu:.0f} s CPU",
          flush=True)


def single(recommender: Recommender, people: list[int], held, held_sets, titles, sample: int = 60) -> None:
    """recall@20 and nDCG@20 of each user's held-out papers with their own library alone."""
    chosen = people[:: max(1, len(people) // sample)][:sample]
    clock, cpu = time.perf_counter(), time.process_time()
    for interests in (False, True):
        recommender.interests = interests
        recall, ndcg = [], []
        for user in chosen:
            items = [LibraryItem(key=str(item), title=titles[item]) for item in held[user][0]]
            ids = [int(rec.paper.id) for rec in recommender.recommend(items, top_n=TOP)]
            gains = np.array([item in held_sets[user] for item in ids], dtype=float)
            ideal = np.sum(1 / np.log2(np.arange(2, min(TOP, len(held_sets[user])) + 2)))
            recall.append(gains.sum() / len(held_sets[user]))
            ndcg.append(float(np.sum(gains / np.log2(np.arange(2, len(ids) + 2)))) / ideal)
        label = "interests" if interests else "score order"
        print(f"single users ({len(chosen)}) {label:11s} recall@{TOP} {np.mean(recall):.4f}  "
              f"nDCG@{TOP} {np.mean(ndcg):.4f}", flush=True)
    print(f"single libraries: {time.perf_counter() - clock:.0f} s wall, {time.process_time() - cpu:.0f} s CPU",
          flush=True)


if __name__ == "__main__":
    main(sys.argv[1], *(int(value) for value in sys.argv[2:]))
