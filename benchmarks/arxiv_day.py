"""`zotrec daily` on arXiv days, as whole processes (wall, CPU, peak RSS): a 1,000-item library, 500 new papers a
day served by the local arXiv double (tests/fake_arxiv.py, real HTTP, arXiv's 3 s pause kept), dense features.

Day 0 is the first run (the library is embedded too); day 1 brings 500 new papers (fetched, embedded, ranked with
day 0's in the window); day 2 brings nothing new. Between days the daily state and the seen memory are moved one
day back, as a night would. Library texts are real CiteULike-a titles (benchmarks/synthetic.py); a paper's
abstract is eight other real titles in a row (~100 words, the length of an arXiv abstract).
Targets (issue 30): day 1 ≤ 60 s CPU, day 2 ≤ 3 s CPU, on 2 cores.

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/arxiv_day.py [--papers 500] [--items 1000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.measure import environment, load_text, measure, zotrec_command  # noqa: E402
from benchmarks.synthetic import read_titles, write_library  # noqa: E402
from tests.fake_arxiv import FakeArxiv, Version  # noqa: E402


def day_papers(titles: list[str], day: int, count: int, when: datetime) -> list[Version]:
    """`count` papers of day `day`, from titles the library does not hold (it takes the first ones)."""
    start = 6000 + day * count * 9
    papers = []
    for n in range(count):
        base = start + n * 9
        abstract = ". ".join(titles[(base + k) % len(titles)] for k in range(1, 9)) + "."
        stamp = when - timedelta(minutes=n)
        papers.append(Version(base=f"2503.{day * count + n:05d}", title=titles[base % len(titles)],
                              abstract=abstract, categories=("cs.LG",), published=stamp, updated=stamp))
    return papers


def a_night_passes(data: Path) -> None:
    """The daily state and the seen memory as the next morning finds them."""
    for state in (data / "daily").glob("*.json"):
        text = state.read_text(encoding="utf-8")
        state.write_text(text.replace(date.today().isoformat(), (date.today() - timedelta(days=1)).isoformat()),
                         encoding="utf-8")
    with sqlite3.connect(data / "seen.sqlite") as db:
        db.execute("UPDATE seen SET first_day = date(first_day, '-1 day')")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=500)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    titles = read_titles()
    work = Path(tempfile.mkdtemp(prefix="zotrec-arxiv-day-"))
    data, cache = work / "data", work / "cache"
    library = write_library(work / "library.jsonl", args.items, titles)
    env = {**environment(cache), "ZOTREC_DATA_DIR": str(data)}
    arxiv = FakeArxiv()
    url = arxiv.start()
    now = datetime.now(UTC)
    argv = [*zotrec_command(), "daily", "--library", str(library), "--corpus", "arxiv:cs.LG", "--from", url,
            "-n", "20", "--atom", str(work / "arxiv.xml")]
    rows = []
    try:
        for day, (label, new) in enumerate([("day 0: first run, library embedded too", args.papers),
                                            (f"day 1: {args.papers} new papers", args.papers),
                                            ("day 2: nothing new", 0)]):
            arxiv.add(*day_papers(titles, day, new, now - timedelta(days=2 - day, hours=1)))
            if day:
                a_night_passes(data)
            before = len(arxiv.requests)
            row = measure(label, argv, 1, env=env)
            rows.append({"run": label, "wall_s": round(row.median_s, 2), "cpu_s": round(row.median_cpu_s, 2),
                         "peak_mb": round(row.peak), "requests": len(arxiv.requests) - before})
    finally:
        arxiv.stop()
    print(f"\n{load_text()}; {args.items}-item library, {args.papers} papers a day, dense features")
    print("| run | wall s | CPU s | peak RSS MB | arXiv requests |\n|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['run']} | {row['wall_s']} | {row['cpu_s']} | {row['peak_mb']} | {row['requests']} |")
    if args.json:
        args.json.write_text(json.dumps({"load": load_text(), "rows": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
