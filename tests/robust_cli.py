"""Running `zotrec` as a real process for the robustness tests (tests/test_robust_*.py): a hang or an endless
read shows as a timeout or a memory error there, never as a stuck test run."""

from __future__ import annotations

import os
import subprocess
import sys

from .conftest import REPO

MEMORY_LIMIT = 3 << 30  # an endless read fails fast with MemoryError under this, instead of eating the machine


def _limits(file_bytes: int | None):
    def apply() -> None:
        import resource
        import signal

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        if file_bytes is not None:  # a real write failure (EFBIG) on every file this process writes
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    return apply


def zotrec(*args, timeout: float = 120, env: dict | None = None, stdin: bytes | None = None,
           file_bytes: int | None = None) -> subprocess.CompletedProcess:
    """`zotrec ARGS` in a child process (bytes out); a run past `timeout` raises TimeoutExpired."""
    full_env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "zotero_bridge", *map(os.fsdecode, args)], cwd=REPO,
                          input=stdin if stdin is not None else b"", capture_output=True, timeout=timeout,
                          env=full_env, preexec_fn=_limits(file_bytes))


def error_lines(result: subprocess.CompletedProcess) -> list[str]:
    return result.stderr.decode("utf-8", "replace").strip().splitlines()
