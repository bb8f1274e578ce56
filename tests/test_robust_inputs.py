"""Inputs are regular files or '-': FIFOs, devices and folders are refused in one line, never waited on or
read without end; a file over the size limit is refused; standard input is read (issue 24)."""

from __future__ import annotations

import os
import shutil

import pytest

from recommender.errors import InputError

from .conftest import REPO, SEEDS
from .robust_cli import error_lines, zotrec

LIBRARY = REPO / "examples" / "library.bib"


@pytest.fixture
def fifo(tmp_path):
    def make(name: str):
        path = tmp_path / name
        os.mkfifo(path)  # no writer ever opens it: reading it would wait forever
        return path
    return make


def _refused_in_one_line(result, path, kind: str) -> None:
    lines = error_lines(result)
    assert result.returncode == 1, lines
    assert len(lines) == 1 and lines[0].startswith("Error: ") and str(path) in lines[0] and kind in lines[0]
    assert "Traceback" not in result.stderr.decode()


def test_a_library_fifo_with_no_writer_is_refused_not_waited_on(fifo):
    path = fifo("library.bib")
    _refused_in_one_line(zotrec("library", "--library", path, timeout=60), path, "named pipe")


def test_a_corpus_fifo_is_refused_not_waited_on(fifo):
    path = fifo("corpus.jsonl")
    result = zotrec("reading-list", "--features", "tfidf", "--library", LIBRARY, "--corpus", path, timeout=120)
    _refused_in_one_line(result, path, "named pipe")


def test_a_device_library_is_refused_without_reading_it():
    """/dev/zero never ends: read whole it grows memory until the process dies (MemoryError here)."""
    _refused_in_one_line(zotrec("library", "--library", "/dev/zero", timeout=60), "/dev/zero", "device")


def test_a_device_named_like_a_database_is_refused(tmp_path):
    link = tmp_path / "zotero.sqlite"
    link.symlink_to("/dev/zero")
    result = zotrec("library", "--library", link, timeout=60)  # the SQLite reader's own check (not new)
    assert result.returncode == 1 and len(error_lines(result)) == 1 and str(link) in error_lines(result)[0]


def test_a_folder_where_a_file_is_expected_is_one_line(tmp_path):
    folder = tmp_path / "library.bib"
    folder.mkdir()
    _refused_in_one_line(zotrec("library", "--library", folder, timeout=60), folder, "folder")


def test_batch_reports_the_fifo_user_and_scores_the_others(fifo, tmp_path):
    good = tmp_path / "alice.bib"
    shutil.copy(LIBRARY, good)
    bad = fifo("bob.bib")
    out = tmp_path / "scores.csv"
    corpus = [part for seed in SEEDS[:8] for part in ("--corpus", seed)]
    result = zotrec("score", "--features", "tfidf", *corpus, "-n", "3", "--out", out, "--libraries", good, bad,
                    timeout=300)
    assert result.returncode == 0, error_lines(result)
    users = {line.split(",")[0] for line in out.read_text().splitlines()[1:]}
    assert users == {"alice"}
    assert "bob: " in result.stderr.decode() and "named pipe" in result.stderr.decode()


def test_a_file_over_the_limit_is_refused(tmp_path):
    from recommender.formats.textfile import read_input_bytes

    path = tmp_path / "big.bib"
    path.write_bytes(b"@article{a, title={x}}\n" * 10)
    assert read_input_bytes(path, limit=1000) == path.read_bytes()
    with pytest.raises(InputError, match="larger than"):
        read_input_bytes(path, limit=100)


def test_a_library_on_standard_input():
    result = zotrec("library", "--library", "-", "--format", "json", stdin=LIBRARY.read_bytes(), timeout=60)
    assert result.returncode == 0, error_lines(result)
    assert b'"items"' in result.stdout and b"title" in result.stdout
