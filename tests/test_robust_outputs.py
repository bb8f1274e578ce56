"""One writer per output file; resumed CSVs with large cells; a full disk is one line naming the path and what
was kept, with the old file whole and no temporary file left behind (issue 24)."""

from __future__ import annotations

import csv
import io
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from .conftest import REPO, SEEDS
from .robust_cli import error_lines, zotrec

LIBRARY = REPO / "examples" / "library.bib"
CORPUS = [part for seed in SEEDS[:8] for part in ("--corpus", seed)]


@pytest.fixture
def lab(tmp_path):
    folder = tmp_path / "lab"
    folder.mkdir()
    shutil.copy(LIBRARY, folder / "alice.bib")
    (folder / "bob.bib").write_text("@article{f, title={Heavy tails in normalizing flows}, abstract={Density "
                                    "estimation with flows and heavy tailed base distributions.}}\n")
    return folder


def score(*args, **kwargs):
    return zotrec("-q", "score", "--features", "tfidf", *CORPUS, "-n", "3", *args, timeout=300, **kwargs)


def _hold_lock(path) -> subprocess.Popen:
    """Another process holding the output's lock, as a running `zotrec score` does."""
    code = ("import sys\nfrom recommender.formats.output import OutputLock\n"
            "OutputLock(sys.argv[1]).acquire()\nprint('held', flush=True)\nsys.stdin.read()\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(path)], cwd=REPO, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held", holder.stderr.read()
    return holder


def test_a_second_writer_is_refused_naming_the_first(lab, tmp_path):
    out = tmp_path / "scores.csv"
    holder = _hold_lock(out)
    try:
        result = score("--out", out, "--libraries", lab)
        lines = error_lines(result)
        assert result.returncode == 1
        assert len(lines) == 1 and str(out) in lines[0] and f"pid {holder.pid}" in lines[0], lines
        assert not out.exists()  # nothing written by the refused run
    finally:
        holder.kill()  # the kernel drops a dead holder's lock: the next run goes ahead
        holder.wait()
    result = score("--out", out, "--libraries", lab)
    assert result.returncode == 0, error_lines(result)
    assert {line.split(",")[0] for line in out.read_text().splitlines()[1:]} == {"alice", "bob"}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no lock file left


def test_two_score_runs_on_one_out_do_not_interleave(tmp_path):
    """A real first run, frozen (SIGSTOP) while it holds --out: the second is refused naming it, and the
    first, continued, writes every user exactly once."""
    many = tmp_path / "many"
    many.mkdir()
    for number in range(300):
        shutil.copy(LIBRARY, many / f"user{number:03d}.bib")
    out = tmp_path / "scores.csv"
    command = [sys.executable, "-m", "zotero_bridge", "-q", "score", "--features", "tfidf", *map(str, CORPUS),
               "-n", "3", "--out", str(out), "--libraries", str(many)]
    first = subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE,
                             env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    try:
        while not (out.exists() and out.stat().st_size) and first.poll() is None:
            time.sleep(0.005)
        first.send_signal(signal.SIGSTOP)  # it holds the file, mid-run
        assert first.poll() is None, "the first run ended before it could be paused"
        second = score("--out", out, "--libraries", many)
        first.send_signal(signal.SIGCONT)
        assert second.returncode == 1 and f"pid {first.pid}" in error_lines(second)[-1], error_lines(second)
        assert first.wait(timeout=600) == 0, first.stderr.read()
    finally:
        first.kill()
    users = [line.split(",")[0] for line in out.read_text().splitlines()[1:]]
    assert len(users) == 300 * 3 and len(set(users)) == 300


def test_resuming_a_csv_with_a_cell_over_128_kib(lab, tmp_path):
    out = tmp_path / "scores.csv"
    assert score("--out", out, "--libraries", lab).returncode == 0
    header, first, *rest = out.read_text().splitlines(keepends=True)
    row = next(csv.reader([first]))  # a title may hold commas (then it is quoted)
    long_title = row[3] = "Long " * 40_000  # the title: 200 KB, one cell
    written = io.StringIO()
    csv.writer(written, lineterminator="\n").writerow(row)
    out.write_text(header + written.getvalue() + "".join(rest))
    result = score("--out", out, "--libraries", lab)
    assert result.returncode == 0, error_lines(result)
    assert "Traceback" not in result.stderr.decode()
    assert long_title in out.read_text()  # the complete user was kept, not scored again


def test_a_full_device_is_one_line_naming_it():
    for args in (("reading-list", "--features", "tfidf", *CORPUS, "--library", LIBRARY, "-o", "/dev/full"),
                 ("score", "--features", "tfidf", *CORPUS, "--out", "/dev/full", "--libraries", LIBRARY)):
        result = zotrec(*args, timeout=300)
        lines = error_lines(result)
        assert result.returncode == 1, lines
        assert lines[-1].startswith("Error: /dev/full: cannot write (No space left on device)"), lines
        assert "Traceback" not in result.stderr.decode()


def test_a_write_that_fails_keeps_the_old_file_whole_and_leaves_nothing(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "list.md"
    target.write_bytes(b"the old list\n")
    args = ("reading-list", "--features", "tfidf", *CORPUS, "--library", LIBRARY, "-n", "30", "--format",
            "markdown")
    assert zotrec(*args, timeout=300).returncode == 0  # warms the prepared-corpus cache: only -o is written next
    result = zotrec(*args, "-o", target, timeout=300, file_bytes=2000)  # a real write failure past 2,000 bytes
    lines = [line for line in error_lines(result) if not line.startswith("Warning: Weak match")]  # far tf-idf picks
    assert result.returncode == 1, lines
    assert len(lines) == 1 and lines[0].startswith(f"Error: {target}: cannot write (")
    assert "the old file is unchanged" in lines[0]
    assert target.read_bytes() == b"the old list\n"
    assert [p.name for p in folder.iterdir()] == ["list.md"]  # no temporary file left behind


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX")
def test_a_killed_writer_does_not_block_the_next(lab, tmp_path):
    out = tmp_path / "scores.csv"
    holder = _hold_lock(out)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert score("--out", out, "--libraries", lab).returncode == 0
