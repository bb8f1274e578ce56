"""Errors from reading or writing Zotero, each with a hint a user can act on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from recommender.errors import RecommenderError


class BridgeError(RecommenderError):
    """Base class for Zotero-side failures; the message is one line, never holds the API key."""


class SourceError(BridgeError):
    """A `--library` source could not be named, found or read."""


def is_disk_full(error: BaseException) -> bool:
    """No room left (SQLite's 'database or disk is full', ENOSPC, a quota): not damage, so never called so."""
    import errno
    import sqlite3

    if isinstance(error, OSError):
        return error.errno in (errno.ENOSPC, errno.EDQUOT)
    return isinstance(error, sqlite3.OperationalError) and (
        getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(error))


@contextmanager
def full_disk_in_one_line(path: object, kept: str) -> Iterator[None]:
    """A full disk while writing `path` is one line naming it and what was kept (`kept`), not a traceback."""
    import sqlite3

    try:
        yield
    except (sqlite3.OperationalError, OSError) as error:
        if not is_disk_full(error):
            raise
        raise BridgeError(f"{path}: no space left on the disk; {kept}; free some space and run again") from None
