"""A bad environment value is one warning naming it, then the default; `score -j` workers end quietly with
their parent (issue 24)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

from recommender.retry import DEADLINE_S, default_deadline

from .conftest import REPO, SEEDS
from .robust_cli import error_lines, zotrec

LIBRARY = REPO / "examples" / "library.bib"


def test_junk_in_columns_is_one_warning_naming_it():
    result = zotrec("reading-list", "--features", "tfidf", "--corpus", SEEDS[0], "--corpus", SEEDS[1],
                    "--library", LIBRARY, "-n", "3", env={"COLUMNS": "wide"}, timeout=300)
    assert result.returncode == 0, error_lines(result)
    warnings = [line for line in error_lines(result) if "COLUMNS" in line]
    assert len(warnings) == 1 and warnings[0].startswith("Warning: COLUMNS='wide'"), error_lines(result)
    assert result.stdout  # the table, at the default width


def test_junk_in_the_deadline_is_one_warning_naming_it(monkeypatch, caplog):
    monkeypatch.setenv("ZOTREC_DEADLINE_S", "soon-ish")
    with caplog.at_level(logging.WARNING):
        assert default_deadline() == DEADLINE_S and default_deadline() == DEADLINE_S
    said = [r.getMessage() for r in caplog.records if "ZOTREC_DEADLINE_S" in r.getMessage()]
    assert len(said) == 1 and "soon-ish" in said[0]
    monkeypatch.setenv("ZOTREC_DEADLINE_S", "2.5")
    assert default_deadline() == 2.5


WORKERS = """
import os, signal, sys, time
from recommender import LibraryItem, Paper, Recommender
from recommender.batch.runner import score_libraries

papers = [Paper(id=f"p{i}", title=f"Paper {i} on topic {i % 7}", abstract=f"Words about subject {i % 5}.")
          for i in range(60)]

def load(user):
    with open(sys.argv[1], "a") as pids:
        pids.write(f"{os.getpid()}\\n")
    time.sleep(0.3)
    return [LibraryItem(key="k", title="Paper on topic 3")]

def progress(done, total):
    if done >= 1:  # the parent dies (kill -9) while its workers are busy
        os.kill(os.getpid(), signal.SIGKILL)

score_libraries(Recommender(papers), {f"u{i}": i for i in range(40)}, load=load, output=sys.argv[2],
                jobs=2, chunk_users=2, progress=progress)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie has exited
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_workers_end_quietly_when_their_parent_is_killed(tmp_path):
    pids, errors = tmp_path / "pids", tmp_path / "stderr"
    with open(errors, "wb") as stderr:
        parent = subprocess.run([sys.executable, "-c", WORKERS, str(pids), str(tmp_path / "s.csv")], cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=stderr, timeout=300,
                                env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert parent.returncode == -signal.SIGKILL
    workers = {int(pid) for pid in pids.read_text().split()}
    assert workers
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers)
    assert "Traceback" not in errors.read_text(), errors.read_text()
