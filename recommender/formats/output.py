"""The one way zotrec writes a file a user named: never over an input, a Zotero database, a link or a device.

Every command that writes (`reading-list -o`, `evaluate -o`, `score --out` and its group summary, `train -o`)
goes through here. The rules:

- the target is resolved through links first; a path that then is one of the run's inputs, or a Zotero
  or other SQLite database, is refused with a one-line error;
- a link is written through (its target changes, the link stays a link);
- a device, FIFO or socket (/dev/stdout, a named pipe) is written in place, never renamed over;
- a regular file is replaced atomically (a temporary file beside it, fsync, rename) and keeps its mode.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from recommender.errors import RecommenderError

ZOTERO_DATABASE_NAMES = {"zotero.sqlite", "zotero.sqlite-wal", "zotero.sqlite-journal", "zotero.sqlite-shm",
                         "zotero.sqlite.bak", "better-bibtex.sqlite"}
SQLITE_MAGIC = b"SQLite format 3\x00"


class OutputRefused(RecommenderError):
    """The output path would destroy something the user needs (an input, a database, a folder)."""


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a == b


def check_output_path(output: str | Path, inputs: Iterable[str | Path] = ()) -> Path:
    """The real path `output` will write to; OutputRefused when that would overwrite an input or a database."""
    given = Path(os.path.expanduser(str(output)))
    target = _real(given)
    shown = f"{given}" + (f" (a link to {target})" if given.is_symlink() else "")
    if target.is_dir():
        raise OutputRefused(f"{shown}: is a folder; name a file to write")
    if target.name.casefold() in ZOTERO_DATABASE_NAMES or target.name.casefold().startswith("zotero.sqlite"):
        raise OutputRefused(f"{shown}: refusing to write over a Zotero database file; choose another name")
    if target.is_file() and _is_sqlite(target):
        raise OutputRefused(f"{shown}: is an SQLite database; refusing to write over it, choose another name")
    for source in inputs:
        text = str(source)
        if not text or text == "-" or ":" in text and not Path(text).exists():
            continue  # zotero:web, a named corpus: not files
        real = _real(text)
        if _same_file(real, target):
            raise OutputRefused(f"{shown}: is also an input of this run ({source}); "
                                "refusing to overwrite it, choose another output")
    return target


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_text(output: str | Path, text: str, inputs: Iterable[str | Path] = ()) -> Path:
    """Write `text` to `output` under the rules above; returns the real path written."""
    target = check_output_path(output, inputs)
    given = os.path.expanduser(str(output))
    data = text.encode("utf-8")
    try:
        existing = os.stat(given)  # follows links, and works for /dev/stdout → a pipe, where realpath cannot
    except FileNotFoundError:
        existing = None
    except OSError as error:
        raise OutputRefused(f"{output}: cannot write ({error.strerror})") from None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        with open(given, "wb") as handle:  # a device or a FIFO: in place, never renamed over
            handle.write(data)
        return Path(given)
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else _default_mode()
    if not target.parent.is_dir():
        raise OutputRefused(f"{output}: the folder {target.parent} does not exist")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


SPREADSHEET_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: object) -> object:
    """A CSV cell a spreadsheet will not evaluate: text starting with = + - @, a tab or a CR gets a leading
    apostrophe (the OWASP rule; Excel, LibreOffice and Google Sheets then show it as text). Numbers pass."""
    if isinstance(cell, str) and cell.startswith(SPREADSHEET_TRIGGERS):
        return "'" + cell
    return cell


def spreadsheet_unsafe(cell: str) -> str:
    """The text `spreadsheet_safe` was given (for reading our own CSV back, e.g. on resume)."""
    if cell.startswith("'") and cell[1:].startswith(SPREADSHEET_TRIGGERS):
        return cell[1:]
    return cell
