"""The store's rules: private folders and files whatever the umask, links never followed, damaged entries
rebuilt with one notice, a folder that cannot be written costing only speed (one notice a run), keys
from a format version and the data."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import subprocess
from pathlib import Path

import numpy as np
import pytest

from recommender.store import Store, digest, files, private_dir, read_npz, write_bytes, write_npz


@contextlib.contextmanager
def read_only(folder: Path):
    """`folder` read-only for this process: chmod 0500, and for a user who writes anyway (root), the
    immutable attribute; skips the test when neither holds."""
    folder.chmod(0o500)
    immutable = False
    try:
        if os.access(folder, os.W_OK):
            try:
                immutable = subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
            except OSError:  # no chattr here
                immutable = False
            if not immutable or os.access(folder, os.W_OK):
                pytest.skip("cannot make a folder read-only for this user")
        yield folder
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o700)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def arrays(seed: int = 0) -> dict[str, np.ndarray]:
    return {"rows": np.random.default_rng(seed).standard_normal((4, 3)).astype(np.float32),
            "ids": np.arange(4)}


# ---- the writer and the reader -------------------------------------------------------------------------------
def test_written_files_read_back_exactly_and_are_private_under_umask_zero(tmp_path):
    old = os.umask(0)
    try:
        folder = private_dir(tmp_path / "a" / "b")
        write_npz(folder / "x.npz", arrays())
        write_bytes(folder / "y.bin", b"bytes")
    finally:
        os.umask(old)
    assert mode(tmp_path / "a") == mode(tmp_path / "a" / "b") == 0o700
    assert mode(folder / "x.npz") == mode(folder / "y.bin") == 0o600
    back = read_npz(folder / "x.npz")
    assert set(back) == {"rows", "ids"} and all(np.array_equal(back[k], v) for k, v in arrays().items())
    assert (folder / "y.bin").read_bytes() == b"bytes"
    assert sorted(path.name for path in folder.iterdir()) == ["x.npz", "y.bin"]  # no temporary left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    write_npz(tmp_path / "x.npz", arrays(1))

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez", full)
    with pytest.raises(OSError):
        write_npz(tmp_path / "x.npz", arrays(2))
    assert [path.name for path in tmp_path.iterdir()] == ["x.npz"]
    assert np.array_equal(read_npz(tmp_path / "x.npz")["rows"], arrays(1)["rows"])


def test_arrays_of_python_objects_are_never_written(tmp_path):
    with pytest.raises(TypeError):
        write_npz(tmp_path / "x.npz", {"o": np.array([{"a": 1}], dtype=object)})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 cut short", b"\x93NUMPY broken", None])
def test_empty_damaged_or_plain_npy_files_are_one_error(tmp_path, content):
    path = tmp_path / "x.npz"
    if content is None:
        np.save(path.with_suffix(".npy"), np.arange(3))
        path.with_suffix(".npy").rename(path)  # an .npy under an .npz name
    else:
        path.write_bytes(content)
    with pytest.raises(files.Damaged):
        read_npz(path)
    with pytest.raises(FileNotFoundError):
        read_npz(tmp_path / "missing.npz")


def test_a_pickle_inside_an_npz_is_refused(tmp_path):
    np.savez(tmp_path / "x.npz", o=np.array([{"a": 1}], dtype=object))
    with pytest.raises(files.Damaged):
        read_npz(tmp_path / "x.npz")


def test_a_link_at_a_file_is_not_read_and_is_replaced_not_written_through(tmp_path):
    outside = tmp_path / "outside.npz"
    write_npz(outside, arrays(1))
    outside.chmod(0o644)
    before = outside.read_bytes()
    folder = private_dir(tmp_path / "store")
    (folder / "v-k.npz").symlink_to(outside)
    with pytest.raises(files.Damaged, match="a link"):
        read_npz(folder / "v-k.npz")
    write_npz(folder / "v-k.npz", arrays(2))
    assert outside.read_bytes() == before and mode(outside) == 0o644
    assert not (folder / "v-k.npz").is_symlink() and mode(folder / "v-k.npz") == 0o600


def test_a_link_at_a_folder_is_replaced_and_its_target_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    outside = tmp_path / "outside"
    outside.mkdir()
    outside.chmod(0o755)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "prepared").symlink_to(outside)
    store = Store(tmp_path / "cache" / "prepared")
    assert store.save("v", "k", arrays())
    assert list(outside.iterdir()) == [] and mode(outside) == 0o755
    assert not (tmp_path / "cache" / "prepared").is_symlink() and mode(tmp_path / "cache" / "prepared") == 0o700


def test_the_cache_folder_itself_may_be_a_link(tmp_path, monkeypatch):
    """The user's own choice (another disk): followed, not replaced."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "cache").symlink_to(real)
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    private_dir(tmp_path / "cache" / "libraries")
    assert (tmp_path / "cache").is_symlink() and (real / "libraries").is_dir()


def test_a_store_folder_of_another_user_is_refused(tmp_path, monkeypatch):
    if os.getuid() != 0:
        pytest.skip("needs to give a folder away")
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    planted = tmp_path / "cache" / "prepared"
    planted.mkdir(parents=True)
    os.chown(planted, 65534, 65534)
    with pytest.raises(PermissionError):
        private_dir(planted)


def test_old_world_writable_folders_are_made_private(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "prepared").mkdir(parents=True)
    for folder in (tmp_path / "cache", tmp_path / "cache" / "prepared"):
        folder.chmod(0o777)
    Store(tmp_path / "cache" / "prepared").save("v", "k", arrays())
    assert mode(tmp_path / "cache") == mode(tmp_path / "cache" / "prepared") == 0o700


# ---- memo: damaged entries, read-only and full folders ---------------------------------------------------------
def test_memo_computes_once_then_reads_and_keeps_the_kind_of_value(tmp_path):
    store, calls = Store(tmp_path), []

    def compute():
        calls.append(1)
        return np.arange(5, dtype=np.float32)

    first, second = store.memo("v", "k1", compute), store.memo("v", "k1", compute)
    assert len(calls) == 1 and isinstance(second, np.ndarray) and np.array_equal(first, second)
    as_dict = store.memo("d", "k1", arrays)
    assert set(store.memo("d", "k1", lambda: pytest.fail("recomputed"))) == set(as_dict) == {"rows", "ids"}
    store.memo("v", "k2", compute)
    assert len(calls) == 2  # another key: computed


@pytest.mark.parametrize("damage", ["empty", "cut", "unreadable"])
def test_a_damaged_empty_or_unreadable_entry_is_rebuilt_with_one_notice(tmp_path, caplog, monkeypatch, damage):
    store = Store(tmp_path)
    store.memo("v", "k", lambda: np.arange(3.0))
    path = store.path("v", "k")
    if damage == "empty":
        path.write_bytes(b"")
    elif damage == "cut":
        path.write_bytes(path.read_bytes()[:40])
    else:
        path.chmod(0)
        if os.access(path, os.R_OK):  # a user who reads every file (root): the reader is refused all the same
            real_open = os.open

            def refuse(name, flags, *args):
                if Path(name) == path and not flags & os.O_CREAT:
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(name))
                return real_open(name, flags, *args)

            monkeypatch.setattr(os, "open", refuse)
    with caplog.at_level(logging.WARNING):
        assert np.array_equal(store.memo("v", "k", lambda: np.arange(3.0)), np.arange(3.0))
        monkeypatch.undo()
        assert np.array_equal(store.memo("v", "k", lambda: pytest.fail("not stored again")), np.arange(3.0))
    assert len(caplog.records) == 1 and "is damaged" in caplog.text and str(path) in caplog.text
    assert mode(path) == 0o600


def test_a_read_only_folder_is_read_and_said_once_without_damage_or_advice(tmp_path, caplog):
    store = Store(tmp_path / "s", keep=4)
    store.memo("v", "good", lambda: np.arange(3.0))
    with read_only(tmp_path / "s"), caplog.at_level(logging.WARNING):
        for index in range(5):
            assert np.array_equal(store.memo("v", "good", lambda: pytest.fail("a good entry recomputed")),
                                  np.arange(3.0))
            assert store.memo("v", f"new{index}", lambda: np.ones(2)).tolist() == [1.0, 1.0]
        assert sorted(path.name for path in (tmp_path / "s").iterdir()) == ["v-good.npz"]
    assert len(caplog.records) == 1 and str(tmp_path / "s") in caplog.text and "cannot be written" in caplog.text
    assert "damaged" not in caplog.text and "delete" not in caplog.text


def test_a_full_folder_stops_writing_after_one_try_and_one_notice(tmp_path, caplog, monkeypatch):
    tries = []

    def full(path, arrays, **kwargs):
        tries.append(path)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("recommender.store.memo.write_npz", full)
    stores = [Store(tmp_path / "cache"), Store(tmp_path / "cache")]
    with caplog.at_level(logging.WARNING):
        for index in range(6):
            assert stores[index % 2].memo("v", f"k{index}", lambda: np.zeros(2)).tolist() == [0.0, 0.0]
    assert len(tries) == 1  # no retry storm
    assert [record.message for record in caplog.records] == [
        f"cache folder {tmp_path / 'cache'} cannot be written (No space left on device): "
        "this run computes without storing what it computes"]


def test_one_notice_for_the_whole_cache_folder(tmp_path, caplog, monkeypatch):
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    with read_only(tmp_path / "cache"), caplog.at_level(logging.WARNING):
        for folder in ("prepared", "libraries", "prepared"):
            Store(tmp_path / "cache" / folder).memo("v", "k", lambda: np.zeros(1))
    assert len(caplog.records) == 1 and f"cache folder {tmp_path / 'cache'} cannot" in caplog.text


def test_pruning_keeps_the_most_recently_used_keys_with_all_their_names(tmp_path):
    store = Store(tmp_path)
    for index, key in enumerate(["a", "b", "c"]):
        store.save("corpus", key, arrays())
        store.save("lexical", key, arrays())
        for name in ("corpus", "lexical"):
            os.utime(store.path(name, key), (1000 + index, 1000 + index))
    store.keep = 2
    store.load("corpus", "a")  # used again: kept
    store.save("corpus", "d", arrays())
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "corpus-a.npz", "corpus-d.npz", "lexical-a.npz"]


def test_names_and_keys_cannot_reach_outside_the_folder(tmp_path):
    for name, key in [("../x", "k"), ("v", "../../k"), ("V", "k"), ("v", "")]:
        with pytest.raises(ValueError):
            Store(tmp_path).path(name, key)


def test_the_prepared_corpus_key_comes_from_the_data_and_the_format_version(tmp_path, monkeypatch):
    from recommender.scoring import prepared

    (tmp_path / "a").mkdir()
    for path, text in [(tmp_path / "one.jsonl", "x"), (tmp_path / "a" / "one.jsonl", "x"), (tmp_path / "two.jsonl", "y")]:
        path.write_text(text)
    key = prepared.prepared_key([tmp_path / "one.jsonl"], "dense", "m", "1.0")
    assert prepared.prepared_key([tmp_path / "a" / "one.jsonl"], "dense", "m", "1.0") == key  # not the path
    assert prepared.prepared_key([tmp_path / "two.jsonl"], "dense", "m", "1.0") != key
    assert prepared.prepared_key([tmp_path / "one.jsonl"], "dense", "m", "1.1") != key
    monkeypatch.setattr(prepared, "FORMAT_VERSION", prepared.FORMAT_VERSION + 1)
    assert prepared.prepared_key([tmp_path / "one.jsonl"], "dense", "m", "1.0") != key


# ---- digest -----------------------------------------------------------------------------------------------
def test_digest_covers_dtype_shape_bytes_and_the_kind_of_each_part():
    base = np.arange(6, dtype=np.float32)
    keys = {digest(1, base), digest(1, base.reshape(2, 3)), digest(1, base.astype(np.float64)),
            digest(1, base + 1), digest(2, base), digest("1", base), digest(1.0, base), digest(True, base),
            digest(1, base.tobytes()), digest([1, base]), digest(1, "a", "b"), digest(1, "ab"), digest(1, None)}
    assert len(keys) == 13
    assert digest(1, base, "x", 0.5) == digest(1, base.copy(), "x", 0.5)
    assert digest(1, np.asfortranarray(base.reshape(2, 3))) == digest(1, base.reshape(2, 3))  # same values
    assert len(digest()) == 32 and set(digest(1)) <= set("0123456789abcdef")
    with pytest.raises(TypeError):
        digest(object())
    with pytest.raises(TypeError):
        digest({"a": 1})


# ---- end to end: the faults a tester found -------------------------------------------------------------------
def _reading_list(tmp_path, monkeypatch):
    """A dense reading list of the 31 seed papers (fast on two cores) with every cache file it keeps."""
    pytest.importorskip("onnxruntime")
    from click.testing import CliRunner

    from tests.conftest import SEEDS
    from zotero_bridge.cli.main import cli

    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    library = tmp_path / "library.jsonl"
    seeds = [part for seed in SEEDS for part in ("--corpus", str(seed))]
    args = ["reading-list", "--library", str(library), "--features", "dense", "-n", "5", "--format", "json", *seeds]

    def run(*more: str):
        titles = ["Normalizing flows with heavy tails", "Time series foundation models", *more]
        library.write_text("".join(f'{{"key": "K{i}", "title": "{title}"}}\n' for i, title in enumerate(titles)))
        return CliRunner().invoke(cli, args)

    return run


def test_empty_cache_files_are_rebuilt_not_aborted(tmp_path, monkeypatch):
    """Each cache file emptied (the library state, the prepared corpus, its extras): the next run gives the
    same list, saying each once; the one after reads the rebuilt files quietly."""
    run = _reading_list(tmp_path, monkeypatch)
    first = run()
    assert first.exit_code == 0, first.output
    emptied = sorted(path for path in (tmp_path / "cache").rglob("*") if path.suffix in (".npz", ".npy"))
    assert len(emptied) >= 4 and any(path.name.startswith("lexical") for path in emptied)
    for path in emptied:
        path.write_bytes(b"")
    second = run()
    assert second.exit_code == 0 and "Aborted" not in second.output, second.output
    assert second.stdout == first.stdout
    assert sorted(line.split(" is damaged")[0].rsplit(" ", 1)[1] for line in second.stderr.splitlines()
                  if "is damaged" in line) == [str(path) for path in emptied]  # each said once
    assert all(path.stat().st_size > 0 for path in emptied)  # rebuilt
    third = run()
    assert third.stdout == first.stdout and "damaged" not in third.stderr


def test_a_read_only_cache_folder_gives_the_same_list_with_one_notice(tmp_path, monkeypatch):
    """Good entries are used, not called damaged; what is new is computed, with one notice for the run."""
    run = _reading_list(tmp_path, monkeypatch)
    assert run().exit_code == 0
    folders = [tmp_path / "cache", *[path for path in (tmp_path / "cache").iterdir() if path.is_dir()]]
    with contextlib.ExitStack() as stack:
        for folder in folders:
            stack.enter_context(read_only(folder))
        unchanged = run()
        grown = run("Diffusion models for protein design")  # new rows, new state: nothing can be stored
    def warnings(stderr: str) -> int:  # besides the one saying this 2-item library is tiny (scoring/match.py)
        return stderr.count("Warning") - stderr.count("Warning: Weak match")

    assert unchanged.exit_code == 0 and warnings(unchanged.stderr) == 0, unchanged.output
    assert grown.exit_code == 0, grown.output
    assert grown.stdout == run("Diffusion models for protein design").stdout  # as with a writable cache
    assert warnings(grown.stderr) == 1, grown.stderr
    assert f"cache folder {tmp_path / 'cache'} cannot be written" in grown.stderr
    assert "damaged" not in grown.stderr and "delete" not in grown.stderr


def test_cache_and_data_folders_are_private_under_umask_zero(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    run = _reading_list(tmp_path, monkeypatch)
    old = os.umask(0)
    try:
        assert run().exit_code == 0
    finally:
        os.umask(old)
    made = [tmp_path / "cache", *(tmp_path / "cache").rglob("*")]
    assert len(made) > 4
    assert {path.name: mode(path) for path in made if path.is_dir()} == {
        path.name: 0o700 for path in made if path.is_dir()}
    assert {path.name: mode(path) for path in made if path.is_file()} == {
        path.name: 0o600 for path in made if path.is_file()}


def test_the_history_and_the_web_cache_follow_the_folders_and_are_private(tmp_path, monkeypatch):
    from zotero_bridge.feedback.memory import Memory
    from zotero_bridge.zotero_api.cache import WebCache, cache_path

    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    old = os.umask(0)
    try:
        Memory().close()
        path = cache_path("https://api.zotero.org", "user", "1")
        WebCache(path).close()
    finally:
        os.umask(old)
    assert (tmp_path / "data" / "history.sqlite").is_file() and path.parent == tmp_path / "cache" / "zotero-web"
    assert mode(tmp_path / "data") == mode(tmp_path / "cache") == mode(path.parent) == 0o700
    assert mode(tmp_path / "data" / "history.sqlite") == mode(path) == 0o600



def test_a_parser_says_damage_by_type_and_any_other_exception_from_it_is_a_bug(tmp_path):
    from recommender.store import Store
    from recommender.store.files import Damaged

    store = Store(tmp_path / "store")
    store.save("entry", "k1", {"a": np.arange(3)})

    def damaged(arrays):
        raise Damaged("not what was stored")

    def buggy(arrays):
        return arrays["a"].no_such_attribute

    assert store.load("entry", "k1", parse=damaged) is None  # a miss, rebuilt
    assert store.load("entry", "k1", parse=lambda arrays: arrays["missing"]) is None  # a missing array: damage
    with pytest.raises(AttributeError):
        store.load("entry", "k1", parse=buggy)
