"""zotero-arxiv-daily's ranking rule, as a whole process, for the benchmark's side-by-side row.

Its `rerank_paper` embeds the whole Zotero library and every candidate on each run (no cache),
weights library items by recency (newest first: 1 / (1 + log10(rank + 1)), normalised) and scores
a candidate by the weighted sum of its similarities. Here it runs with zotrec's own readers and
the same MiniLM model, so the only difference from `zotrec reading-list --features dense` is
re-embedding everything versus the embedding cache (and the aggregation rule).

    python benchmarks/rerun_baseline.py LIBRARY.jsonl CORPUS [CORPUS…]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def rerank(library_texts: list[str], dates: list[str], candidate_texts: list[str]):
    """Scores of the candidates, zotero-arxiv-daily style (library re-embedded on every call)."""
    import numpy as np

    from recommender.features.dense import MiniLMEncoder

    order = sorted(range(len(library_texts)), key=lambda i: dates[i], reverse=True)
    weights = 1 / (1 + np.log10(np.arange(len(order)) + 1))
    weights = weights / weights.sum()
    encoder = MiniLMEncoder()
    library = encoder.encode([library_texts[i] for i in order])
    candidates = encoder.encode(candidate_texts)
    return (candidates @ library.T * weights).sum(axis=1) * 10


def main(argv: list[str]) -> None:
    from recommender.corpus.readers import load_corpus
    from zotero_bridge.sources.files import read_library_file

    items, _ = read_library_file(argv[0])
    papers = load_corpus(argv[1:]).papers
    scores = rerank([item.text for item in items], [item.date_added for item in items],
                    [paper.text for paper in papers])
    best = sorted(range(len(papers)), key=lambda i: -scores[i])[:20]
    for rank, index in enumerate(best, start=1):
        print(f"{rank}\t{scores[index]:.4f}\t{papers[index].title}")


if __name__ == "__main__":
    main(sys.argv[1:])
