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
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Keep every test's cache/config/data writes out of the real user folders."""
    base = tmp_path_factory.mktemp("userdirs")
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(base / name.lower()))
