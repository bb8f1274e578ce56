"""Shared fixtures: paths to ../shared (read at test time, never copied) and small libraries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SEEDS = sorted((REPO / "recommender" / "data" / "icml2025_seeds").glob("*.txt"))


@pytest.fixture
def shared() -> Path:
    """The read-only ../shared folder (data, fixtures); tests that need it skip without it."""
    if not SHARED.is_dir():
        pytest.skip("../shared is not present")
    return SHARED


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

    fixtures = SHARED / "fixtures" / "pyzotero-api-responses"
    if not fixtures.is_dir():
        pytest.skip("../shared/fixtures/pyzotero-api-responses is not present")
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
