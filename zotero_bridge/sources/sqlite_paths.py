"""Where zotero.sqlite lives, and how to open it without ever writing to it, even while Zotero runs.

Zotero keeps an exclusive lock on its database while it runs, so a plain connection fails with
"database is locked". We copy the database (with its `-wal` or `-journal` file) into a private
temporary folder and read the copy; when no copy can be made we read the file in place with
SQLite's `immutable=1`, and say so, because that read can miss recent changes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from zotero_bridge.errors import SourceError

log = logging.getLogger(__name__)

DATABASE_NAME = "zotero.sqlite"
SQLITE_HEADER = b"SQLite format 3\x00"
COMPANION_SUFFIXES = ("-wal", "-journal")  # Zotero 10 uses WAL; Zotero 7-9 a rollback journal
COPY_ATTEMPTS = 3
_DATA_DIR_PREF = re.compile(r'user_pref\("extensions\.zotero\.dataDir",\s*"((?:[^"\\]|\\.)*)"\)')
_USE_DATA_DIR_OFF = re.compile(r'user_pref\("extensions\.zotero\.useDataDir",\s*false\)')


def profile_roots(home: Path, system: str, environ: Mapping[str, str]) -> list[Path]:
    """The folders that hold Zotero's profile folders (each with a prefs.js) on this OS."""
    if system == "Darwin":
        return [home / "Library" / "Application Support" / "Zotero" / "Profiles"]
    if system == "Windows":
        appdata = Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
        return [appdata / "Zotero" / "Zotero" / "Profiles"]
    return [home / ".zotero" / "zotero"]


def custom_data_dirs(home: Path, system: str, environ: Mapping[str, str]) -> list[Path]:
    """Data directories set in Settings → Advanced → Files and Folders (pref extensions.zotero.dataDir)."""
    found = []
    for root in profile_roots(home, system, environ):
        for prefs in sorted(root.glob("*/prefs.js")) if root.is_dir() else []:
            try:
                text = prefs.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            match = _DATA_DIR_PREF.search(text)
            if match and not _USE_DATA_DIR_OFF.search(text):
                found.append(Path(re.sub(r"\\(.)", r"\1", match.group(1))))
    return found


def default_database_candidates(home: Path | None = None, system: str | None = None,
                                environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where Zotero keeps zotero.sqlite: a custom data directory first, then ~/Zotero (all OSes)."""
    home = home or Path.home()
    system = system or platform.system()
    environ = os.environ if environ is None else environ
    folders = [*custom_data_dirs(home, system, environ), home / "Zotero"]
    return list(dict.fromkeys(folder / DATABASE_NAME for folder in folders))


def resolve_database_path(argument: str) -> Path:
    """The zotero.sqlite to read: the given file, zotero.sqlite in a given folder, or the default place."""
    if not argument:
        candidates = default_database_candidates()
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        looked = ", ".join(str(c) for c in candidates)
        raise SourceError(f"no zotero.sqlite found (looked in {looked}); pass its path: "
                          "--library /path/to/zotero.sqlite")
    path = Path(argument).expanduser()
    if path.is_dir():
        path = path / DATABASE_NAME
    if not path.exists():
        raise SourceError(f"{path}: no such file (Zotero's database is zotero.sqlite in its data directory, "
                          "see Settings → Advanced → Files and Folders)")
    if not path.is_file():
        raise SourceError(f"{path}: not a file")
    return path


def check_header(path: Path) -> None:
    """Fail early, in one line, on files we cannot read or that are not SQLite at all."""
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except PermissionError:
        raise SourceError(f"{path}: permission denied (zotrec needs read access to the file)") from None
    except OSError as error:
        raise SourceError(f"{path}: cannot be read ({error.strerror or error})") from None
    if not header:
        raise SourceError(f"{path}: empty file, not a Zotero database")
    if header != SQLITE_HEADER:
        raise SourceError(f"{path}: not an SQLite database (is it a Zotero export? use .bib, .ris or .json)")


@dataclass
class Snapshot:
    """An open read-only view of one zotero.sqlite: how it was made matters to the user."""

    connection: sqlite3.Connection
    mode: str  # "copy" or "immutable"


def _signature(path: Path) -> tuple:
    parts = []
    for suffix in ("", *COMPANION_SUFFIXES):
        try:
            stat = os.stat(f"{path}{suffix}")
            parts.append((suffix, stat.st_size, stat.st_mtime_ns))
        except FileNotFoundError:
            parts.append((suffix, None, None))
    return tuple(parts)


def _copy_database(path: Path, folder: Path) -> Path:
    """Copy the database and its -wal/-journal together; copy again if Zotero wrote meanwhile."""
    target = folder / DATABASE_NAME
    files = [f"{path}{suffix}" for suffix in ("", *COMPANION_SUFFIXES)]
    needed = sum(os.stat(name).st_size for name in files if os.path.exists(name))
    if shutil.disk_usage(folder).free < needed * 1.1:
        raise OSError(f"not enough free space in {folder} for a {needed // 2**20} MiB copy")
    for attempt in range(1, COPY_ATTEMPTS + 1):
        before = _signature(path)
        for suffix in COMPANION_SUFFIXES:
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(path, target)
        for suffix in COMPANION_SUFFIXES:
            if os.path.exists(f"{path}{suffix}"):
                shutil.copyfile(f"{path}{suffix}", f"{target}{suffix}")
        if _signature(path) == before:
            return target
        log.debug("zotero.sqlite changed while it was copied (attempt %d)", attempt)
    log.warning("%s kept changing while zotrec copied it (is Zotero syncing?); the copy may be "
                "incomplete: run again once Zotero is idle if anything looks missing", path)
    return target


def _open_copy(copy: Path) -> sqlite3.Connection:
    # A private copy: opening it read-write lets SQLite replay the copied -wal or roll back a hot journal.
    connection = sqlite3.connect(copy, isolation_level=None)
    connection.execute("PRAGMA query_only = ON")
    return connection


def _open_immutable(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None)


@contextlib.contextmanager
def open_snapshot(path: Path, *, copy: bool = True) -> Iterator[Snapshot]:
    """A read-only connection to a consistent copy of `path`; the immutable in-place read as fallback."""
    check_header(path)
    with tempfile.TemporaryDirectory(prefix="zotrec-sqlite-") as folder:
        connection, mode = None, "copy"
        if copy:
            try:
                connection = _open_copy(_copy_database(path, Path(folder)))
            except (OSError, sqlite3.OperationalError) as error:
                log.warning("Could not copy %s (%s); reading it in place with SQLite's immutable mode "
                            "instead: changes Zotero makes during the read, or keeps in zotero.sqlite-wal, "
                            "may be missed", path, error)
        if connection is None:
            connection, mode = _open_immutable(path), "immutable"
        try:
            yield Snapshot(connection, mode)
        finally:
            connection.close()
