"""The store's notices: one per damaged entry, one per run for a folder that cannot be written."""

from __future__ import annotations

import logging
from pathlib import Path

from recommender.store.paths import cache_dir, data_dir

log = logging.getLogger("recommender.store")

_unwritable: set[Path] = set()  # the folders this run has given up writing to


def _top(folder: Path) -> Path:
    """The cache or data folder `folder` lies in (one notice for all of it), else `folder` itself."""
    folder = Path(folder)
    return next((top for top in (cache_dir(), data_dir()) if folder.is_relative_to(top)), folder)


def unwritable(folder: Path, error: Exception) -> None:
    """Say once per run that nothing more is stored under `folder`'s cache or data folder."""
    top = _top(folder)
    if top in _unwritable:
        return
    _unwritable.add(top)
    reason = getattr(error, "strerror", None) or str(error)
    log.warning("cache folder %s cannot be written (%s): this run computes without storing what it computes",
                top, reason)


def is_unwritable(folder: Path) -> bool:
    """Whether this run already gave up writing under `folder` (no retry storm)."""
    return _top(folder) in _unwritable


def damaged(what: str, path: Path, error: Exception) -> None:
    log.warning("%s %s is damaged (%s): it is rebuilt", what, path, error)
