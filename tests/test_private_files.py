"""Safe beside other local users (issue 32, "Other local users"): every folder zotrec makes is 0700 and every
file it writes a fresh 0600 file whatever the umask; a config, key or cache file of another user, or one others
may write, is refused in one line; nothing is written, truncated or chmod-ed through a planted link. The tests
run as root, so "another user" is a real chown to an unused uid."""

from __future__ import annotations

import os
import stat

import pytest

from recommender.errors import RecommenderError
from recommender.formats.output import OutputLock, write_text
from zotero_bridge.feedback.memory import Memory
from zotero_bridge.local_api.keys import KeyStore
from zotero_bridge.zotero_api.cache import WebCache
from zotero_bridge.zotero_api.credentials import config_path, resolve_credentials, save_config

OTHER_UID = 54321  # no one's: a file chown-ed to it belongs to "another user"
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def open_umask():
    """umask 000, the worst case: anything not made private on purpose is world-writable."""
    old = os.umask(0)
    yield
    os.umask(old)


def test_save_config_makes_a_private_folder_and_file_under_umask_000(open_umask):
    path = save_config({"library_id": "123", "api_key": "secret"})
    assert mode(path.parent) == 0o700 and mode(path) == 0o600
    assert resolve_credentials().library_id == "123"


def test_save_config_never_writes_through_a_link_at_a_temporary_name(tmp_path):
    path = config_path()
    path.parent.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    for name in (f".{path.name}.tmp{os.getpid()}", f".{path.name}.tmp"):  # names today's writers used
        os.symlink(victim, path.with_name(name))
    save_config({"library_id": "123", "api_key": "secret"})
    assert victim.read_text() == "the user's own file\n"


@needs_root
def test_a_config_of_another_user_is_refused_in_one_line():
    path = save_config({"library_id": "123", "api_key": "secret", "endpoint": "http://127.0.0.1:9/evil"})
    os.chown(path, OTHER_UID, OTHER_UID)
    with pytest.raises(RecommenderError) as caught:
        resolve_credentials(api_key="from-the-option")
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "another user" in message and "\n" not in message


def test_a_config_others_may_write_is_refused():
    path = save_config({"library_id": "123"})
    os.chmod(path, 0o666)
    with pytest.raises(RecommenderError, match="others may write"):
        resolve_credentials()


@needs_root
def test_a_config_folder_of_another_user_is_refused():
    path = config_path()
    path.parent.mkdir(parents=True)
    os.chown(path.parent, OTHER_UID, OTHER_UID)
    with pytest.raises(RecommenderError, match="another user"):
        save_config({"library_id": "123"})


@needs_root
def test_a_key_file_of_another_user_is_refused(tmp_path):
    store = KeyStore(tmp_path / "keys" / "local-api-keys.json")
    store._write({"server-1": "key-1"})
    assert mode(store.path) == 0o600 and mode(store.path.parent) == 0o700
    os.chown(store.path, OTHER_UID, OTHER_UID)
    with pytest.raises(RecommenderError, match="another user"):
        store._read()


def test_the_history_replaced_by_a_link_is_refused_and_its_target_not_chmod_ed(tmp_path):
    data = tmp_path / "data"
    Memory(data / "history.sqlite").close()
    target = tmp_path / "elsewhere.sqlite"
    target.write_bytes(b"")
    os.chmod(target, 0o644)
    (data / "history.sqlite").unlink()
    os.symlink(target, data / "history.sqlite")
    with pytest.raises(RecommenderError, match="is a link"):
        Memory(data / "history.sqlite")
    assert mode(target) == 0o644 and (data / "history.sqlite").is_symlink()


def test_the_web_cache_replaced_by_a_link_is_replaced_and_its_target_untouched(tmp_path):
    folder = tmp_path / "cache"
    WebCache(folder / "user-1.sqlite").close()
    target = tmp_path / "elsewhere.txt"
    target.write_text("not a cache\n")
    os.chmod(target, 0o644)
    (folder / "user-1.sqlite").unlink()
    os.symlink(target, folder / "user-1.sqlite")
    WebCache(folder / "user-1.sqlite").close()
    assert mode(target) == 0o644 and target.read_text() == "not a cache\n"
    assert not (folder / "user-1.sqlite").is_symlink() and mode(folder / "user-1.sqlite") == 0o600


@needs_root
def test_a_web_cache_of_another_user_is_refused(tmp_path):
    path = tmp_path / "cache" / "user-1.sqlite"
    WebCache(path).close()
    os.chown(path, OTHER_UID, OTHER_UID)
    with pytest.raises(RecommenderError, match="another user"):
        WebCache(path)


def test_a_lock_planted_as_a_link_is_refused_and_its_target_untouched(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    os.symlink(victim, shared / ".scores.csv.lock")
    with pytest.raises(RecommenderError, match="is a link"):
        OutputLock(shared / "scores.csv").acquire()
    assert victim.read_text() == "precious\n"


def test_a_lock_planted_as_a_hard_link_is_refused_and_never_truncated(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious and long enough to be cut by a truncate\n")
    os.link(victim, tmp_path / ".scores.csv.lock")
    with pytest.raises(RecommenderError, match="hard link"):
        OutputLock(tmp_path / "scores.csv").acquire()
    assert victim.read_text() == "precious and long enough to be cut by a truncate\n"


def test_the_lock_still_names_the_first_writer(tmp_path):
    first = OutputLock(tmp_path / "scores.csv").acquire()
    try:
        with pytest.raises(RecommenderError, match=f"pid {os.getpid()}"):
            OutputLock(tmp_path / "scores.csv").acquire()
    finally:
        first.release()


def test_an_output_file_gets_its_mode_through_the_descriptor(tmp_path, open_umask):
    out = tmp_path / "list.md"
    write_text(out, "one\n")
    assert mode(out) == 0o666  # the umask's default for a user's own output, as before
    os.chmod(out, 0o640)
    write_text(out, "two\n")
    assert mode(out) == 0o640 and out.read_text() == "two\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["list.md"]  # no temporary file left


def test_folders_zotrec_makes_for_an_output_are_0700_and_existing_ones_left_alone(tmp_path, open_umask):
    from recommender.batch.output import ScoreWriter

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    output = ScoreWriter(shared / "runs" / "today" / "scores.csv", "csv")
    output.close()
    assert mode(shared / "runs") == 0o700 and mode(shared / "runs" / "today") == 0o700
    assert mode(shared) == 0o777
