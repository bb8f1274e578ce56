"""Benchmark `zotrec score`: N libraries of 200 real CiteULike-a titles against the 3,330 ICML 2025 titles.

Each library is one CiteULike-a user's titles, topped up from the next users' until it holds 200
distinct titles, written as a flat .jsonl file. Each figure is one whole `zotrec score` process:
wall time, CPU time (user + system, workers included), and the peak resident memory of the process
tree (main process plus workers; shared pages counted once per process), sampled every 50 ms.
Run from the repository root:

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/batch_score.py --users 100 300 1000 --jobs 1 2

With `--features dense`, pass `--cache-dir DIR` holding the embedding cache: the first run over
the same libraries fills it, later runs read the corpus and library embeddings from it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CITEULIKE = SHARED / "data" / "citeulike-a"
ICML = SHARED / "data" / "icml2025" / "papers.jsonl"
ITEMS_PER_LIBRARY = 200


def write_libraries(folder: Path, users: int, size: int = ITEMS_PER_LIBRARY) -> None:
    """users.dat + titles.txt → `users` library files of `size` distinct titles each."""
    titles = (CITEULIKE / "titles.txt").read_text(encoding="utf-8").splitlines()
    lines = (CITEULIKE / "users.dat").read_text().splitlines()
    libraries = [[int(j) for j in line.split()[1:]] for line in lines]
    folder.mkdir(parents=True, exist_ok=True)
    for user in range(users):
        chosen: dict[int, None] = {}
        donor = user
        while len(chosen) < size:
            for item in libraries[donor % len(libraries)]:
                chosen.setdefault(item)
                if len(chosen) == size:
                    break
            donor += 1
        with (folder / f"citeulike-{user:04d}.jsonl").open("w", encoding="utf-8") as handle:
            for item in chosen:
                handle.write(json.dumps({"key": f"cul{item}", "title": titles[item]}) + "\n")


def tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants, in KiB (0 once it has gone)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds of the process tree, peak tree RSS in MiB, stderr) of one command."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    peak = 0
    while process.poll() is None:
        peak = max(peak, tree_rss_kib(process.pid))
        time.sleep(0.05)
    wall = time.perf_counter() - started
    stderr = process.stderr.read() if process.stderr else ""
    if process.returncode != 0:
        sys.exit(f"failed ({process.returncode}): {' '.join(command)}\n{stderr}")
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)  # includes the workers the command waited for
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    return wall, cpu, peak / 1024, stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--features", default="tfidf", help="tfidf (default), dense or hybrid")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--cache-dir", help="embedding cache folder (ZOTREC_CACHE_DIR) for dense features")
    args = parser.parse_args()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if args.cache_dir:
        env["ZOTREC_CACHE_DIR"] = args.cache_dir
    if not ICML.exists():
        sys.exit(f"missing {ICML}: the benchmark reads ../shared/data")
    zotrec = str(Path(sys.executable).with_name("zotrec"))
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} on {os.cpu_count()} cores; "
          f"features={args.features}, top={args.top}, {ITEMS_PER_LIBRARY} items per library, 3,330 papers")
    header = ("users", "jobs", "wall s", "scoring s", "CPU s", "users/s", "peak MiB", "load")
    print(" ".join(f"{name:>{width}}" for name, width in zip(header, (6, 4, 8, 9, 7, 8, 9, 5), strict=True)))
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "libraries"
        write_libraries(folder, max(args.users))
        for users in args.users:
            subset = sorted(folder.iterdir())[:users]
            for jobs in args.jobs:
                out = Path(temporary) / f"scores-{users}-{jobs}.csv"
                command = [zotrec, "-q", "score", "--features", args.features, "--corpus", str(ICML),
                           "-n", str(args.top), "--out", str(out), "--overwrite", "--jobs", str(jobs),
                           "--libraries", *map(str, subset)]
                wall, cpu, peak, stderr = measure(command, env)
                scoring = re.search(r"\(([\d.]+) s\)", stderr)  # the run's own time, after start-up
                scoring_s = scoring.group(1) if scoring else "?"
                print(f"{users:>6} {jobs:>4} {wall:>8.1f} {scoring_s:>9} {cpu:>7.1f} "
                      f"{users / wall:>8.1f} {peak:>9.0f} {os.getloadavg()[0]:>5.1f}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()
