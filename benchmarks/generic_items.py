"""Can an item about everything (a textbook, a manual) be told from a specific one by a measure, not a word list
(issue 39, "reasons with content")? For each item of a library, against the bundled corpus on the default's dense
rows: its mean similarity to every corpus paper, that mean over the mean of its 50 nearest papers (how flat its
similarities are), its mean similarity to the other library items, and how similar its 30 nearest corpus papers
are to each other (a specific item's neighbours share a topic); items listed by the first, with their Zotero
item type where the source has one.

    python benchmarks/generic_items.py LIBRARY [LIBRARY …]   # .bib, zotero.sqlite, …
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from recommender.pipeline.build import default_built  # noqa: E402
from zotero_bridge.sources.dispatch import read_library  # noqa: E402

NEAREST = 50
NEIGHBOURS = 30


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def main(paths: list[str]) -> None:
    recommender = default_built().recommender
    corpus = unit(np.asarray(recommender.corpus_rows, dtype=np.float64))
    for path in paths:
        items = [item for item in read_library([path]).items if item.text.strip()]
        rows = unit(np.asarray(recommender.representation.transform([item.text for item in items]), dtype=np.float64))
        similarity = rows @ corpus.T
        mean = similarity.mean(axis=1)
        nearest = np.sort(similarity, axis=1)[:, -NEAREST:].mean(axis=1)
        library = rows @ rows.T
        np.fill_diagonal(library, np.nan)
        inside = np.nanmean(library, axis=1)
        neighbours = np.argsort(-similarity, axis=1, kind="stable")[:, :NEIGHBOURS]
        coherence = np.array([(block.sum() - NEIGHBOURS) / (NEIGHBOURS * (NEIGHBOURS - 1))
                              for block in (corpus[row] @ corpus[row].T for row in neighbours)])
        print(f"{path} ({len(items)} items): mean to the corpus, flatness, mean to the library, coherence, type, title")
        for place in np.argsort(-mean, kind="stable"):
            kind = getattr(items[place], "item_type", "") or ""
            print(f"  {mean[place]:.3f}  {mean[place] / nearest[place]:.2f}  {inside[place]:.3f}  {coherence[place]:.3f}  {kind:16s} "
                  f"{items[place].title[:80]}")


if __name__ == "__main__":
    main(sys.argv[1:])
