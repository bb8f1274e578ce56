"""Whole-process measurements: wall time and peak resident memory of one child process, as a median of runs."""

from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def zotrec_command() -> list[str]:
    """The installed `zotrec` script beside this Python, else `python -m zotero_bridge`."""
    script = Path(sys.executable).parent / "zotrec"
    return [str(script)] if script.exists() else [sys.executable, "-m", "zotero_bridge"]


@dataclass
class Measure:
    """One benchmark row: what ran, its wall times (s) and peak RSS (MB) per run."""

    name: str
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def median_s(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")

    @property
    def median_cpu_s(self) -> float:
        """User + system CPU time: less sensitive than wall time to other work on a shared machine."""
        return statistics.median(self.cpu_seconds) if self.cpu_seconds else float("nan")

    @property
    def peak(self) -> float:
        return max(self.peak_mb) if self.peak_mb else float("nan")


def run_once(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one child; raises with its stderr if it fails."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({process.returncode}): {stderr.strip()[-500:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux reports KiB


def measure(name: str, argv: list[str], runs: int, *, env: dict[str, str] | None = None,
            before_each=None, note: str = "") -> Measure:
    """Run `argv` `runs` times (calling `before_each()` first, e.g. to empty a cache)."""
    result = Measure(name, note=note)
    for _ in range(runs):
        if before_each is not None:
            before_each()
        seconds, cpu, peak = run_once(argv, env)
        result.seconds.append(seconds)
        result.cpu_seconds.append(cpu)
        result.peak_mb.append(peak)
        print(f"  {name}: {seconds:.2f} s wall, {cpu:.2f} s CPU, {peak:.0f} MB", file=sys.stderr, flush=True)
    return result


def environment(cache_dir: Path) -> dict[str, str]:
    """The child environment: our cache folder, one BLAS thread (implicit), offline model hubs, and bytecode
    kept as an installed package keeps it (a shell with PYTHONDONTWRITEBYTECODE=1 would make every child
    compile zotrec's modules again, 0.15-0.3 s of CPU a user's install never pays)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update({"ZOTREC_CACHE_DIR": str(cache_dir), "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
                "PYTHONPYCACHEPREFIX": str(bytecode_dir())})
    return env


def bytecode_dir() -> Path:
    """This checkout's own bytecode folder in the temporary folder (outside the tree, one per checkout)."""
    checkout = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"zotrec-bench-bytecode-{checkout}"


def emptier(folder: Path):
    """A before_each that deletes a cache folder (a cold run)."""
    def empty() -> None:
        shutil.rmtree(folder, ignore_errors=True)
    return empty


def load_text() -> str:
    """Load average and core count, to print beside figures taken on a shared machine."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} cores"
