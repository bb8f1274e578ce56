"""The one atomic writer and the one safe reader of zotrec's files, and the rule for trusting a file.

Every file zotrec writes (caches, data, the config, keys, a user's `-o` output) is filled in a fresh
temporary file beside its target, created with O_EXCL | O_NOFOLLOW (never through a link, never over
another file), given its mode through the descriptor (never a chmod by name), then renamed over the
target: a reader sees the old file or the new one, never half of one. A file zotrec reads back as its own
(a config, a key file, a cache) must be a regular file of this user that no one else may write
(`check_private`); anything else is refused in one line. Arrays are read with allow_pickle=False through
a descriptor that does not follow links, and their declared shapes are checked before any allocation
(`npz_array`): nothing stored can run code or exhaust memory.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np

from recommender.errors import RecommenderError

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class Damaged(ValueError):
    """A stored file that cannot be used (empty, cut short, not ours, unreadable, a link, arrays that cannot be
    what was stored)."""


class Arrays(dict):
    """A stored file's arrays by name; one that is not there is damage, not a KeyError (which would be a bug)."""

    def __missing__(self, name: str):
        raise Damaged(f"no array '{name}'")


class NotPrivate(RecommenderError, PermissionError):
    """A file or folder zotrec would trust (config, keys, cache, history) is a link, or another user's,
    or others may write it: refused, never read, chmod-ed or written through."""


def write_bytes(path: Path, data: bytes, *, mode: int = 0o600, durable: bool = False) -> None:
    """Write `data` to `path` atomically (`mode`, 0600 unless told); OSError naming `path` on failure,
    nothing left behind."""
    write_atomic(Path(path), lambda stream: stream.write(data), mode=mode, durable=durable)


def write_npz(path: Path, arrays: Mapping[str, np.ndarray], *, compressed: bool = False) -> None:
    """Write arrays as an .npz atomically (0600); an array of Python objects is a TypeError."""
    arrays = {name: np.asarray(array) for name, array in arrays.items()}
    for name, array in arrays.items():
        if array.dtype.hasobject:
            raise TypeError(f"array '{name}' holds Python objects, which are never stored")
    save = np.savez_compressed if compressed else np.savez
    write_atomic(Path(path), lambda stream: save(stream, **arrays))


def write_atomic(path: Path, fill: Callable[[BinaryIO], object], *, mode: int = 0o600,
                 durable: bool = False) -> None:
    """The one atomic writer: `fill` writes into a fresh temporary file beside `path` (O_EXCL, O_NOFOLLOW,
    `mode` set through the descriptor), fsync-ed when `durable`, then renamed over `path` — a link at
    `path` is replaced, never written through. An OSError is raised again naming `path`."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    except OSError as error:
        raise _named(error, path) from None
    try:
        if hasattr(os, "fchmod"):  # not on Windows, where the mode bits mean little
            os.fchmod(descriptor, mode)
        with os.fdopen(descriptor, "wb") as stream:
            fill(stream)
            stream.flush()
            if durable:
                os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise _named(error, path) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _named(error: OSError, path: Path) -> OSError:
    """The same error (its errno subclass too) naming the file it was for, not a temporary name."""
    return OSError(error.errno, error.strerror or str(error), str(path)) if error.errno else error


def check_private(info: os.stat_result, path: str | Path, what: str) -> None:
    """NotPrivate unless `info` (an fstat of an opened file) is a regular file of this user that neither
    its group nor others may write: another user's config could redirect a sync and read its keys."""
    if not hasattr(os, "getuid"):
        return
    if not stat.S_ISREG(info.st_mode):
        raise NotPrivate(f"{path}: zotrec's {what} is not a regular file; refusing to use it")
    if info.st_uid != os.getuid():
        raise NotPrivate(f"{path}: zotrec's {what} belongs to another user (uid {info.st_uid}); refusing "
                         "to use it (move it away, or make it yours: chown)")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise NotPrivate(f"{path}: others may write zotrec's {what}; refusing to use it "
                         f"(check it, then: chmod 600 {path})")


def read_private(path: Path, what: str, limit: int = 16 << 20) -> bytes | None:
    """The bytes of a small file zotrec trusts (config, keys), None when there is none; NotPrivate when it
    is not this user's own or others may write it (a link is followed: a config kept in a dotfiles folder
    is the user's choice, the file it reaches is checked)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(stream.fileno())
        check_private(info, path, what)
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise NotPrivate(f"{path}: zotrec's {what} is larger than {limit >> 20} MB; refusing to read it")
    return data


def prepare_private_file(path: Path, what: str, *, replace_link: bool) -> None:
    """Make sure `path` is this user's own regular file, mode 0600 (created if missing), before a library
    such as SQLite opens it by name. A link there is removed when `replace_link` (a cache: rebuilt), else
    refused; the mode is set through the descriptor, so a link's target is never chmod-ed."""
    flags = os.O_RDWR | os.O_CREAT | O_NOFOLLOW | O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags, 0o600)
    except OSError as error:
        if not os.path.islink(path):
            raise
        if not replace_link:
            raise NotPrivate(f"{path}: zotrec's {what} is a link; refusing to follow it (replace the link by "
                             "the file it points to, or move it away)") from None
        os.unlink(path)  # the link only: whatever it points to is left alone
        descriptor = os.open(path, flags | os.O_EXCL, 0o600)
    try:
        info = os.fstat(descriptor)
        if info.st_nlink > 1 and stat.S_ISREG(info.st_mode):
            raise NotPrivate(f"{path}: zotrec's {what} has another name (a hard link); refusing to use it")
        check_private(info, path, what)
        if stat.S_IMODE(info.st_mode) != 0o600:
            os.fchmod(descriptor, 0o600)
    finally:
        os.close(descriptor)


def read_npz(path: Path) -> Arrays:
    """Every array of the .npz at `path`; FileNotFoundError when there is none, else Damaged for
    anything that makes it unusable (another user's file included)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | O_NOFOLLOW)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(path) from None
    except OSError as error:
        link = os.path.islink(path)
        raise Damaged("a link, not a file" if link else error.strerror or str(error)) from None
    try:
        with os.fdopen(descriptor, "rb") as stream:
            info = os.fstat(stream.fileno())
            if info.st_size == 0:
                raise Damaged("an empty file")
            try:
                check_private(info, path, "cache file")
            except NotPrivate as error:
                raise Damaged(str(error).partition(": ")[2]) from None
            data = np.load(stream, allow_pickle=False)
            if not hasattr(data, "files"):
                raise Damaged("not an .npz file")
            with data:
                return Arrays((name, npz_array(data, name, MAX_ARRAY_BYTES)) for name in data.files)
    except Damaged:
        raise
    except Exception as error:  # EOFError, BadZipFile, ValueError, OSError, zlib.error…: all one damage
        raise Damaged(f"{type(error).__name__}: {error}".rstrip(": ")) from None


MAX_ARRAY_BYTES = 4 << 30  # the most one stored or handed-over array may declare (4 GiB)


def npz_array(data, name: str, max_bytes: int = MAX_ARRAY_BYTES) -> np.ndarray:
    """One array of an opened .npz (`np.load`), its declared shape and dtype read from the .npy header
    first: an array that declares more than `max_bytes`, or an object dtype, is a ValueError naming the
    field, before anything is allocated."""
    member = f"{name}.npy"
    zipped = getattr(data, "zip", None)
    if zipped is not None and member in zipped.namelist():
        with zipped.open(member) as stream:
            shape, dtype = _npy_header(stream)
        if dtype.hasobject:
            raise ValueError(f"field '{name}' holds Python objects")
        declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if declared > max_bytes:
            shown = " × ".join(map(str, shape))
            raise ValueError(f"field '{name}' declares a {shown} {dtype} array ({declared / 2**30:.1f} GiB), "
                             f"more than the {max_bytes / 2**30:g} GiB allowed")
    return data[name]


def _npy_header(stream) -> tuple[tuple[int, ...], np.dtype]:
    from numpy.lib import format as npy

    version = npy.read_magic(stream)
    read = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}.get(version)
    if read is None:
        if version != (3, 0) or not hasattr(npy, "_read_array_header"):
            raise ValueError(f"unknown .npy version {version}")
        shape, _fortran, dtype = npy._read_array_header(stream, version)  # 2.0 with a UTF-8 header
    else:
        shape, _fortran, dtype = read(stream)
    return tuple(int(n) for n in shape), np.dtype(dtype)
