"""Where zotrec keeps files, and private folders there: 0700 whatever the umask, never a planted link.

The cache, data and config folders themselves may be links (the user's choice, e.g. onto another disk),
but what they reach must be the user's own; a folder zotrec names inside them is always a real folder
of the user's own: a link there is replaced. A folder of another user is refused (NotPrivate, a
PermissionError): its owner could read what zotrec keeps there or plant what it reads back.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from recommender.store.files import NotPrivate

log = logging.getLogger("recommender.store")

CACHE_DIR_ENV = "ZOTREC_CACHE_DIR"
DATA_DIR_ENV = "ZOTREC_DATA_DIR"


def cache_dir() -> Path:
    """`$ZOTREC_CACHE_DIR`, else the user cache folder (e.g. ~/.cache/zotrec on Linux)."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_path

    return user_cache_path("zotrec", appauthor=False)


def data_dir() -> Path:
    """`$ZOTREC_DATA_DIR`, else the user data folder (e.g. ~/.local/share/zotrec on Linux)."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_path

    return user_data_path("zotrec", appauthor=False)


def private_dir(folder: Path) -> Path:
    """`folder`, made if missing (0700, its missing parents too) and kept private: group and other
    permissions are taken off a folder of ours. Raises OSError when it cannot be had."""
    folder = Path(folder)
    root = next((top for top in (cache_dir(), data_dir()) if folder.is_relative_to(top)), folder)
    _ensure(root, inside=False)
    current = root
    for part in folder.relative_to(root).parts:
        current = current / part
        _ensure(current, inside=True)
    return folder


def make_folders(folder: Path) -> Path:
    """`folder` and its missing parents, each made 0700 whatever the umask; folders that exist are left as
    they are (an output folder the user named may be shared on purpose). Raises OSError."""
    folder = Path(folder)
    missing = []
    current = folder
    while not current.exists() and not current.is_symlink() and current != current.parent:
        missing.append(current)
        current = current.parent
    for part in reversed(missing):
        _make(part)
    return folder


def _ensure(folder: Path, *, inside: bool) -> None:
    """One folder: links followed for the root (`inside` False), replaced inside it."""
    try:
        info = os.lstat(folder) if inside else os.stat(folder)
    except FileNotFoundError:
        if not inside and not folder.parent.exists():
            _ensure(folder.parent, inside=False)
        _make(folder)
        return
    if stat.S_ISLNK(info.st_mode):
        log.warning("%s was a link, not a folder: it is replaced by a private folder", folder)
        os.unlink(folder)  # the link only: whatever it points to is left alone
        _make(folder)
        return
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(f"{folder} is not a folder")
    if info.st_uid != os.getuid():
        raise NotPrivate(f"{folder}: this folder belongs to another user (uid {info.st_uid}); zotrec keeps "
                         "its files only in folders of your own")
    if info.st_uid == os.getuid() and info.st_mode & 0o077:
        _chmod(folder, stat.S_IMODE(info.st_mode) & 0o700, follow=not inside)


def _make(folder: Path) -> None:
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:  # another run made it at the same moment
        pass
    _chmod(folder, 0o700, follow=False)  # exactly 0700, whatever the umask took away


def _chmod(folder: Path, mode: int, *, follow: bool) -> None:
    """chmod through a descriptor opened without following links: never the target of one."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | (0 if follow else os.O_NOFOLLOW))
    try:
        os.fchmod(descriptor, mode)
    finally:
        os.close(descriptor)
