"""Closed streams and odd numbers from the environment (issue 32, "Streams"): a closed stdin, stdout or stderr
is handled — exit 1 when output could not be written, one line where a stream still works — a COLUMNS of
twenty digits is one warning, and `corpus fetch` onto a full disk names the file and what was kept."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from zotero_bridge.cli.main import cli

from .conftest import REPO

LIBRARY = REPO / "examples" / "library.bib"


def zotrec(*args, close: int | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """`zotrec ARGS` as a real process, with descriptor `close` (0, 1 or 2) closed before it starts."""
    streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    streams.pop(("stdin", "stdout", "stderr")[close], None) if close is not None else None
    return subprocess.run([sys.executable, "-m", "zotero_bridge", *map(str, args)], cwd=REPO, timeout=300,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1", **(env or {})},
                          preexec_fn=(lambda: os.close(close)) if close is not None else None, **streams)


def lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").strip().splitlines()


def test_library_from_a_closed_stdin_is_one_line():
    result = zotrec("library", "--library", "-", close=0)
    assert result.returncode == 1 and lines(result.stderr) == [
        "Error: standard input: is closed; nothing to read (give a file, or pipe one in)"]


def test_a_closed_stdout_is_exit_1_with_one_line_on_stderr():
    result = zotrec("library", "--library", LIBRARY, close=1)
    assert result.returncode == 1
    assert lines(result.stderr) == ["Error: standard output is closed; nothing could be written to it"]


def test_a_closed_stdout_does_not_fail_a_command_that_writes_a_file(tmp_path, corpus):
    out = tmp_path / "list.md"
    result = zotrec("reading-list", "--library", LIBRARY, "--corpus", corpus, "--features", "tfidf", "--model",
                    "none", "-n", "3", "--format", "markdown", "-o", out, close=1)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert out.read_text(encoding="utf-8").count("Paper ") >= 3  # the three papers, written whole
    helped = zotrec("history", "--help", close=1)
    assert helped.returncode == 1 and lines(helped.stderr) == [
        "Error: standard output is closed; nothing could be written to it"]


def test_a_closed_stderr_still_works_and_an_error_reaches_stdout():
    result = zotrec("library", "--library", LIBRARY, close=2)
    assert result.returncode == 0 and "36 items" in result.stdout.decode()
    failed = zotrec("library", "--library", REPO / "no-such-library.bib", close=2)
    assert failed.returncode == 1 and lines(failed.stdout) == [f"Error: {REPO / 'no-such-library.bib'}: no such file"]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(f'{{"id": "p{n}", "title": "Paper {n} on learning", "abstract": "Graph '
                            f'networks and kernels, part {n}."}}\n' for n in range(30)), encoding="utf-8")
    return path


def test_a_columns_of_twenty_digits_is_one_warning(corpus):
    result = zotrec("reading-list", "--library", LIBRARY, "--corpus", corpus, "--features", "tfidf",
                    "--model", "none", "-n", "3", env={"COLUMNS": "99999999999999999999"})
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    warnings = [line for line in lines(result.stderr) if "COLUMNS" in line]
    assert len(warnings) == 1 and warnings[0].startswith("Warning: COLUMNS='99999999999999999999'")
    assert max(map(len, lines(result.stdout))) <= 200


def test_corpus_fetch_onto_a_small_disk_names_the_file_and_what_was_kept(tmp_path, small_disk):
    disk, fill = small_disk
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("".join(f'{{"id": "p{n}", "title": "Paper {n}", "abstract": "About {n}."}}\n'
                              for n in range(20)), encoding="utf-8")
    env = {"ZOTREC_DATA_DIR": str(disk)}
    first = CliRunner().invoke(cli, ["corpus", "fetch", "mine", "--from", str(corpus)], env=env)
    assert first.exit_code == 0, first.output
    corpus.write_text(corpus.read_text() * 1 + "".join(
        f'{{"id": "q{n}", "title": "Longer paper {n}", "abstract": "{"words " * 200}"}}\n' for n in range(50)))
    fill()
    again = CliRunner().invoke(cli, ["corpus", "fetch", "mine", "--from", str(corpus)], env=env)
    assert again.exit_code == 1 and "Traceback" not in again.output
    error = [line for line in again.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1, again.output
    assert str(disk / "corpora") in error[0] and "No space left" in error[0]
    assert "kept the stored corpus 'mine' as it was (20 papers)" in error[0]
    assert sorted(p.name for p in (disk / "corpora").iterdir()) == ["mine.json"]  # no temporary file left
