"""How many Zotero Web API requests `zotrec sync` spends, measured against the local fake API server.

Scenarios: the first sync of a 1,000-item library (reads + writing 20 recommendations), an unchanged re-sync,
a re-sync after 10 edits made in another client, and the write of 20 recommendations on its own.
Physical minimum for comparison: ceil(n/100) reads, ceil(k/50) writes.

    .venv/bin/python benchmarks/sync_requests.py            # 1,000 items, top 20, ICML 2025 corpus if present
    .venv/bin/python benchmarks/sync_requests.py --items 5000 --top 50 --json
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from recommender.corpus.readers import load_corpus, make_paper  # noqa: E402
from tests.zotero_server import FakeZotero, KeyAccess  # noqa: E402
from zotero_bridge.sources import SourceOptions  # noqa: E402
from recommender.scoring.ranking import Recommender
from zotero_bridge.sync.run import SyncRequest, run_sync  # noqa: E402

KEY = "benchmarkKEY000000000000"
USER = 1
ICML = REPO.parent / "shared" / "data" / "icml2025" / "papers.jsonl"
WORDS = ("diffusion transformer graph kernel bandit causal privacy robust sparse policy reward protein molecule "
         "language vision federated optimizer attention flow bayesian").split()


def corpus():
    if ICML.is_file():
        return load_corpus([ICML]).papers
    rng = random.Random(0)
    return [make_paper(where="synthetic", id=f"p{n}", title=" ".join(rng.sample(WORDS, 4)),
                       abstract=" ".join(rng.choices(WORDS, k=60))) for n in range(3000)]


def seed_library(server: FakeZotero, size: int) -> None:
    rng = random.Random(1)
    library = server.library("user", USER)
    collections = [server.add_collection(library, f"Topic {n}") for n in range(10)]
    for _ in range(size):
        server.add_item(library, title=" ".join(rng.sample(WORDS, 5)).capitalize(),
                        abstractNote=" ".join(rng.choices(WORDS, k=80)), collections=[rng.choice(collections)])


def measure(items: int, top: int) -> dict:
    server = FakeZotero({KEY: KeyAccess(USER)}).start()
    try:
        seed_library(server, items)
        papers = corpus()
        cache = Path(tempfile.mkdtemp(prefix="zotrec-bench-"))
        options = SourceOptions(library_id=str(USER), api_key=KEY, endpoint=server.url, cache_dir=cache)

        def run(name: str) -> dict:
            report = run_sync(SyncRequest(Recommender(papers), options, "Recommended · ICML 2025", top_n=top))
            written = report.result
            return {"scenario": name, **report.stats, "created": written.created if written else 0,
                    "removed": written.removed if written else 0}

        rows = [run(f"first sync, {items}-item library, write top {top}"), run("unchanged re-sync")]
        library = server.library("user", USER)
        user_keys = [k for k, d in library.items.items() if not any(t.get("tag") == "zotrec" for t in d["tags"])]
        for key in random.Random(2).sample(user_keys, 10):
            server.edit_item(library, key, title=library.items[key]["title"] + " (edited)")
        rows.append(run("re-sync after 10 edits"))
        return {"items": items, "top": top, "corpus_papers": len(papers), "rows": rows,
                "minimum": {"first_read": -(-items // 100), "write_k": -(-top // 50)}}
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    result = measure(args.items, args.top)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['items']} library items, top {result['top']}, {result['corpus_papers']} corpus papers")
    print(f"{'scenario':<45} {'requests':>8} {'reads':>6} {'writes':>6} {'created':>8} {'removed':>8}")
    for row in result["rows"]:
        print(f"{row['scenario']:<45} {row['requests']:>8} {row['read_requests']:>6} {row['write_requests']:>6}"
              f" {row['created']:>8} {row['removed']:>8}")
    print(f"physical minimum: {result['minimum']['first_read']} reads for the first read (+1 for collections), "
          f"{result['minimum']['write_k']} write(s) for {result['top']} papers")


if __name__ == "__main__":
    main()
