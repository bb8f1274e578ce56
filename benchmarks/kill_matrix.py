"""Kill -9 at several moments of the slow commands, then run again: the re-run must succeed and give a clean
run's output, with no damaged-cache warning and no leftover temporary file (issue 24's kill matrix; sync's own
matrix, a kill between Zotero's commit and its answer, is tests/test_sync_crash.py).

    python benchmarks/kill_matrix.py [seconds ...]     # default kill moments: 0.5 1 2 4 8

Each case runs in a fresh ZOTREC_CACHE_DIR / ZOTREC_DATA_DIR; rows: command, kill moment, whether the kill
landed before the command ended, the re-run's exit code, and whether its output equals the clean run's.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
ZOTREC = [sys.executable, "-m", "zotero_bridge", "-q"]


def cases(work: Path) -> dict[str, list[str]]:
    lab = work / "lab"
    lab.mkdir(exist_ok=True)
    titles = (SHARED / "data" / "citeulike-a" / "titles.txt").read_text(encoding="utf-8").splitlines()
    for user in range(6):
        rows = "\n".join(f'{{"key": "K{user}-{i}", "title": "{t}"}}' for i, t in
                         enumerate(titles[user * 300:(user + 1) * 300]) if '"' not in t and "\\" not in t)
        (lab / f"user{user}.jsonl").write_text(rows + "\n", encoding="utf-8")
    return {
        "reading-list, cold embedding": ["reading-list", "--library", str(ROOT / "examples" / "library.bib"),
                                         "-n", "10", "--format", "json"],
        "score, 6 libraries": ["score", "--libraries", str(lab), "-n", "5", "--format", "csv", "--out",
                               str(work / "scores.csv")],
        "corpus fetch, PMLR sample": ["corpus", "fetch", "icml2025", "--from",
                                      str(SHARED / "fixtures" / "pmlr-v267" / "icml25-sample.bib"), "--force"],
    }


def run(argv: list[str], env: dict, kill_after: float | None) -> tuple[int, str, str, bool]:
    process = subprocess.Popen(ZOTREC + argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    killed = False
    if kill_after is not None:
        try:
            process.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            killed = True
    out, err = process.communicate(timeout=600)
    return process.returncode, out, err, killed


def comparable(name: str, out: str, work: Path) -> str:
    if name.startswith("score"):
        return "".join(sorted((work / "scores.csv").read_text(encoding="utf-8").splitlines(keepends=True)))
    return out


def leftovers(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.name.endswith((".tmp", ".part")) or ".tmp" in p.name]


def main(moments: list[float]) -> None:
    print(f"{'command':32s} {'kill at':>8s} {'killed':>7s} {'re-run rc':>9s} {'same output':>12s} {'warnings':>9s}")
    for name in cases(Path(tempfile.mkdtemp())):
        clean_dir = Path(tempfile.mkdtemp())
        env = {**os.environ, "ZOTREC_CACHE_DIR": str(clean_dir / "cache"), "ZOTREC_DATA_DIR": str(clean_dir / "data"),
               "OPENBLAS_NUM_THREADS": "1"}
        argv = cases(clean_dir)[name]
        started = time.perf_counter()
        rc, out, _, _ = run(argv, env, None)
        clean = comparable(name, out, clean_dir)
        print(f"{name:32s} {'none':>8s} {'-':>7s} {rc:>9d} {'(clean run, %.1f s)' % (time.perf_counter() - started):>12s}")
        for moment in moments:
            work = Path(tempfile.mkdtemp())
            env = {**env, "ZOTREC_CACHE_DIR": str(work / "cache"), "ZOTREC_DATA_DIR": str(work / "data")}
            argv = cases(work)[name]
            _, _, _, killed = run(argv, env, moment)
            rc, out, err, _ = run(argv, env, None)
            same = comparable(name, out, work) == clean
            warned = sum(1 for line in err.splitlines() if "damaged" in line or "Traceback" in line)
            left = leftovers(work)
            print(f"{name:32s} {moment:>7.1f}s {str(killed):>7s} {rc:>9d} {str(same):>12s} {warned:>9d}"
                  + (f"  leftovers: {left}" if left else ""))
            shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(clean_dir, ignore_errors=True)


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [0.5, 1, 2, 4, 8])
