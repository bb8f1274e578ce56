"""A/B of two checkouts of zotrec as whole processes, paired: each pair runs the baseline then the candidate
(the order alternates pair by pair), and the report gives medians of CPU seconds (user + system), wall
seconds and peak RSS per scenario, and the candidate/baseline CPU ratio of each pair.

    OPENBLAS_NUM_THREADS=1 python benchmarks/ab.py --baseline /path/to/main --candidate . \
        [--pairs 7] [--scenarios warm10k help bibtex10k first-run] [--bytecode cached|none]

Scenarios (docs/performance.md lists the figures):
  warm10k    `zotrec -q reading-list --library LIB10K -n 20 -o -` (10,000 CiteULike-a titles, the default
             corpus and scoring), caches and the kept library state filled by untimed runs first
  help       `zotrec --help`
  bibtex10k  `zotrec library --library LIB.bib --format json` on benchmarks/bibtex_read.py's 10,000 entries
  first-run  the README's first command, `zotrec reading-list --library examples/library.bib`, with empty
             cache and data folders each time (a fresh install)
  days       benchmarks/stream_days.py's arXiv days (`zotrec daily`: a first run, 500 new papers, none new),
             each side's whole script per pair; CPU per day and the papers each day delivered

Both checkouts run with the same Python (this one) and their own tree first on sys.path. `--bytecode
cached` (the default) gives each checkout its own bytecode folder (PYTHONPYCACHEPREFIX), filled by the
untimed runs, as an installed package has; `none` compiles every module on every run (what
PYTHONDONTWRITEBYTECODE=1 does). Needs ../shared (CiteULike-a titles, the PMLR sample).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bibtex_read import real_looking  # noqa: E402
from measure import load_text  # noqa: E402
from synthetic import write_library  # noqa: E402

SCENARIOS = ("warm10k", "help", "bibtex10k", "first-run", "days")


def timed(tree: Path, args: list[str], env: dict[str, str]) -> tuple[float, float, float, bytes]:
    """(wall s, CPU s, peak RSS MB, stdout) of `python -m zotero_bridge ARGS` run from `tree`: the child's own
    rusage (os.wait4)."""
    env = {**env, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen([sys.executable, "-m", "zotero_bridge", *args], cwd=tree, env=env,
                                   stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        out.seek(0), err.seek(0)
        if os.waitstatus_to_exitcode(status):
            message = err.read().decode(errors="replace")[-800:]
            raise RuntimeError(f"{tree}: zotrec {' '.join(args)} failed: {message}")
        return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


class Scenario:
    """One command, its environment, and what to do before each timed run."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], before=None, warmups: int = 1):
        self.name, self.args, self.env, self.before, self.warmups = name, args, env, before, warmups


def scenarios(work: Path, chosen: list[str], base_env: dict[str, str]) -> list[Scenario]:
    made = []
    if "warm10k" in chosen:
        library = write_library(work / "library-10k.jsonl", 10_000)
        env = {**base_env, "ZOTREC_CACHE_DIR": str(work / "warm-cache"),
               "ZOTREC_DATA_DIR": str(work / "warm-data")}
        args = ["-q", "reading-list", "--library", str(library), "-n", "20", "-o", "-"]
        made.append(Scenario("warm10k", args, env, warmups=2))
    if "help" in chosen:
        made.append(Scenario("help", ["--help"], base_env))
    if "bibtex10k" in chosen:
        library = work / "library-10k.bib"
        library.write_text(real_looking(10_000, header=False), encoding="utf-8")
        env = {**base_env, "ZOTREC_DATA_DIR": str(work / "bib-data"),
               "ZOTREC_CACHE_DIR": str(work / "bib-cache")}
        made.append(Scenario("bibtex10k", ["library", "--library", str(library), "--format", "json"], env))
    if "first-run" in chosen:
        fresh = work / "fresh"
        env = {**base_env, "ZOTREC_CACHE_DIR": str(fresh / "cache"), "ZOTREC_DATA_DIR": str(fresh / "data"),
               "XDG_CACHE_HOME": str(fresh / "xdg-cache"), "XDG_DATA_HOME": str(fresh / "xdg-data")}
        made.append(Scenario("first-run", ["reading-list", "--library", "examples/library.bib"], env,
                             before=lambda: shutil.rmtree(fresh, ignore_errors=True)))
    return made


def days(trees: dict[str, Path], pairs: int, env: dict[str, str]) -> dict:
    """This checkout's `stream_days.py --sources arxiv` (one harness for both sides) once a pair per side, the
    side's tree first on the zotrec processes' path, order alternating: CPU seconds per day, medians."""
    figures: dict[str, list[list[dict]]] = {side: [] for side in trees}
    for pair in range(pairs):
        for side in (list(trees) if pair % 2 == 0 else list(trees)[::-1]):
            with tempfile.NamedTemporaryFile(suffix=".json") as out:
                script = Path(__file__).resolve().parent / "stream_days.py"
                subprocess.run([sys.executable, str(script), "--sources", "arxiv", "--json", out.name],
                               cwd=trees[side], env={**env, "PYTHONPATH": str(trees[side])}, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                figures[side].append(json.loads(Path(out.name).read_text(encoding="utf-8"))["rows"])
            shown = [f"{row['cpu_s']:.2f}" for row in figures[side][-1]]
            print(f"days pair {pair + 1}: {side} CPU s by day {', '.join(shown)}", file=sys.stderr,
                  flush=True)
    report = {}
    for day, row in enumerate(figures["baseline"][0]):
        report[row["run"]] = {}
        for side in trees:
            cpu = [runs[day]["cpu_s"] for runs in figures[side]]
            report[row["run"]][side] = {"median_cpu": statistics.median(cpu), "cpu": cpu,
                                        "delivered": [runs[day]["delivered"] for runs in figures[side]]}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, type=Path)
    parser.add_argument("--candidate", required=True, type=Path)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    parser.add_argument("--bytecode", choices=("cached", "none"), default="cached")
    parser.add_argument("--work", type=Path,
                        help="keep the libraries and caches here (default: a temporary folder)")
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "candidate": args.candidate.resolve()}
    work = args.work or Path(tempfile.mkdtemp(prefix="zotrec-ab-"))
    work.mkdir(parents=True, exist_ok=True)
    base_env = {key: value for key, value in os.environ.items()
                if key not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    base_env.update({"OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "COLUMNS": "100"})
    if args.bytecode == "none":
        base_env["PYTHONDONTWRITEBYTECODE"] = "1"
    report = {"load_before": load_text(), "pairs": args.pairs, "bytecode": args.bytecode, "scenarios": {}}
    for scenario in scenarios(work, args.scenarios, base_env):
        envs = {side: dict(scenario.env) for side in trees}
        if args.bytecode == "cached":
            for side in trees:
                envs[side]["PYTHONPYCACHEPREFIX"] = str(work / f"pycache-{side}")
        outputs = {}
        for side, tree in trees.items():  # untimed: bytecode, caches, the kept library state
            for _ in range(scenario.warmups):
                if scenario.before:
                    scenario.before()
                outputs[side] = timed(tree, scenario.args, envs[side])[3]
        figures: dict[str, dict[str, list[float]]] = {side: {"cpu": [], "wall": [], "rss": []}
                                                       for side in trees}
        for pair in range(args.pairs):
            order = list(trees) if pair % 2 == 0 else list(trees)[::-1]
            for side in order:
                if scenario.before:
                    scenario.before()
                wall, cpu, rss, _ = timed(trees[side], scenario.args, envs[side])
                for key, value in (("cpu", cpu), ("wall", wall), ("rss", rss)):
                    figures[side][key].append(round(value, 3))
            shown = ", ".join(f"{side} {figures[side]['cpu'][-1]:.2f} s CPU {figures[side]['rss'][-1]:.0f} MB"
                              for side in trees)
            print(f"{scenario.name} pair {pair + 1}: {shown}", file=sys.stderr, flush=True)
        ratios = [c / b for b, c in zip(figures["baseline"]["cpu"], figures["candidate"]["cpu"])]
        report["scenarios"][scenario.name] = {
            "command": "zotrec " + " ".join(scenario.args),
            "same_output": outputs["baseline"] == outputs["candidate"],
            **{side: {f"median_{key}": round(statistics.median(values), 3)
                      for key, values in figures[side].items()}
               | {"cpu": figures[side]["cpu"], "rss": figures[side]["rss"]} for side in trees},
            "median_cpu_ratio": round(statistics.median(ratios), 3),
        }
    if "days" in args.scenarios:
        report["days"] = days(trees, args.pairs, base_env)
    report["load_after"] = load_text()
    print(json.dumps(report, indent=1))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
