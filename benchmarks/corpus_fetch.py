"""Benchmark `zotrec corpus fetch icml2025` against a local OpenReview/PMLR stand-in, then `reading-list`.

The stand-in (tests/fake_openreview.py, its browser check off: as for a logged-in user) serves the 3,330 ICML 2025 papers of
../shared/data/icml2025/papers.jsonl as OpenReview API v2 notes (ids, titles, authors; a made-up
abstract per paper, half of them with LaTeX, as the list has none) and as a PMLR-style BibTeX file. Each figure is one
whole `zotrec` process (wall time); the request count comes from the server's own log.
Run from the repository root:

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/corpus_fetch.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.measure import zotrec_command  # noqa: E402
from tests.fake_openreview import FakeConference, make_bibtex, make_note  # noqa: E402

ICML = REPO.parent / "shared" / "data" / "icml2025" / "papers.jsonl"
SEEDS = sorted((REPO / "recommender" / "data" / "icml2025_seeds").glob("*.txt"))
ZOTREC = zotrec_command()
LATEX_SENTENCE = (r"Our $\varepsilon$-DP estimator needs only $O(\frac{\log B}{\varepsilon^2\alpha^2})$ users "
                  r"and runs in $\widetilde{O}(n^{1.5})$ time, which is optimal for $k \geq 2$ groups. ")


def conference(papers: list[dict]) -> tuple[list[dict], bytes]:
    notes, entries = [], []
    for number, paper in enumerate(papers):
        abstract = (f"In this paper we study {paper['title'].lower()}, with theory and experiments. "
                    + LATEX_SENTENCE * (number % 2))  # about half of real abstracts carry LaTeX
        note = make_note(number, title=paper["title"], abstract=abstract, authors=paper["authors"])
        note["id"] = note["forum"] = paper["id"]
        notes.append(note)
        if paper.get("pmlr_id"):
            entries.append({"key": paper["pmlr_id"], "title": paper["title"], "openreview": paper["id"],
                            "author": " and ".join(paper["authors"]), "abstract": abstract})
    return notes, make_bibtex(entries)


def timed(command: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    return time.perf_counter() - started, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", default=str(REPO / "examples" / "library.bib"))
    args = parser.parse_args()
    papers = [json.loads(line) for line in ICML.read_text(encoding="utf-8").splitlines()]
    notes, bibtex = conference(papers)
    results = {}
    with tempfile.TemporaryDirectory() as data, FakeConference(notes, bibtex, challenge=False) as server:
        env = {**os.environ, "ZOTREC_DATA_DIR": data, "OPENBLAS_NUM_THREADS": "1"}
        for label, sources in (("openreview", [server.url]),
                               ("openreview+pmlr", [f"{server.url}/icml25.bib", server.url])):
            server.requests.clear()
            froms = [part for source in sources for part in ("--from", source)]
            seconds, done = timed([*ZOTREC, "corpus", "fetch", "icml2025", *froms, "--force"], env)
            results[f"fetch {label}"] = {"seconds": round(seconds, 2), "requests": len(server.requests),
                                         "output": done.stdout.strip()}
        reading = [*ZOTREC, "reading-list", "--library", args.library, "-n", "20", "--format", "jsonl",
                   "--features", "tfidf"]
        for label, corpus in (("stored icml2025", ["icml2025"]),
                              ("seeds + papers.jsonl", [*map(str, SEEDS), str(ICML)])):
            seconds, done = timed([*reading, *[part for c in corpus for part in ("--corpus", c)]], env)
            results[f"reading-list {label}"] = {"seconds": round(seconds, 2),
                                                "rows": len(done.stdout.splitlines()),
                                                "stderr": done.stderr.strip().splitlines()[-3:]}
    print(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
