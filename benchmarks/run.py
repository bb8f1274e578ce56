"""zotrec's benchmark suite: whole-process timings, printed as a table and written to docs/benchmarks.md.

    python benchmarks/run.py            # the full suite (30-50 min on 2 shared cores, most of it embedding)
    python benchmarks/run.py --quick    # a reduced pass (about 15 min): fewer sizes and runs
    python benchmarks/run.py --targets-only   # just the figures the targets need (a few minutes)

Needs ../shared/data (CiteULike-a titles for the synthetic libraries, the ICML 2025 list, the seed
abstracts) and the `embeddings` extra for the dense rows (they are skipped with a note without it).
Every figure is a separate `zotrec` process (Python start-up and imports included); "warm" means
the embedding cache already holds the texts, "cold" that it starts empty.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from measure import ROOT, Measure, emptier, environment, load_text, measure, run_once, zotrec_command  # noqa: E402
from report import write_report  # noqa: E402
from synthetic import SHARED, read_titles, write_library  # noqa: E402

ICML = SHARED / "data" / "icml2025" / "papers.jsonl"
SEEDS = sorted((SHARED / "seeds").glob("*.txt"))
CITEULIKE = SHARED / "data" / "citeulike-a"
CORPORA = {"ICML 2025 titles (3,330)": [str(ICML)], "seed abstracts (38)": [str(p) for p in SEEDS]}


def plan(mode: str, cold_50k: bool = False) -> dict:
    """Sizes and run counts. A cold dense run embeds every text (minutes at 10k+), so those run once,
    and in --quick mode only at 1k; the seed-corpus 50k cold run would repeat the ICML one's work.
    `targets` re-measures only what the targets need (for a quiet moment on a shared machine)."""
    if mode == "targets":
        return {"sizes": [1000, 10000, 50000], "curve": [], "warm": 5, "help": 9, "als": 0, "corpora": ["ICML"],
                "features": "default", "cold": lambda size, features, corpus: int(size == 10000 and features != "tfidf"),
                "baseline_sizes": [1000], "throughput": True, "incremental": 5}
    if mode == "quick":
        return {"sizes": [1000, 10000], "curve": [2000, 5000], "warm": 3, "help": 5, "als": 1,
                "cold": lambda size, features, corpus: 3 if features == "tfidf" else int(size <= 1000),
                "baseline_sizes": [1000], "corpora": ["ICML", "seed"], "features": "all", "throughput": True,
                "incremental": 3}
    return {"sizes": [1000, 10000, 50000], "curve": [2000, 5000, 20000], "warm": 5, "corpora": ["ICML", "seed"],
            "help": 7, "als": 1, "baseline_sizes": [1000, 10000], "features": "all", "throughput": True,
            "incremental": 5,
            "cold": lambda size, features, corpus: (3 if size < 50000 else 1) if features == "tfidf" else int(
                size < 50000 or (cold_50k and corpus.startswith("ICML")))}


def mode_has_cold(settings: dict) -> bool:
    return settings["features"] == "all"


# The scorings a dense row is measured with: zotrec's default (fused: topK, tf-idf topK, the per-user linear
# model, the shipped collaborative part; issue 16 allows it +10 % over the speed targets) and content only.
SCORINGS = {"": [], " (content only)": ["--aggregation", "top5", "--model", "none"]}


def reading_list(library: Path, corpus: list[str], features: str, scoring: str = "") -> list[str]:
    args = ["-q", "reading-list", "--library", str(library), "--features", features, "-n", "20", "-o", "-"]
    return zotrec_command() + args + [arg for path in corpus for arg in ("--corpus", path)] + SCORINGS[scoring]


def reading_list_rows(settings: dict, libraries: dict[int, Path], work: Path, warm_cache: Path,
                      dense: bool) -> list[Measure]:
    """Cold runs (empty cache each time) and warm runs (the shared cache, filled by an untimed run)."""
    rows = []
    chosen = [default_features(dense)] if settings["features"] == "default" else ["tfidf"] + ["dense"] * dense
    for corpus_name, corpus in CORPORA.items():
        if not any(corpus_name.startswith(prefix) for prefix in settings["corpora"]):
            continue
        for features in chosen:
            for size in settings["sizes"]:
                for scoring in SCORINGS if features == "dense" else [""]:
                    rows += _reading_rows(settings, libraries[size], size, corpus_name, corpus, features, scoring,
                                          work, warm_cache)
    return rows


def _reading_rows(settings: dict, library: Path, size: int, corpus_name: str, corpus: list[str], features: str,
                  scoring: str, work: Path, warm_cache: Path) -> list[Measure]:
    rows = []
    argv = reading_list(library, corpus, features, scoring)
    label = f"reading-list {features}{scoring}, {size:,} items vs {corpus_name}"
    cold_runs = settings["cold"](size, features, corpus_name) if not scoring else 0  # cold: the default only
    cold = measure(f"{label}, cold", argv, cold_runs, env=environment(work / "cold-cache"),
                   before_each=emptier(work / "cold-cache"))
    if features != "tfidf":
        measure("(fill the cache)", argv, 1, env=environment(warm_cache))
    if not cold_runs and features == "dense" and mode_has_cold(settings) and not scoring:
        cold.note = (f"not run: embeds {size:,} library texts plus the corpus once (see the "
                     "throughput rows; `--cold-50k` runs it)")
    rows += [cold] if cold_runs or cold.note else []
    warm_runs = settings["warm"] if size < 50000 else 3
    # warm: embeddings and the prepared corpus cached, no kept library state (a full scoring);
    # re-runs that use the kept state are the "incremental" rows
    rows.append(measure(f"{label}, warm", argv, warm_runs, env=environment(warm_cache),
                        before_each=emptier(warm_cache / "libraries")))
    return rows


def scaling_rows(settings: dict, work: Path, warm_cache: Path, features: str) -> list[Measure]:
    """Warm reading-list time and memory against library size (ICML titles corpus)."""
    rows = []
    for size in settings["curve"]:
        library = write_library(work / f"curve-{size}.jsonl", size)
        argv, env = reading_list(library, CORPORA["ICML 2025 titles (3,330)"], features), environment(warm_cache)
        if features != "tfidf":
            measure("(fill the cache)", argv, 1, env=env)
        rows.append(measure(f"scaling: {features}, {size:,} items, warm", argv, settings["warm"], env=env))
    return rows


def incremental_rows(settings: dict, libraries: dict[int, Path], work: Path, warm_cache: Path) -> list[Measure]:
    """Re-runs that use the kept library state, for each scoring: the same 10k library again, and 10k plus
    10 new items, whose texts are new to the cache (embedded in the run: the model loads) or already cached."""
    runs = settings.get("incremental", 0)
    if not runs or 10000 not in libraries:
        return []
    return [row for scoring in SCORINGS for row in _incremental(runs, libraries[10000], work, warm_cache, scoring)]


def _incremental(runs: int, library: Path, work: Path, warm_cache: Path, scoring: str) -> list[Measure]:
    env, corpus = environment(warm_cache), CORPORA["ICML 2025 titles (3,330)"]
    base = reading_list(library, corpus, "dense", scoring)
    measure("(fill the cache)", base, 1, env=env)
    rows = [measure(f"re-run, same 10,000 items (kept state){scoring}", base, runs, env=env)]
    lines = library.read_text(encoding="utf-8").splitlines()
    stamp = time.strftime("%Y%m%d%H%M%S")
    new_texts = []
    for run in range(runs):  # titles never embedded before: real titles, marked by this run and scoring
        grown = work / f"grown-{run}{len(scoring)}.jsonl"
        extra = [json.dumps({"key": f"NEW{run}{n:03d}", "title": f"{json.loads(lines[n * 97])['title']} "
                             f"(bench {stamp} {run}{scoring})"}) for n in range(10)]
        grown.write_text("\n".join(lines + extra) + "\n", encoding="utf-8")
        new_texts.append(grown)

    def reset() -> None:  # back to the 10k state, untimed
        run_once(base, env)

    row = Measure(f"re-run after adding 10 new items to 10,000 (10 texts embedded){scoring}",
                  note="the model loads to embed the 10 new titles")
    for grown in new_texts:
        reset()
        seconds, cpu, peak = run_once(reading_list(grown, corpus, "dense", scoring), env)
        row.seconds.append(seconds)
        row.cpu_seconds.append(cpu)
        row.peak_mb.append(peak)
    cached = measure(f"re-run after adding 10 items to 10,000 (their vectors cached){scoring}",
                     reading_list(new_texts[0], corpus, "dense", scoring), runs, env=env, before_each=reset)
    return rows + [row, cached]


def throughput_rows() -> list[Measure]:
    """MiniLM texts per second (benchmarks/throughput.py, its own process): titles and seed abstracts."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "throughput.py")], cwd=ROOT,
                          capture_output=True, text=True, check=True, env=environment(Path(tempfile.gettempdir())))
    return [Measure(row["name"], [row["seconds"]], [row["cpu_seconds"]], note=row["note"])
            for row in json.loads(done.stdout)]


def als_rows(settings: dict, work: Path) -> list[Measure]:
    """`zotrec train` on citeulike-a (ALS plus its text map), when that command exists."""
    from zotero_bridge.cli.main import cli

    if "train" not in cli.commands:
        return [Measure("ALS training on citeulike-a", note="skipped: no `zotrec train` command yet")]
    argv = zotrec_command() + ["train", "--data", f"citeulike-a:{CITEULIKE}", "-o", str(work / "model.npz")]
    row = measure("zotrec train --data citeulike-a (ALS + text map)", argv, settings["als"],
                  env=environment(work / "cache-als"))
    return [row]


def baseline_rows(settings: dict, libraries: dict[int, Path], warm_cache: Path) -> list[Measure]:
    """zotero-arxiv-daily's rule (re-embed everything each run) next to our warm dense re-run."""
    rows = []
    for size in settings["baseline_sizes"]:
        corpus = CORPORA["ICML 2025 titles (3,330)"]
        env = environment(warm_cache)
        ours = measure(f"re-run, zotrec dense (cached), {size:,} items", reading_list(libraries[size], corpus, "dense"),
                       settings["warm"], env=env, before_each=emptier(warm_cache / "libraries"))
        argv = [sys.executable, str(ROOT / "benchmarks" / "rerun_baseline.py"), str(libraries[size]), *corpus]
        theirs = measure(f"re-run, zotero-arxiv-daily rule (re-embeds all), {size:,} items", argv, 1, env=env)
        theirs.note = f"{theirs.median_s / ours.median_s:.1f}× our re-run time"
        rows += [ours, theirs]
    return rows


def dense_installed() -> bool:
    """The `embeddings` extra, found without importing it (or numpy: see benchmarks/throughput.py)."""
    return all(importlib.util.find_spec(name) for name in ("onnxruntime", "tokenizers"))


def default_features(dense: bool) -> str:
    """zotrec's default representation, read in a child process so this one stays small."""
    if not dense:
        return "tfidf"
    code = "from recommender.features.dense import DEFAULT_FEATURES; print(DEFAULT_FEATURES)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def default_warm_cache() -> Path:
    """<user cache>/zotrec/benchmark-cache (platformdirs, as recommender.features.cache)."""
    from platformdirs import user_cache_path

    return user_cache_path("zotrec", appauthor=False) / "benchmark-cache"


PROFILED = r"recommender/|zotero_bridge/|latex_to_text|argpartition|__import__|rich/console"


def profile_text(library: Path, work: Path, warm_cache: Path, features: str, lines: int = 30) -> str:
    """cProfile of one warm 10k reading list: zotrec's own functions and the known heavy calls."""
    import io
    import pstats

    argv = reading_list(library, CORPORA["ICML 2025 titles (3,330)"], features)
    argv = [sys.executable, "-m", "cProfile", "-o", str(work / "profile.out"), "-m", "zotero_bridge"] + argv[
        len(zotrec_command()):]
    argv[argv.index("-o", 4) + 1] = str(work / "profiled-output.txt")
    subprocess.run(argv, cwd=ROOT, env=environment(warm_cache), capture_output=True, text=True, timeout=600,
                   check=True)
    text = io.StringIO()
    stats = pstats.Stats(str(work / "profile.out"), stream=text)
    stats.sort_stats("cumulative").print_stats(PROFILED, lines)
    output = text.getvalue().splitlines()
    start = next((i for i, line in enumerate(output) if "ncalls" in line), 0)
    return "\n".join(line for line in output[start:] if line.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description="zotrec benchmarks: whole-process timings.")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and runs (about 15 min)")
    parser.add_argument("--targets-only", action="store_true",
                        help="only --help, the warm 10k reading list and the re-run ratio (a few minutes)")
    parser.add_argument("--cold-50k", action="store_true",
                        help="also time a cold dense 50k reading list (embeds 53,330 texts: tens of minutes)")
    parser.add_argument("--output", default=str(ROOT / "docs" / "benchmarks.md"), help="markdown report path")
    parser.add_argument("--warm-cache", metavar="DIR", help="embedding cache for warm runs, kept between "
                        "benchmark runs (default: <user cache>/zotrec/benchmark-cache)")
    args = parser.parse_args()
    if not ICML.exists():
        sys.exit(f"benchmarks need ../shared/data (not found: {ICML})")
    mode = "targets" if args.targets_only else "quick" if args.quick else "full"
    settings, dense = plan(mode, args.cold_50k), dense_installed()
    warm_cache = Path(args.warm_cache) if args.warm_cache else default_warm_cache()
    context = {"started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_before": load_text(),
               "python": platform.python_version(), "mode": mode, "dense": dense}
    started = time.perf_counter()
    context["default"] = default = default_features(dense)
    with tempfile.TemporaryDirectory(prefix="zotrec-bench-") as folder:
        work = Path(folder)
        titles = read_titles()
        libraries = {size: write_library(work / f"library-{size}.jsonl", size, titles) for size in settings["sizes"]}
        steps = {  # the targets' figures first, the long cold runs after them
            "help": lambda: [measure("zotrec --help", zotrec_command() + ["--help"], settings["help"])],
            "throughput": lambda: throughput_rows() if dense and settings["throughput"] else [],
            "baseline": lambda: baseline_rows(settings, libraries, warm_cache) if dense else [],
            "incremental": lambda: incremental_rows(settings, libraries, work, warm_cache) if dense else [],
            "profile_text": lambda: profile_text(libraries[10000], work, warm_cache, default),
            "reading": lambda: reading_list_rows(settings, libraries, work, warm_cache, dense),
            "scaling": lambda: scaling_rows(settings, work, warm_cache, default),
            "als": lambda: als_rows(settings, work) if settings["als"] else [],
        }
        sections: dict = {}
        for key, step in steps.items():  # the report is rewritten after each step: a cut run keeps its rows
            sections[key] = step()
            table = _write(Path(args.output), sections, context, started, done=key == "als")
    print(table)
    print(f"\nwrote {args.output} ({context['minutes']:.1f} min; {context['load_after']})")


def _write(path: Path, sections: dict, context: dict, started: float, done: bool) -> str:
    import resource

    context.update(load_after=load_text(), minutes=(time.perf_counter() - started) / 60, complete=done,
                   driver_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return write_report(path, dict(sections), context)

if __name__ == "__main__":
    main()
