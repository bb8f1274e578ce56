"""Shared fixtures: paths to ../shared (read at test time, never copied), the recorded Zotero API bodies kept in
tests/data, and small libraries. A test that needs ../shared skips with a reason naming it; the run ends with one
line counting those skips (`pytest_terminal_summary`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SEEDS = sorted((REPO / "recommender" / "data" / "icml2025_seeds").glob("*.txt"))
PYZOTERO_RESPONSES = REPO / "tests" / "data" / "pyzotero-api-responses"  # real recorded bodies (Blue Oak licence)
NEEDS_SHARED = "../shared"  # every skip for lack of ../shared names it in its reason; the closing line counts them


@pytest.fixture
def shared() -> Path:
    """The read-only ../shared folder (data, fixtures); tests that need it skip without it."""
    if not SHARED.is_dir():
        pytest.skip("needs ../shared (not beside this checkout)")
    return SHARED


def pytest_terminal_summary(terminalreporter):
    """One line: how many tests skipped for lack of ../shared, and how to run them."""
    count = sum(NEEDS_SHARED in str(report.longrepr) for report in terminalreporter.stats.get("skipped", []))
    if count:
        terminalreporter.write_line(
            f"{count} tests skipped: they need ../shared (CiteULike, the ICML 2025 data, the Zotero schema, PMLR "
            f"fixtures; not redistributable here), which CI puts beside the checkout; docs/testing.md says how.")


@pytest.fixture(autouse=True)
def _restore_root_logger():
    """The CLI configures logging (its stderr handler on the root logger, levels) and installs a progress
    reporter; undo that after each test."""
    import logging

    from recommender import progress
    from zotero_bridge.cli.console import DASK_LOGGERS, OUR_LOGGERS, QUIET_LIBRARIES

    names = (*OUR_LOGGERS, *QUIET_LIBRARIES, *DASK_LOGGERS)
    root = logging.getLogger()
    level, handlers = root.level, root.handlers[:]
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    progress.use(None)
    root.setLevel(level)
    root.handlers[:] = handlers
    for name, old in levels.items():
        logging.getLogger(name).setLevel(old)


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Keep every test's cache/config/data writes out of the real user folders."""
    base = tmp_path_factory.mktemp("userdirs")
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(base / name.lower()))


# ---- a local fake of the Zotero Web API (tests/zotero_server.py) ---------------------------------------------
ZOTERO_WRITE_KEY = "zWRITEkey4Tests0000000AA"
ZOTERO_READ_KEY = "zREADONLYkey4Tests0000BB"
ZOTERO_USER_ID = 475425
ZOTERO_GROUP_ID = 169947


@pytest.fixture
def zotero_server(monkeypatch):
    """A started fake Zotero Web API: user library 475425 seeded with the recorded pyzotero responses
    (items, collections, an attachment), a standalone note and a trashed item; group 169947 is empty.
    Keys: ZOTERO_WRITE_KEY (read+write, user and group) and ZOTERO_READ_KEY (read only)."""
    import json

    from tests.zotero_server import FakeZotero, KeyAccess

    fixtures = PYZOTERO_RESPONSES
    for name in ("ZOTERO_LIBRARY_ID", "ZOTERO_LIBRARY_TYPE", "ZOTERO_API_KEY", "ZOTERO_API_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    server = FakeZotero({ZOTERO_WRITE_KEY: KeyAccess(ZOTERO_USER_ID, (ZOTERO_GROUP_ID,), write=True),
                         ZOTERO_READ_KEY: KeyAccess(ZOTERO_USER_ID, (ZOTERO_GROUP_ID,), write=False)})
    library = server.library("user", ZOTERO_USER_ID)
    for collection in json.loads((fixtures / "collections_doc.json").read_text(encoding="utf-8")):
        library.collections[collection["key"]] = dict(collection["data"])
    for item in json.loads((fixtures / "items_doc.json").read_text(encoding="utf-8")):
        library.items[item["key"]] = dict(item["data"])
    attachment = json.loads((fixtures / "attachments_doc.json").read_text(encoding="utf-8"))["data"]
    library.items[attachment["key"]] = dict(attachment)
    library.version = max(o["version"] for o in [*library.items.values(), *library.collections.values()])
    server.add_item(library, itemType="note", note="<p>a standalone note</p>")
    server.add_item(library, title="A paper the user threw away", deleted=1)
    server.library("group", ZOTERO_GROUP_ID)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def arxiv():
    """The arXiv double (tests/fake_arxiv.py) on 127.0.0.1 for one test; its `url` is the API to ask."""
    from tests.fake_arxiv import FakeArxiv

    fake = FakeArxiv()
    fake.url = fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB file system (a tmpfs) and a way to fill it; skipped where mounting is not allowed."""
    root = tmp_path / "disk"
    root.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(root)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")

    def fill() -> None:
        with open(root / "ballast", "wb", buffering=0) as ballast:
            try:
                while True:
                    ballast.write(b"\0" * 4096)
            except OSError:
                pass

    yield root, fill
    subprocess.run(["umount", "-l", str(root)], check=False)
