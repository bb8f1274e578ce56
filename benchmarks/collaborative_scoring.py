"""Time hybrid scoring of the ICML 2025 corpus (3,330 papers) for one user, with a model from `zotrec train`.

Usage:
    .venv/bin/python benchmarks/collaborative_scoring.py MODEL.npz [LIBRARY.bib] [CORPUS.jsonl]

Prints the one-off set-up time (corpus tf-idf + predicted corpus factors) and the per-user
scoring time (median of 5), content-only and hybrid.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from recommender.collaborative.model import CollaborativeModel
from recommender.corpus.readers import load_corpus
from recommender.scoring.ranking import Recommender
from zotero_bridge.sources.files import read_library_file

ROOT = Path(__file__).resolve().parents[1]


def _median_seconds(action, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(model_path: str, library_path: str, corpus_path: str) -> None:
    model = CollaborativeModel.load(model_path)
    items, _ = read_library_file(Path(library_path))
    papers = load_corpus([corpus_path]).papers
    for label, chosen in (("content only", None), ("hybrid", model)):
        started = time.perf_counter()
        recommender = Recommender(papers, model=chosen)
        setup = time.perf_counter() - started
        per_user = _median_seconds(lambda: recommender.recommend(items, top_n=20))
        print(f"{label:<13} {len(papers)} papers, {len(items)} library items: set-up {setup:.2f} s, "
              f"one user {per_user * 1000:.0f} ms")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    main(
        arguments[0],
        arguments[1] if len(arguments) > 1 else str(ROOT / "examples" / "library.bib"),
        arguments[2] if len(arguments) > 2 else str(ROOT.parent / "shared" / "data" / "icml2025" / "papers.jsonl"),
    )
