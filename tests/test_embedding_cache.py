"""The embedding cache: round trips, its location, concurrent writers, killed writers, broken files."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from recommender.features.cache import CACHE_FILE, EmbeddingCache, text_hash
from recommender.store import CACHE_DIR_ENV, cache_dir
from tests.test_store import read_only

REPO = Path(__file__).resolve().parents[1]
DIM = 8


def vector(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)


def test_round_trip_keeps_exact_float32_values(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.sqlite3")
    keys = [text_hash(f"paper {i}") for i in range(3)]
    cache.store("m", {key: vector(i) for i, key in enumerate(keys)})
    found = EmbeddingCache(tmp_path / "e.sqlite3").lookup("m", keys + [text_hash("unseen")], DIM)
    assert set(found) == set(keys)
    for i, key in enumerate(keys):
        np.testing.assert_array_equal(found[key], vector(i))


def test_models_do_not_share_vectors_and_wrong_sizes_count_as_missing(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.sqlite3")
    key = text_hash("same text")
    cache.store("model-a", {key: vector(1)})
    assert cache.lookup("model-b", [key], DIM) == {}
    assert cache.lookup("model-a", [key], DIM * 2) == {}
    assert cache.count("model-a") == 1 and cache.count() == 1


def test_a_row_key_collision_is_not_taken_for_a_hit(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.sqlite3")
    mine, other = text_hash("mine"), text_hash("other")
    impostor = mine[:8] + other[8:]  # same 64-bit row key, different text
    cache.store("m", {impostor: vector(1)})
    assert cache.lookup("m", [mine], DIM) == {}
    assert set(cache.lookup("m", [impostor], DIM)) == {impostor}


def test_text_hash_changes_with_any_edit():
    assert text_hash("Graph neural networks") != text_hash("Graph neural networks.")
    assert len(text_hash("x")) == 16


def test_lookup_of_many_keys_crosses_the_parameter_chunks(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.sqlite3")
    keys = [text_hash(str(i)) for i in range(1300)]
    cache.store("m", {key: vector(i) for i, key in enumerate(keys)})
    assert len(cache.lookup("m", keys, DIM)) == 1300


def test_cache_dir_env_override_and_user_cache_default(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    assert EmbeddingCache().path == tmp_path / "mine" / CACHE_FILE
    monkeypatch.delenv(CACHE_DIR_ENV)
    assert "zotrec" in str(cache_dir())  # platformdirs' user cache dir (XDG_CACHE_HOME in tests)


def _python(code: str, cache_path: Path, *args: str) -> subprocess.Popen:
    script = textwrap.dedent(code)
    return subprocess.Popen([sys.executable, "-c", script, str(cache_path), *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


WRITER = """
import sys
import numpy as np
from recommender.features.cache import EmbeddingCache, text_hash
cache = EmbeddingCache(sys.argv[1])
start = int(sys.argv[2])
for batch in range(20):
    rows = {text_hash(f"text {i}"): np.full(8, i, dtype=np.float32)
            for i in range(start + batch * 50, start + batch * 50 + 100)}
    cache.store("m", rows)
print("done")
"""


def test_two_processes_writing_at_once_both_land_and_agree(tmp_path):
    path = tmp_path / "shared.sqlite3"
    first, second = _python(WRITER, path, "0"), _python(WRITER, path, "500")
    for process in (first, second):
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert out.strip() == "done"
        assert "embedding cache" not in err  # neither run gave the cache up
    keys = [text_hash(f"text {i}") for i in range(0, 1550)]
    found = EmbeddingCache(path).lookup("m", keys, 8)
    assert len(found) == 1550  # overlapping ranges: nothing lost, nothing duplicated
    assert all(float(found[text_hash(f"text {i}")][0]) == i for i in range(1550))


KILLED = """
import sys, time
import numpy as np
from recommender.features.cache import EmbeddingCache, text_hash
cache = EmbeddingCache(sys.argv[1])
cache.store("m", {text_hash("committed"): np.ones(8, dtype=np.float32)})
connection = cache._connect()
connection.execute("BEGIN IMMEDIATE")
table = cache._table(connection, "m", create=True)
rows = [(i, text_hash(f"lost {i}")[8:], np.zeros(8, dtype=np.float32).tobytes()) for i in range(5000)]
rows.append((int.from_bytes(text_hash("lost 1")[:8], "little", signed=True), text_hash("lost 1")[8:],
             np.zeros(8, dtype=np.float32).tobytes()))
connection.executemany(f'INSERT INTO "{table}" VALUES (?, ?, ?)', rows)
print("writing", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_writer_killed_mid_transaction_leaves_a_usable_cache(tmp_path):
    path = tmp_path / "killed.sqlite3"
    process = _python(KILLED, path)
    assert process.stdout.readline().strip() == "writing"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    cache = EmbeddingCache(path)
    assert set(cache.lookup("m", [text_hash("committed"), text_hash("lost 1")], 8)) == {text_hash("committed")}
    cache.store("m", {text_hash("after"): np.ones(8, dtype=np.float32)})
    assert cache.count("m") == 2


def test_a_broken_cache_file_is_rebuilt_with_one_notice(tmp_path, caplog):
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    cache = EmbeddingCache(path)
    with caplog.at_level(logging.WARNING):
        assert cache.lookup("m", [text_hash("a")], DIM) == {}
        cache.store("m", {text_hash("a"): vector(0)})  # no exception
        assert set(cache.lookup("m", [text_hash("a")], DIM)) == {text_hash("a")}  # rebuilt, in use
    assert [record.message for record in caplog.records if "embedding cache" in record.message] == [
        f"embedding cache {path} is damaged (file is not a database): it is rebuilt"]
    assert "delete" not in caplog.text


def test_an_unreadable_cache_file_is_rebuilt(tmp_path, caplog):
    path = tmp_path / "e.sqlite3"
    EmbeddingCache(path).store("m", {text_hash("a"): vector(0)})
    path.chmod(0)
    if os.access(path, os.R_OK):
        pytest.skip("runs as a user who reads every file")
    with caplog.at_level(logging.WARNING):
        cache = EmbeddingCache(path)
        cache.store("m", {text_hash("b"): vector(1)})
        assert set(cache.lookup("m", [text_hash("a"), text_hash("b")], DIM)) == {text_hash("b")}
    assert caplog.text.count("is damaged") == 1


def test_an_unwritable_cache_location_is_a_warning(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = EmbeddingCache(blocker / "sub" / "e.sqlite3")
    with caplog.at_level(logging.WARNING):
        cache.store("m", {text_hash("a"): vector(0)})
        assert cache.lookup("m", [text_hash("a")], DIM) == {}
    assert "cannot be written" in caplog.text and "damaged" not in caplog.text


def test_fill_writes_cached_rows_in_place_and_says_which(tmp_path):
    """fill() is lookup() without the second copy: duplicates, misses, a wrong-size row, another model."""
    import numpy as np

    from recommender.features.cache import EmbeddingCache, text_hash

    cache = EmbeddingCache(tmp_path / "c.sqlite3")
    vectors = {text_hash(t): np.arange(4, dtype=np.float32) + i for i, t in enumerate(["a", "b", "c"])}
    cache.store("m", vectors)
    cache.store("m", {text_hash("short"): np.zeros(3, dtype=np.float32)})
    keys = [text_hash(t) for t in ["b", "new", "a", "b", "short"]]
    out = np.full((5, 4), -1, dtype=np.float32)
    found = cache.fill("m", keys, out)
    assert found.tolist() == [True, False, True, True, False]
    assert out[[0, 2, 3]].tolist() == [[1, 2, 3, 4], [0, 1, 2, 3], [1, 2, 3, 4]]
    assert out[1].tolist() == [-1] * 4
    assert not cache.fill("other", keys, out).any()


def test_a_new_cache_file_is_private(tmp_path):
    import stat

    import numpy as np

    from recommender.features.cache import EmbeddingCache, text_hash

    cache = EmbeddingCache(tmp_path / "sub" / "c.sqlite3")
    cache.store("m", {text_hash("a"): np.zeros(4, dtype=np.float32)})
    files = list((tmp_path / "sub").iterdir())
    assert files and all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in files)


def test_a_read_only_cache_file_is_read_not_rebuilt(tmp_path, caplog, monkeypatch):
    path = tmp_path / "e.sqlite3"
    writer = EmbeddingCache(path)
    writer.store("m", {text_hash("a"): vector(0)})
    writer.close()
    path.chmod(0o400)
    real_open = os.open

    def refuse(name, flags, *args):  # for a user who writes every file (root), as for the others
        if Path(name) == path and flags & os.O_RDWR:
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", refuse)
    with caplog.at_level(logging.WARNING):
        cache = EmbeddingCache(path)
        assert set(cache.lookup("m", [text_hash("a"), text_hash("b")], DIM)) == {text_hash("a")}
        cache.store("m", {text_hash("b"): vector(1)})
    assert len(caplog.records) == 1 and "cannot be written" in caplog.text and "damaged" not in caplog.text


@pytest.mark.parametrize("closed", [True, False])  # False: the last writer left its -wal and -shm
def test_a_read_only_cache_folder_is_read_and_said_once(tmp_path, caplog, closed):
    """Good vectors in a folder the run cannot write: used as they are, one notice naming the folder,
    never "damaged" nor advice to delete."""
    folder = tmp_path / "cache"
    writer = EmbeddingCache(folder / CACHE_FILE)
    writer.store("m", {text_hash("a"): vector(0)})
    if closed:
        writer.close()
    assert (folder / (CACHE_FILE + "-wal")).exists() != closed
    with read_only(folder), caplog.at_level(logging.WARNING):
        for _ in range(3):
            cache = EmbeddingCache(folder / CACHE_FILE)
            found = cache.lookup("m", [text_hash("a"), text_hash("b")], DIM)
            cache.store("m", {text_hash("b"): vector(1)})
            assert set(found) == {text_hash("a")}
            np.testing.assert_array_equal(found[text_hash("a")], vector(0))
    assert len(caplog.records) == 1 and str(folder) in caplog.text and "cannot be written" in caplog.text
    assert "damaged" not in caplog.text and "delete" not in caplog.text


def test_a_full_disk_stops_storing_with_one_notice(tmp_path, caplog, monkeypatch):
    cache = EmbeddingCache(tmp_path / "c" / CACHE_FILE)
    cache.store("m", {text_hash("a"): vector(0)})
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL
    calls = []

    def table(*args, **kwargs):
        calls.append(1)
        raise full

    monkeypatch.setattr(cache, "_table", table)
    with caplog.at_level(logging.WARNING):
        for index in range(5):
            cache.store("m", {text_hash(str(index)): vector(index)})
    assert len(calls) == 1  # no retry storm
    assert len(caplog.records) == 1 and "cannot be written (database or disk is full)" in caplog.text
    monkeypatch.undo()
    assert set(cache.lookup("m", [text_hash("a")], DIM)) == {text_hash("a")}  # still read


def test_private_under_umask_zero_and_links_are_not_followed(tmp_path):
    """Folders 0700 and files 0600 whatever the umask; a link where the cache file should be is
    replaced, the file it pointed to left untouched (not written, not chmod-ed)."""
    import stat

    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    outside.chmod(0o644)
    root = tmp_path / "new" / "cache"
    root.mkdir(parents=True)
    root.chmod(0o777)
    (root / CACHE_FILE).symlink_to(outside)
    old = os.umask(0)
    try:
        cache = EmbeddingCache(root / "deeper" / CACHE_FILE)
        cache.store("m", {text_hash("a"): vector(0)})
        cache.close()
        linked = EmbeddingCache(root / CACHE_FILE)
        linked.store("m", {text_hash("a"): vector(0)})
        linked.close()
    finally:
        os.umask(old)
    assert outside.read_text() == "mine" and stat.S_IMODE(outside.stat().st_mode) == 0o644
    assert not (root / CACHE_FILE).is_symlink()
    assert stat.S_IMODE((root / "deeper").stat().st_mode) == 0o700
    assert stat.S_IMODE(root.stat().st_mode) == 0o700  # group and other write taken away
    files = [*root.glob("*.sqlite3*"), *(root / "deeper").iterdir()]
    assert files and all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in files)
