"""Errors from reading or writing Zotero, each with a hint a user can act on."""

from __future__ import annotations

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


def disk_full_error(path: object, kept: str) -> BridgeError:
    """The one line for a full disk: the file, and what was kept."""
    return BridgeError(f"{path}: no space left on the disk; {kept}; free some space and run again")
