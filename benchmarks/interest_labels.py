"""Do interest labels name their interest (issue 39)? For each library: its interests (recommender/scoring/
interests.py on dense rows, as the default finds them), each one's label, its size, its three most central
titles (nearest the interest's mean row), and how well the label's words retrieve the interest's own items
against the rest of the library: an item is retrieved when its title holds one of the label's words (plurals
folded, generic words such as "learning" or "introduction" left out: they name nothing); precision, recall and
F1 per interest, and the mean F1 over interests weighted by size.

    python benchmarks/interest_labels.py [--mixed N] [library files: .bib, zotero.sqlite, …] [--json out.json]
    python benchmarks/interest_labels.py --compare before.json after.json   # both scored by this checkout

--mixed N: N of benchmarks/mixed_libraries.py's four-field CiteULike-a libraries (../shared/data/citeulike-a).
Run from another checkout (copy this file under it) to get that checkout's labels for the same libraries.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recommender.features.dense import DenseRepresentation  # noqa: E402
from recommender.scoring.interests import _GENERIC_FOLDED, _folded, _terms, library_interests  # noqa: E402


def mixed_libraries(count: int, root: Path) -> dict[str, tuple[list[str], list[str]]]:
    """The titles of the first `count` four-field libraries mixed_libraries.py draws (its seeds, its rules)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from mixed_libraries import MAX_ITEMS, MIN_ITEMS, draw_libraries, read_lists, tag_space

    users = read_lists(root / "users.dat")
    item_tags = read_lists(root / "item-tag.dat")
    titles = (root / "titles.txt").read_text(encoding="utf-8").splitlines()
    profiles, _ = tag_space(users, item_tags, len((root / "tags.dat").read_text(encoding="utf-8").splitlines()))
    sizes = np.array([len(items) for items in users])
    seen: set[tuple[int, ...]] = set()
    candidates = np.array([user for user in np.flatnonzero((sizes >= MIN_ITEMS) & (sizes <= MAX_ITEMS))
                           if not (tuple(users[user]) in seen or seen.add(tuple(users[user])))])
    drawn = draw_libraries(profiles, candidates, count, 4, np.random.default_rng(0))
    libraries = {}
    for members in drawn:
        mine = [titles[item] for item in sorted({int(i) for user in members for i in users[user]})]
        libraries[f"citeulike-a users {'+'.join(map(str, members))}"] = (mine, mine)
    return libraries


def file_library(path: str) -> tuple[list[str], list[str]]:
    """(titles, texts) of a library file's items with a title, as zotrec reads them."""
    from zotero_bridge.sources.dispatch import read_library

    items = [item for item in read_library([path]).items if item.title.strip()]
    return [item.title for item in items], [item.text for item in items]


def grams(title: str) -> set[str]:
    return {_folded(gram) for gram in _terms(title)}


def label_words(name: str) -> set[str]:
    """A label's words, folded, generic and academic-prose words left out (a label that is a quoted title: none)."""
    if name.startswith(("\u201c", '"')):
        return set()
    return {gram for gram in grams(name.replace(",", " ")) if " " not in gram} - _GENERIC_FOLDED


def retrieval(name: str, titles: list[str], labels: np.ndarray, label: int) -> tuple[float, float, float]:
    """(precision, recall, F1) of the label's terms retrieving the interest's items among the library's."""
    terms = label_words(name)
    hit = np.array([bool(terms & grams(title)) for title in titles])
    own = labels == label
    if not hit.any():
        return 0.0, 0.0, 0.0
    precision, recall = float((hit & own).sum() / hit.sum()), float((hit & own).sum() / own.sum())
    return precision, recall, (2 * precision * recall / (precision + recall) if precision + recall else 0.0)


def describe(name: str, titles: list[str], texts: list[str], representation) -> dict:
    rows = representation.transform(texts)
    interests = library_interests([()] * len(titles), titles, rows)
    unit = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    out = []
    for label, label_name in enumerate(interests.names):
        members = np.flatnonzero(interests.labels == label)
        centre = unit[members].mean(axis=0)
        central = members[np.argsort(-(unit[members] @ centre), kind="stable")[:3]]
        precision, recall, f1 = retrieval(label_name, titles, interests.labels, label)
        out.append({"label": label_name, "size": int(len(members)), "central": [titles[i] for i in central],
                    "precision": precision, "recall": recall, "f1": f1})
    return {"library": name, "items": len(titles), "interests": out, "titles": list(titles),
            "labels": interests.labels.tolist()}


def compare(before_path: str, after_path: str) -> None:
    """Both runs' labels scored with this checkout's words, as a Markdown table (today, new, F1s, central titles)."""
    before = json.loads(Path(before_path).read_text(encoding="utf-8"))
    after = json.loads(Path(after_path).read_text(encoding="utf-8"))
    print("| library | items | today's label | F1 | new label | F1 | the three most central titles |")
    print("|---|---|---|---|---|---|---|")
    scores: dict[str, list[tuple[float, int]]] = {"today": [], "new": []}
    for old, new in zip(before, after):
        for side, run in (("today", old), ("new", new)):
            labels = np.array(run["labels"])
            if len(run["interests"]) > 1:
                scores[side] += [(retrieval(interest["label"], run["titles"], labels, label)[2], interest["size"])
                                 for label, interest in enumerate(run["interests"])]
        for label, (a, b) in enumerate(zip(old["interests"], new["interests"])):
            labels_a, labels_b = np.array(old["labels"]), np.array(new["labels"])
            f1_a = retrieval(a["label"], old["titles"], labels_a, label)[2]
            f1_b = retrieval(b["label"], new["titles"], labels_b, label)[2]
            central = " · ".join(title[:60].replace("|", "/") for title in b["central"])
            print(f"| {old['library'] if label == 0 else ''} | {b['size']} | {a['label'] or '(one interest)'} | {f1_a:.2f} "
                  f"| {b['label'] or '(one interest)'} | {f1_b:.2f} | {central} |")
    for side, values in scores.items():
        f1, size = np.array(values).T
        print(f"{side}: label F1 over {len(f1)} interests, size-weighted {np.average(f1, weights=size):.3f}, "
              f"mean {f1.mean():.3f}, labels that retrieve nothing {np.mean(f1 == 0):.1%}")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--compare"]:
        compare(argv[1], argv[2])
        return
    out_path = None
    if "--json" in argv:
        place = argv.index("--json")
        out_path, argv = argv[place + 1], argv[:place] + argv[place + 2:]
    libraries: dict[str, tuple[list[str], list[str]]] = {}
    if "--mixed" in argv:
        place = argv.index("--mixed")
        count, argv = int(argv[place + 1]), argv[:place] + argv[place + 2:]
        libraries.update(mixed_libraries(count, ROOT.parent / "shared" / "data" / "citeulike-a"
                                         if (ROOT.parent / "shared").exists() else Path("../shared/data/citeulike-a")))
    for path in argv:
        libraries[Path(path).name] = file_library(path)
    representation = DenseRepresentation()
    results = [describe(name, titles, texts, representation) for name, (titles, texts) in libraries.items()]
    f1s, weights = [], []
    for result in results:
        print(f"{result['library']} ({result['items']} items)")
        for interest in result["interests"]:
            print(f"  {interest['label']!r:45s} {interest['size']:4d}  P {interest['precision']:.2f} "
                  f"R {interest['recall']:.2f} F1 {interest['f1']:.2f}  | {' | '.join(t[:50] for t in interest['central'])}")
            if len(result["interests"]) > 1:
                f1s.append(interest["f1"])
                weights.append(interest["size"])
    print(f"mean label F1 over {len(f1s)} interests (libraries with two or more), weighted by size: "
          f"{np.average(f1s, weights=weights):.3f}; unweighted {np.mean(f1s):.3f}")
    if out_path:
        Path(out_path).write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
