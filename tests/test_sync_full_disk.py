"""A full disk during sync: one line naming the file and what was kept; the history never called damaged;
nothing left behind. On a real full file system (a tiny tmpfs, where this process may mount one) and
with SQLite's own 'database or disk is full' (a page limit) everywhere else."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from zotero_bridge.cli.main import cli
from zotero_bridge.errors import BridgeError
from zotero_bridge.feedback.memory import Memory
from zotero_bridge.zotero_api.cache import WebCache

from .conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_sync import corpus_file, ours  # noqa: F401  (a fixture)


def sync_args(server, corpus, top_n=5):
    return ["sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", server.url, "--corpus", str(corpus),
            "--features", "tfidf", "-n", str(top_n)]


def run_cli(args, data: Path, cache: Path):
    env = {"ZOTERO_API_KEY": ZOTERO_WRITE_KEY, "ZOTREC_DATA_DIR": str(data), "ZOTREC_CACHE_DIR": str(cache)}
    return CliRunner().invoke(cli, args, env=env)


def one_line_without_traceback(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "damaged" not in result.output
    lines = [line for line in result.output.splitlines() if "no space left" in line]
    assert len(lines) == 1, result.output
    return lines[0]


def test_full_cache_folder_is_one_line(zotero_server, corpus_file, small_disk, tmp_path):
    disk, fill = small_disk
    fill()
    line = one_line_without_traceback(run_cli(sync_args(zotero_server, corpus_file), tmp_path / "data", disk))
    assert str(disk) in line and "cache" in line


def test_full_data_folder_on_the_first_run_leaves_nothing(zotero_server, corpus_file, small_disk, tmp_path):
    disk, fill = small_disk
    fill()
    line = one_line_without_traceback(run_cli(sync_args(zotero_server, corpus_file), disk, tmp_path / "cache"))
    assert str(disk / "history.sqlite") in line and "unharmed" in line
    assert sorted(p.name for p in disk.iterdir()) == ["ballast"]  # no empty history, no journal


def test_full_data_folder_after_the_writes_keeps_the_history(zotero_server, corpus_file, small_disk, tmp_path):
    disk, fill = small_disk
    assert run_cli(sync_args(zotero_server, corpus_file), disk, tmp_path / "cache").exit_code == 0
    with Memory(disk / "history.sqlite") as memory:
        runs = memory.runs()
    fill()
    line = one_line_without_traceback(run_cli(sync_args(zotero_server, corpus_file, top_n=12), disk,
                                              tmp_path / "cache"))
    assert str(disk / "history.sqlite") in line and "before this run" in line
    (disk / "ballast").unlink()
    assert sorted(p.name for p in disk.iterdir()) == ["history.sqlite"]  # no journal left behind
    with Memory(disk / "history.sqlite") as memory:  # opens: not damaged, and as it was before
        assert memory.runs() == runs
    assert run_cli(sync_args(zotero_server, corpus_file, top_n=12), disk, tmp_path / "cache").exit_code == 0


@pytest.fixture
def sqlite_full(monkeypatch):
    """Every new SQLite connection may not grow its file: SQLite then answers 'database or disk is full'."""
    connect = sqlite3.connect

    def limited(*args, **kwargs):
        db = connect(*args, **kwargs)
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        return db

    monkeypatch.setattr(sqlite3, "connect", limited)


def test_a_new_history_on_a_full_disk_is_not_called_damaged(tmp_path, sqlite_full):
    with pytest.raises(BridgeError) as error:
        Memory(tmp_path / "history.sqlite")
    assert "no space left" in str(error.value) and "damaged" not in str(error.value)
    assert not (tmp_path / "history.sqlite").exists()


def test_a_full_cache_is_kept_not_rebuilt(tmp_path, monkeypatch):
    path = tmp_path / "cache.sqlite"
    cache = WebCache(path)
    cache.replace_all([{"key": "A", "version": 3}], [], 3)
    cache.close()
    size = path.stat().st_size
    connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: _no_growth(connect(*a, **k)))
    cache = WebCache(path)
    with pytest.raises(BridgeError) as error:
        cache.replace_all([{"key": str(n), "version": 4, "title": "x" * 5000} for n in range(50)], [], 4)
    assert str(path) in str(error.value) and "version 3" in str(error.value)
    cache.close()
    monkeypatch.setattr(sqlite3, "connect", connect)
    assert path.stat().st_size == size and WebCache(path).items() == {"A": {"key": "A", "version": 3}}


def _no_growth(db):
    db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
    return db
