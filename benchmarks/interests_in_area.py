"""Does the re-ranking by interests (recommender/scoring/facets.py) leave a corpus from one area in its order?
A multi-interest library (examples/library.bib) scored by the default against small corpora of one area each
(the first 40 papers of the bundled ICML 2025 list whose titles contain a phrase), every paper ranked (`-n 0`):
how many places differ from the score order, and Kendall's tau between the two orders.

    python benchmarks/interests_in_area.py [phrase …]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel  # noqa: E402
from recommender.corpus.readers import load_corpus  # noqa: E402
from recommender.scoring.ranking import Recommender  # noqa: E402
from zotero_bridge.cli.corpus_input import default_corpus_paths  # noqa: E402
from zotero_bridge.sources.files import read_library_file  # noqa: E402

PHRASES = ("time series", "flow", "language model", "reward")


def main(phrases: tuple[str, ...]) -> None:
    items, _ = read_library_file(ROOT / "examples" / "library.bib")
    papers = load_corpus(default_corpus_paths()).papers
    model = DenseCollaborativeModel.load(SHIPPED_MODEL)
    for phrase in phrases:
        corpus = [paper for paper in papers if phrase in paper.title.lower()][:40]
        orders = [[rec.paper.id for rec in Recommender(corpus, representation="dense", model=model,
                                                      interests=interests).recommend(items, top_n=0)]
                  for interests in (False, True)]
        place = {paper: position for position, paper in enumerate(orders[1])}
        moved = sum(a != b for a, b in zip(*orders))
        tau = kendalltau(np.arange(len(orders[0])), [place[paper] for paper in orders[0]]).statistic
        print(f"{phrase!r}: {len(corpus)} papers, {moved} places differ, Kendall tau {tau:.3f}")


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or PHRASES)
