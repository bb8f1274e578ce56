"""The one output writer: never over an input, a Zotero database, a link or a device; modes kept; atomic."""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest
from click.testing import CliRunner

from recommender.formats.output import OutputRefused, check_output_path, write_text
from zotero_bridge.cli.main import cli

from .conftest import REPO, SEEDS

LIBRARY = REPO / "examples" / "library.bib"


def _reading_list(*args):
    return CliRunner().invoke(cli, ["reading-list", "--features", "tfidf", "-n", "2", *args])


@pytest.fixture
def library(tmp_path):
    path = tmp_path / "my.bib"
    shutil.copy(LIBRARY, path)
    return path


def test_output_onto_the_zotero_database_is_refused(tmp_path, library):
    database = tmp_path / "zotero.sqlite"
    database.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    before = database.read_bytes()
    result = _reading_list("--library", str(library), "--format", "ris", "-o", str(database))
    assert result.exit_code == 1
    assert "Zotero database" in result.output and "Traceback" not in result.output
    assert database.read_bytes() == before
    for name in ("zotero.sqlite-wal", "zotero.sqlite-journal"):
        with pytest.raises(OutputRefused):
            check_output_path(tmp_path / name)


def test_any_sqlite_database_is_refused(tmp_path):
    other = tmp_path / "mine.db"
    other.write_bytes(b"SQLite format 3\x00rest")
    with pytest.raises(OutputRefused, match="SQLite"):
        write_text(other, "x")
    assert other.read_bytes().startswith(b"SQLite format 3")


def test_output_onto_the_library_or_the_corpus_is_refused(tmp_path, library):
    before = library.read_bytes()
    result = _reading_list("--library", str(library), "-o", str(library))
    assert result.exit_code == 1 and "is also an input" in result.output
    assert library.read_bytes() == before
    corpus = tmp_path / "c.txt"
    shutil.copy(SEEDS[0], corpus)
    link = tmp_path / "alias.txt"
    link.symlink_to(corpus)  # a link to an input is that input
    result = _reading_list("--library", str(library), "--corpus", str(corpus), "-o", str(link))
    assert result.exit_code == 1 and "is also an input" in result.output
    assert corpus.read_bytes() == SEEDS[0].read_bytes()


def test_output_through_a_link_writes_the_target_and_keeps_the_link(tmp_path, library):
    target = tmp_path / "real.csv"
    target.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    result = _reading_list("--library", str(library), "--format", "csv", "-o", str(link))
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("rank,id,title")


def test_an_existing_files_mode_is_kept(tmp_path, library):
    out = tmp_path / "private.md"
    out.write_text("old\n")
    out.chmod(0o600)
    result = _reading_list("--library", str(library), "--format", "markdown", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text().startswith("# Reading list")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_a_device_is_written_in_place(tmp_path):
    assert str(write_text("/dev/null", "nothing\n")) == os.path.realpath("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(OutputRefused, match="folder"):
        write_text(tmp_path, "x")


def test_score_out_onto_a_library_is_refused(tmp_path, library):
    before = library.read_bytes()
    result = CliRunner().invoke(cli, ["score", "--libraries", str(library), "--features", "tfidf",
                                      "--format", "jsonl", "--out", str(library)])
    assert result.exit_code == 1 and "is also an input" in result.output
    assert library.read_bytes() == before


def test_score_out_inside_the_libraries_folder_is_not_read_back(tmp_path, library):
    out = tmp_path / "scores.jsonl"
    args = ["score", "--libraries", str(tmp_path), "--features", "tfidf", "-n", "2", "--format", "jsonl",
            "--out", str(out), "--group-summary"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    second = CliRunner().invoke(cli, [*args, "--overwrite"])
    assert second.exit_code == 0, second.output
    users = {json.loads(line)["user"] for line in out.read_text().splitlines()}
    assert users == {"my"}
    assert (tmp_path / "scores.group.jsonl").exists()


def test_dev_stdout_is_written_not_replaced(tmp_path):
    import subprocess
    import sys

    before = os.lstat("/dev/stdout")
    result = subprocess.run([sys.executable, "-m", "zotero_bridge", "reading-list", "--library", str(LIBRARY),
                             "--features", "tfidf", "-n", "1", "--format", "csv", "-o", "/dev/stdout"],
                            capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("rank,id,title")
    after = os.lstat("/dev/stdout")
    assert stat.S_ISLNK(after.st_mode) == stat.S_ISLNK(before.st_mode) and after.st_ino == before.st_ino
