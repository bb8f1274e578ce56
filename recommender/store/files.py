"""The one atomic private writer and the one safe reader of stored files.

A file is written to a 0600 temporary file beside its target and renamed over it, so a reader sees
the old file or the new one, never half of one, and a link at the target is replaced, never written
through. Arrays are read with allow_pickle=False, through a descriptor that does not follow links:
nothing stored can run code, and whatever is wrong with a file is one `Damaged` error.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np


class Damaged(ValueError):
    """A stored file that cannot be used (empty, cut short, not ours, unreadable, a link, arrays that cannot be
    what was stored)."""


class Arrays(dict):
    """A stored file's arrays by name; one that is not there is damage, not a KeyError (which would be a bug)."""

    def __missing__(self, name: str):
        raise Damaged(f"no array '{name}'")


def write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically (0600); raises OSError and leaves nothing behind on failure."""
    _write(Path(path), lambda stream: stream.write(data))


def write_npz(path: Path, arrays: Mapping[str, np.ndarray], *, compressed: bool = False) -> None:
    """Write arrays as an .npz atomically (0600); an array of Python objects is a TypeError."""
    arrays = {name: np.asarray(array) for name, array in arrays.items()}
    for name, array in arrays.items():
        if array.dtype.hasobject:
            raise TypeError(f"array '{name}' holds Python objects, which are never stored")
    save = np.savez_compressed if compressed else np.savez
    _write(Path(path), lambda stream: save(stream, **arrays))


def _write(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # 0600
    try:
        with os.fdopen(handle, "wb") as stream:
            fill(stream)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_npz(path: Path) -> Arrays:
    """Every array of the .npz at `path`; FileNotFoundError when there is none, else Damaged for
    anything that makes it unusable."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(path) from None
    except OSError as error:
        link = os.path.islink(path)
        raise Damaged("a link, not a file" if link else error.strerror or str(error)) from None
    try:
        with os.fdopen(descriptor, "rb") as stream:
            if os.fstat(stream.fileno()).st_size == 0:
                raise Damaged("an empty file")
            data = np.load(stream, allow_pickle=False)
            if not hasattr(data, "files"):
                raise Damaged("not an .npz file")
            with data:
                return Arrays((name, data[name]) for name in data.files)
    except Damaged:
        raise
    except Exception as error:  # EOFError, BadZipFile, ValueError, OSError, zlib.error…: all one damage
        raise Damaged(f"{type(error).__name__}: {error}".rstrip(": ")) from None
