"""`Store(folder)`: values stored as `<name>-<key>.npz` files in one private folder, kept or computed.

A missing, damaged or unusable file is a miss (computed again, one notice when damaged); a folder
that cannot be written costs only speed (one notice per run, then no more tries); with `keep`, the
files of the least recently used keys beyond that many are removed.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from recommender.store import notices
from recommender.store.files import Damaged, read_npz, write_npz
from recommender.store.paths import private_dir

log = logging.getLogger("recommender.store")

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.]*(-[a-z0-9_.]+)*$")
_KEY = re.compile(r"^[A-Za-z0-9_]+$")
_VALUE = "__value__"  # the field memo keeps a single array under


class Store:
    """The values in one folder (created 0700 on the first write)."""

    def __init__(self, folder: Path, *, keep: int | None = None, what: str = "cache entry") -> None:
        self.folder, self.keep, self.what = Path(folder), keep, what

    def path(self, name: str, key: str) -> Path:
        if not _NAME.match(name) or not _KEY.match(key):
            raise ValueError(f"not a store name and key: {name!r}, {key!r}")
        return self.folder / f"{name}-{key}.npz"

    def load(self, name: str, key: str, parse: Callable[[dict], object] | None = None):
        """The arrays stored under (name, key) (or what `parse(arrays)` makes of them), None when there
        are none; `parse` raises `Damaged` for arrays that cannot be what was stored: a damaged entry,
        said once and rebuilt. Any other exception from `parse` is a bug and is not hidden."""
        path = self.path(name, key)
        try:
            arrays = read_npz(path)
            value = arrays if parse is None else parse(arrays)
        except FileNotFoundError:
            return None
        except Damaged as error:
            notices.damaged(self.what, path, error)
            return None
        if self.keep is not None and not notices.is_unwritable(self.folder):
            try:
                os.utime(path)  # recently used: kept by the pruning
            except OSError:
                pass
        return value

    def save(self, name: str, key: str, arrays: Mapping[str, np.ndarray]) -> bool:
        """Store arrays under (name, key); False (and a notice once per run) when the folder cannot be
        written, False (quietly) for values that cannot be stored without pickle."""
        if notices.is_unwritable(self.folder):
            return False
        path = self.path(name, key)
        try:
            private_dir(self.folder)
            write_npz(path, arrays)
        except TypeError as error:
            log.debug("%s not stored: %s", path, error)
            return False
        except OSError as error:
            notices.unwritable(self.folder, error)
            return False
        if self.keep is not None:
            self.prune()
        return True

    def memo(self, name: str, key: str, compute: Callable[[], np.ndarray | dict[str, np.ndarray]]):
        """The value stored under (name, key), else `compute()`, stored and returned: one array or a
        dict of arrays (returned as it was given)."""
        found = self.load(name, key)
        if found is not None:
            return found[_VALUE] if set(found) == {_VALUE} else found
        value = compute()
        single = isinstance(value, np.ndarray)
        self.save(name, key, {_VALUE: value} if single else value)
        return value

    def prune(self) -> None:
        """Remove the files of every key but the `keep` most recently used ones."""
        try:
            newest: dict[str, float] = {}
            files = [path for path in self.folder.glob("*-*.npz") if not path.name.startswith(".")]
            for path in files:
                key = path.stem.rpartition("-")[2]
                newest[key] = max(newest.get(key, 0.0), path.stat().st_mtime)
            kept = set(sorted(newest, key=newest.__getitem__, reverse=True)[: self.keep])
            for path in files:
                if path.stem.rpartition("-")[2] not in kept:
                    path.unlink(missing_ok=True)
        except OSError:
            pass
