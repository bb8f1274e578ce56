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
    for name, texts in (("titles", read_titles()[:3000]), ("abstracts", abstracts)):
        started, cpu_started = time.perf_counter(), time.process_time()
        encoder.encode(texts)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        rows.append({"name": f"embedding throughput, {name}", "seconds": seconds, "cpu_seconds": cpu,
                     "note": f"{len(texts) / cpu:,.1f} texts per CPU-s, {len(texts) / seconds:,.1f} per wall-s "
                             f"({len(texts):,} texts)"})
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
