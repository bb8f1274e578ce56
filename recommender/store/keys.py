"""`digest(*parts)`: the key of a stored value, made of a format version and the data it depends on."""

from __future__ import annotations

import functools
import hashlib

import numpy as np


def digest(*parts) -> str:
    """32 hex digits of SHA-256 over the parts, in order: arrays by dtype, shape and bytes; bytes as
    they are; str, int, float, bool and None by repr; tuples and lists part by part. Anything else is
    a TypeError (a key must never depend on an object's address)."""
    hasher = hashlib.sha256()
    for part in parts:
        _update(hasher, part)
    return hasher.hexdigest()[:32]


def _update(hasher, part) -> None:
    if isinstance(part, (np.ndarray, np.generic)):
        array = np.ascontiguousarray(part)
        if array.dtype.hasobject:
            raise TypeError("an array of Python objects has no stable digest")
        hasher.update(f"array {array.dtype.str} {array.shape}\0".encode())
        hasher.update(memoryview(array).cast("B") if array.size else b"")
    elif isinstance(part, (bytes, bytearray, memoryview)):
        data = bytes(part)
        hasher.update(f"bytes {len(data)}\0".encode() + data)
    elif part is None or isinstance(part, (str, int, float)):  # bool is an int; repr tells them apart
        text = repr(part)
        hasher.update(f"{type(part).__name__} {len(text)}\0{text}".encode())
    elif isinstance(part, (tuple, list)):
        hasher.update(f"sequence {len(part)}\0".encode())
        for item in part:
            _update(hasher, item)
    else:
        raise TypeError(f"cannot digest a {type(part).__name__}")


def code_fingerprint(*paths) -> str:
    """A digest of the source code that shapes a stored value: every .py file at or under `paths` (files or
    folders), by relative name and bytes. A key made with it changes whenever that code does, with no
    hand-bumped version and not with the package version (which an edit leaves the same)."""
    from pathlib import Path

    return _fingerprint(tuple(str(Path(path).resolve()) for path in paths))


@functools.lru_cache(maxsize=32)
def _fingerprint(paths: tuple[str, ...]) -> str:
    from pathlib import Path

    hasher = hashlib.sha256()
    for given in map(Path, paths):
        files = sorted(given.rglob("*.py")) if given.is_dir() else [given]
        for file in files:
            name = file.relative_to(given).as_posix() if given.is_dir() else file.name
            hasher.update(f"{name}\0".encode() + file.read_bytes() + b"\0")
    return hasher.hexdigest()[:32]
