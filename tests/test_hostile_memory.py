"""zotrec's memory files under attack (issue 42, "Tracebacks" and "Smaller"): seen.sqlite and history.sqlite
with damaged pages, locked by another process, or in a data folder that cannot be written. Each is a real
SQLite file on disk (written by zotrec itself, then damaged, locked or frozen), used by the real command."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from zotero_bridge.cli.main import cli

REPO = Path(__file__).resolve().parents[1]
LIBRARY = str(REPO / "examples" / "library.bib")


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def corpus(tmp_path):
    """Daily (arXiv) papers, so that the seen memory is read."""
    path = tmp_path / "papers.jsonl"
    rows = [{"id": f"arxiv:2501.{n:05d}", "title": title, "abstract": f"{title}: a study of method {n}.",
             "authors": ["Jane Doe"], "url": f"https://arxiv.org/abs/2501.{n:05d}", "categories": ["cs.LG"]}
            for n, title in enumerate(["Normalizing flows", "Reward models from human preferences",
                                       "Transformers for long-term forecasting", "Graph networks"], 1)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def _listing(corpus: str, *args: str):
    result = CliRunner().invoke(cli, ["reading-list", "--library", LIBRARY, "--corpus", corpus, "-n", "3",
                                      "--features", "tfidf", "--format", "json", *args])
    assert "zotrec hit a bug" not in result.output and "Traceback" not in result.output, result.output
    return result


def _seen_with_rows(data_dir: Path, rows: int = 3000) -> Path:
    """A seen.sqlite zotrec wrote, with enough rows to fill many pages."""
    from zotero_bridge.feedback.seen import SeenMemory

    data_dir.mkdir(parents=True, exist_ok=True)
    with SeenMemory(data_dir / "seen.sqlite") as memory:
        memory.remember("lib", [f"arxiv:{n:07d}" for n in range(rows)], date(2025, 1, 1), "list")
    return data_dir / "seen.sqlite"


def _damage_pages(path: Path) -> None:
    """Garbage over every page but the first (the header and the schema stay, so the file still opens)."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    assert len(data) > 4 * page
    data[page:] = bytes([0xA5]) * (len(data) - page)
    path.write_bytes(bytes(data))


def _one_error(result) -> str:
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 1 and len(lines) == 1, result.output
    return lines[0]


def test_a_seen_memory_with_damaged_pages_is_one_line(corpus, data_dir):
    seen = _seen_with_rows(data_dir)
    _damage_pages(seen)
    line = _one_error(_listing(corpus))
    assert f"{seen}: zotrec's memory of papers shown is damaged" in line, line
    assert "`zotrec history --reset-seen` starts it afresh" in line
    result = CliRunner().invoke(cli, ["history", "--reset-seen"])
    assert result.exit_code == 0 and f"Moved the damaged seen.sqlite to {seen}.damaged" in result.output, result.output
    assert _listing(corpus).exit_code == 0 and (data_dir / "seen.sqlite.damaged").is_file()
    again = CliRunner().invoke(cli, ["history", "--reset-seen"])
    assert "Forgot 3 papers shown before" in again.output, again.output


def test_a_history_with_damaged_pages_is_one_line(data_dir):
    from zotero_bridge.feedback.memory import Memory, ShownPaper

    data_dir.mkdir(parents=True)
    with Memory(data_dir / "history.sqlite") as memory:
        for run in range(40):
            memory.record_run("user:1", "Recommended", "COLL", run,
                              [ShownPaper(f"p{run}-{n}", "A title " * 10, n, 0.5, f"K{n}", "add") for n in range(50)],
                              (), ())
    _damage_pages(data_dir / "history.sqlite")
    result = CliRunner().invoke(cli, ["history", "--runs", "5"])
    assert "zotrec hit a bug" not in result.output, result.output
    line = _one_error(result)
    assert f"{data_dir / 'history.sqlite'}: zotrec's history is damaged" in line and "move it away" in line, line


@contextlib.contextmanager
def _locked(path: Path, seconds: float | None = None, kind: str = "EXCLUSIVE"):
    """Another process holding a lock on the SQLite file (EXCLUSIVE: as a sync committing; IMMEDIATE: as one
    writing, readers still welcome); it lets go after `seconds`, or when the block ends."""
    code = ("import sqlite3, sys, time\n"
            "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            f"db.execute('BEGIN {kind}')\nprint('held', flush=True)\n"
            "time.sleep(float(sys.argv[2])) if sys.argv[2] != '-' else sys.stdin.read()\n"
            "db.execute('COMMIT')\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(path), "-" if seconds is None else str(seconds)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_a_locked_seen_memory_is_said_as_a_lock_never_move_it_away(corpus, data_dir, monkeypatch):
    seen = _seen_with_rows(data_dir, 10)
    monkeypatch.setattr("zotero_bridge.feedback.memory.LOCK_WAIT_SECONDS", 0.5, raising=False)
    with _locked(seen):
        line = _one_error(_listing(corpus))
    assert f"{seen}: zotrec's memory of papers shown is in use by another zotrec run" in line, line
    assert "move it away" not in line and "damaged" not in line
    with sqlite3.connect(seen) as db:  # nothing thrown away
        assert db.execute("SELECT COUNT(*) FROM seen").fetchone()[0] == 10


def test_a_lock_held_for_a_moment_is_waited_out(corpus, data_dir):
    seen = _seen_with_rows(data_dir, 10)
    with _locked(seen, seconds=1.0):
        started = time.monotonic()
        result = _listing(corpus)
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started >= 0.5 and len(json.loads(result.stdout)) == 3


def test_a_locked_history_is_said_as_a_lock(data_dir, monkeypatch):
    from zotero_bridge.feedback.memory import Memory

    data_dir.mkdir(parents=True)
    Memory(data_dir / "history.sqlite").close()
    monkeypatch.setattr("zotero_bridge.feedback.memory.LOCK_WAIT_SECONDS", 0.5, raising=False)
    with _locked(data_dir / "history.sqlite"):
        line = _one_error(CliRunner().invoke(cli, ["history", "--runs", "5"]))
    assert "zotrec's history is in use by another zotrec run" in line and "move it away" not in line, line


@contextlib.contextmanager
def _read_only(folder: Path):
    """`folder` and its files made unwritable: by mode for a user, by the immutable flag for root (whom modes
    do not stop); skipped where neither holds."""
    paths = [folder, *folder.iterdir()]
    if os.geteuid() != 0:
        for path in paths:
            path.chmod(0o500 if path.is_dir() else 0o400)
        undo = [["chmod", "u+w", str(path)] for path in paths]
    elif shutil.which("chattr") and subprocess.run(["chattr", "+i", *map(str, paths)]).returncode == 0:
        undo = [["chattr", "-i", *map(str, paths)]]
    else:
        pytest.skip("cannot make a folder read-only here")
    try:
        with pytest.raises(OSError):
            (folder / "probe").write_text("x")
        yield
    finally:
        for command in undo:
            subprocess.run(command, check=True)


def test_a_read_only_data_folder_still_lists_and_hides_what_was_shown(corpus, data_dir):
    first = json.loads(_listing(corpus).stdout)  # shown today, remembered
    with sqlite3.connect(data_dir / "seen.sqlite") as db:  # … as if on an earlier day
        db.execute("UPDATE seen SET first_day = '2020-01-01'")
    with _read_only(data_dir):
        result = _listing(corpus)
    assert result.exit_code == 0, result.output
    again = json.loads(result.stdout)
    assert {row["id"] for row in again}.isdisjoint(row["id"] for row in first)


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_the_history_view_lets_no_control_character_of_a_title_reach_the_terminal(data_dir, fmt):
    from zotero_bridge.feedback.memory import Memory, Remembered, ShownPaper

    hostile = "Flows \x9b2J\x9d0;owned\x07 \x1b[31m \u202e \ufffe"
    data_dir.mkdir(parents=True)
    with Memory(data_dir / "history.sqlite") as memory:
        memory.record_run("user:1", "Recommended", "COLL", 1, [ShownPaper("p1", hostile, 1, 0.5, "K1", "add")],
                          [Remembered("p1", hostile, "K1", "COLL", "f")], (), {"prefer": [hostile]})
    result = CliRunner().invoke(cli, ["history", "--format", fmt])
    assert result.exit_code == 0, result.output
    assert "Flows" in result.output
    assert not {"\x9b", "\x9d", "\x07", "\x1b", "\u202e", "\ufffe"} & set(result.output), repr(result.output)


def test_a_read_only_data_folder_still_shows_the_history(data_dir):
    from zotero_bridge.feedback.memory import Memory, ShownPaper

    data_dir.mkdir(parents=True)
    with Memory(data_dir / "history.sqlite") as memory:
        memory.record_run("user:1", "Recommended", "COLL", 1, [ShownPaper("p1", "Normalizing flows", 1, 0.5, "K1",
                                                                          "add")], (), ())
    with _read_only(data_dir):
        result = CliRunner().invoke(cli, ["history", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert [paper["title"] for run in json.loads(result.stdout)["runs"] for paper in run["papers"]] == \
        ["Normalizing flows"]


def test_reading_a_history_that_is_not_there_makes_no_file(data_dir):
    data_dir.mkdir(parents=True)
    result = CliRunner().invoke(cli, ["history"])
    assert result.exit_code == 0 and "has not written to any library yet" in result.output, result.output
    assert not (data_dir / "history.sqlite").exists()


def test_a_write_to_a_memory_another_run_is_writing_is_said_as_a_lock(data_dir, monkeypatch):
    from zotero_bridge.errors import BridgeError
    from zotero_bridge.feedback.memory import Memory, ShownPaper
    from zotero_bridge.feedback.seen import SeenMemory

    seen = _seen_with_rows(data_dir, 10)
    Memory(data_dir / "history.sqlite").close()
    monkeypatch.setattr("zotero_bridge.feedback.memory.LOCK_WAIT_SECONDS", 0.5)
    with _locked(seen, kind="IMMEDIATE"), SeenMemory(seen) as memory:
        assert len(memory.first_days("lib")) == 10  # reading goes on beside a writer
        with pytest.raises(BridgeError, match="is in use by another zotrec run"):
            memory.remember("lib", ["arxiv:new"], date(2025, 1, 2), "list")
    with _locked(data_dir / "history.sqlite", kind="IMMEDIATE"), Memory(data_dir / "history.sqlite") as memory:
        with pytest.raises(BridgeError, match="zotrec's history is in use by another zotrec run"):
            memory.record_run("user:1", "R", "C", 1, [ShownPaper("p", "t", 1, 0.5, "K", "add")], (), ())
