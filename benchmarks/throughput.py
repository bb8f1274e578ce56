"""MiniLM texts per second, in a process of its own (model loaded first); prints JSON rows for run.py.

A separate process keeps the benchmark driver small: Linux reports a child's peak memory as at
least its parent's, so the driver must never load the model itself.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import SHARED, read_titles  # noqa: E402


def main() -> None:
    from recommender.corpus.readers import load_corpus
    from recommender.features.dense import MiniLMEncoder

    encoder = MiniLMEncoder()
    encoder.encode(["warm up"])
    abstracts = [paper.text for paper in load_corpus(sorted((SHARED / "seeds").glob("*.txt"))).papers]
    rows = []
    for name, texts in (("titles", read_titles()[:2000]), ("abstracts", abstracts)):
        started = time.perf_counter()
        encoder.encode(texts)
        seconds = time.perf_counter() - started
        rows.append({"name": f"embedding throughput, {name}", "seconds": seconds,
                     "note": f"{len(texts) / seconds:,.1f} texts/s ({len(texts):,} texts)"})
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
