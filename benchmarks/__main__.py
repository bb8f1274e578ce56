"""`python -m benchmarks [list | NAME [--quick] [ARGS…]]`: zotrec's benchmarks as one suite, by question.

Each suite runs its scripts as whole processes from the repository root (the checkout first on PYTHONPATH,
OPENBLAS_NUM_THREADS=1 unless set) and each prints the table its docs page shows. `--quick` runs the suite at
small sizes, to prove it runs (not for figures). ARGS go to a one-script suite's script in place of its
defaults; data builders are in benchmarks/tools/, retired scripts in docs/benchmarks-retired.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITEULIKE_A = "../shared/data/citeulike-a"


@dataclass(frozen=True)
class Step:
    """One script of a suite: its arguments for a full run and for `--quick`."""

    script: str
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()
    needs: str = ""  # the inputs a run must be given, when it has no defaults (another suite's outputs)


@dataclass(frozen=True)
class Suite:
    """A question, the page that records its answer, and the scripts that measure it."""

    name: str
    question: str
    page: str
    steps: tuple[Step, ...]


SUITES = (
    Suite("speed", "the everyday commands: --help, reading lists cold and warm, scaling, MiniLM, re-runs, train",
          "docs/benchmarks.md", (Step("run.py", (), ("--quick", "--output", "/tmp/zotrec-bench-speed.md")),)),
    Suite("ab", "two checkouts A/B, paired, alternated: first command, warm 10k list, --help, the arXiv days",
          "docs/performance.md",
          (Step("ab.py", needs="--baseline TREE --candidate TREE [--pairs 7] [--scenarios first-run days …]"),)),
    Suite("read", "reading libraries: a 10,000-entry BibTeX, a PMLR volume, a 10,000-item zotero.sqlite",
          "docs/performance.md",
          (Step("bibtex_read.py"), Step("sqlite_read.py", (), ("--items", "500", "--repeat", "1")))),
    Suite("score", "`zotrec score` on N libraries at once: wall, CPU, peak RSS of the process tree",
          "docs/performance.md", (Step("batch_score.py", (), ("--users", "5", "--jobs", "1")),)),
    Suite("fetch", "`zotrec corpus fetch icml2025` against a local OpenReview/PMLR, then a reading list",
          "docs/performance.md", (Step("corpus_fetch.py"),)),
    Suite("streams", "`zotrec daily` for every daily source: a first run, 500 new papers, a day with nothing new",
          "docs/streams.md",
          (Step("stream_days.py", (), ("--sources", "arxiv", "feed", "--papers", "20", "--items", "50")),)),
    Suite("serve", "`zotrec serve`: the address after start, the page, a click and its refilled list",
          "docs/serve.md", (Step("serve_clicks.py", (), ("1",)),)),
    Suite("sync", "Zotero Web API requests `zotrec sync` spends: first, unchanged, after edits, a write",
          "docs/performance.md", (Step("sync_requests.py", (), ("--items", "200", "--top", "10")),)),
    Suite("robustness", "kill -9 during the slow commands, and sync's kill/fault matrix on the local API",
          "docs/performance.md", (Step("kill_matrix.py", (), ("1",)), Step("sync_fault_matrix.py"))),
    Suite("quality", "the CiteULike item-cold protocol on dense features: every rule of one fold, coarse and fine",
          "docs/evaluation.md",
          (Step("dense_fold.py", (f"citeulike-a:{CITEULIKE_A}", "128", "top5", "300"),
                (f"citeulike-a:{CITEULIKE_A}", "32", "top5", "0")),)),
    Suite("weights", "the default's fusion weights by the one-SE rule over five folds' kept signals (dump=)",
          "docs/evaluation.md",
          (Step("weight_choice.py", needs="citeulike-a=DUMPS/a [citeulike-t=DUMPS/t] [--folds 0,1,2,3,4] [--json OUT]"),)),
    Suite("tables", "docs/evaluation.md's five-fold tables (mean ± std per rule) from `quality` runs' outputs",
          "docs/evaluation.md", (Step("dense_table.py", needs="citeulike-a:FOLD0.out,FOLD1.out,… [citeulike-t:…]"),)),
    Suite("own-papers", "ordering within a field: ICML 2025 authors' own papers, graded order loss and nDCG@10",
          "docs/evaluation.md", (Step("own_papers.py", (), ("--held-out", "1", "--limit", "20")),)),
    Suite("small-corpus", "a field's few papers alone as the corpus, beside the bundled list and without it (issue 39)",
          "docs/evaluation.md",
          (Step("own_papers.py", ("--in-area",), ("--in-area", "--limit", "20")),
           Step("in_area_citeulike.py", (CITEULIKE_A, "--users", "300"), (CITEULIKE_A, "--users", "20")))),
    Suite("interests", "what the re-ranking by interests costs on CiteULike fold 0 (recall, fine nDCG, tau)",
          "docs/evaluation.md",
          (Step("interests_citeulike.py", (f"citeulike-a:{CITEULIKE_A}",), (f"citeulike-a:{CITEULIKE_A}", "20")),)),
    Suite("weak-picks", "is the weak-pick bar a bar? CiteULike-a held-out saves against random papers (issue 39)",
          "docs/evaluation-history.md",
          (Step("weak_picks.py", ("citeulike", CITEULIKE_A, "500"), ("citeulike", CITEULIKE_A, "50")),)),
    Suite("book-evidence", "whole-field items (Zotero's book type) as weaker evidence: lists, CiteULike-a",
          "docs/evaluation-history.md",
          (Step("book_evidence.py", ("citeulike", CITEULIKE_A, "1500"), ("citeulike", CITEULIKE_A, "50")),)),
    Suite("ratings", "do the page's ratings help the next list? a simulated CiteULike user, paired differences",
          "docs/serve.md", (Step("ratings.py", (CITEULIKE_A,), (CITEULIKE_A, "20")),)),
)


def listing() -> str:
    """One line per suite: its name, its question and the page that shows its table."""
    width = max(len(suite.name) for suite in SUITES)
    return "\n".join(f"{suite.name:<{width}}  {suite.question} ({suite.page})" for suite in SUITES)


def commands(suite: Suite, quick: bool, extra: list[str]) -> list[list[str]]:
    """The processes a suite runs, in order."""
    if extra and len(suite.steps) > 1:
        raise SystemExit(f"benchmarks: suite {suite.name!r} runs several scripts; run one of them for its options: "
                         + ", ".join(f"benchmarks/{step.script}" for step in suite.steps))
    for step in suite.steps:
        if step.needs and not extra:
            raise SystemExit(f"benchmarks: suite {suite.name!r} needs its inputs: python -m benchmarks {suite.name} "
                             + step.needs)
    return [[sys.executable, str(ROOT / "benchmarks" / step.script),
             *(extra or (step.quick if quick else step.full))] for step in suite.steps]


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("list", "-h", "--help"):
        print("python -m benchmarks NAME [--quick] [ARGS…]   (ARGS replace a one-script suite's defaults)\n")
        print(listing())
        return 0
    by_name = {suite.name: suite for suite in SUITES}
    if argv[0] not in by_name:
        print(f"benchmarks: no suite {argv[0]!r}; the suites are: {', '.join(by_name)}", file=sys.stderr)
        return 2
    suite, rest = by_name[argv[0]], argv[1:]
    quick, extra = "--quick" in rest, [arg for arg in rest if arg != "--quick"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    for argv_ in commands(suite, quick, extra):
        print(f"## {suite.name}: {' '.join(Path(a).name if i < 2 else a for i, a in enumerate(argv_))}", flush=True)
        code = subprocess.run(argv_, cwd=ROOT, env=env, check=False).returncode
        if code:
            print(f"benchmarks: {Path(argv_[1]).name} exited with {code}", file=sys.stderr)
            return code
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
