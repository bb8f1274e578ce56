"""The one way zotrec writes a file a user named: never over an input, a Zotero database, a link or a device.

Every command that writes (`reading-list -o`, `evaluate -o`, `score --out` and its group summary, `train -o`)
goes through here. The rules:

- the target is resolved through links first; a path that then is one of the run's inputs, or a Zotero
  or other SQLite database, is refused with a one-line error;
- a link is written through (its target changes, the link stays a link);
- a device, FIFO or socket (/dev/stdout, a named pipe) is written in place, never renamed over;
- a regular file is replaced atomically (`recommender.store.write_atomic`: a fresh temporary file beside it,
  fsync, rename) and keeps its mode; a full
  disk or a read-only folder is one line naming the path, the old file left whole and no temporary file behind;
- a file that is appended to and resumed (`score --out`) has one writer at a time (`OutputLock`).

Text from a corpus or a library reaches every output through `safe_text` (or `safe_json` for JSON), so no
terminal escape, control character or bidi override is written raw.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from recommender.errors import RecommenderError
from recommender.store.files import write_atomic
from recommender.store.paths import make_folders

ZOTERO_DATABASE_NAMES = {"zotero.sqlite", "zotero.sqlite-wal", "zotero.sqlite-journal", "zotero.sqlite-shm",
                         "zotero.sqlite.bak", "better-bibtex.sqlite"}
SQLITE_MAGIC = b"SQLite format 3\x00"


class OutputRefused(RecommenderError):
    """The output path would destroy something the user needs (an input, a database, a folder)."""


class OutputFailed(RecommenderError):
    """Writing the output failed (a full disk, a read-only folder); the message says what was kept."""


class OutputBusy(RecommenderError):
    """Another process is writing this output file."""


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
        try:
            with open(given, "wb") as handle:  # a device or a FIFO: in place, never renamed over
                handle.write(data)
        except OSError as error:
            raise write_failed(output, error, "the output may be incomplete") from None
        return Path(given)
    mode = stat.S_IMODE(existing.st_mode) if existing is not None else _default_mode()
    if not target.parent.is_dir():
        raise OutputRefused(f"{output}: the folder {target.parent} does not exist")
    kept = "the old file is unchanged" if existing is not None else "nothing was written"
    try:
        write_atomic(target, lambda handle: handle.write(data), mode=mode, durable=True)
    except OSError as error:
        raise write_failed(output, error, kept) from None
    return target


def output_folder(folder: str | Path) -> Path:
    """The folder an output goes in, its missing parts made 0700 whatever the umask (never world-writable)."""
    try:
        return make_folders(Path(folder))
    except OSError as error:
        raise write_failed(folder, error, "nothing was written") from None


def write_failed(output: str | Path, error: OSError, kept: str) -> OutputFailed:
    """One line for a failed write: the path, the reason (disk full, read-only …) and what was kept."""
    return OutputFailed(f"{output}: cannot write ({error.strerror or error}); {kept}")


class OutputLock:
    """One writer per output file: an advisory lock (flock) on a hidden `.NAME.lock` beside the output,
    holding the writer's pid so that a second run can name it. The kernel drops the lock when the holder
    dies, so a killed run never blocks the next one. A no-op where flock does not exist (Windows)."""

    def __init__(self, target: str | Path) -> None:
        self.target = Path(target)
        self.path = self.target.with_name(f".{self.target.name}.lock")
        self._descriptor: int | None = None

    def acquire(self) -> OutputLock:
        try:
            import fcntl
        except ModuleNotFoundError:
            return self
        while self._descriptor is None:
            descriptor = self._open()
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip() or "unknown"
                os.close(descriptor)
                raise OutputBusy(f"{self.target}: another zotrec run (pid {holder}) is writing it; "
                                 "wait for it to finish or choose another output") from None
            if self._still_named(descriptor):  # else a holder removed it while we waited: lock the new one
                os.pwrite(descriptor, f"{os.getpid():<20}\n".encode("ascii"), 0)  # fixed width: never truncated
                self._descriptor = descriptor
            else:
                os.close(descriptor)
        return self

    def _open(self) -> int:
        """The lock file, opened without following a link (O_NOFOLLOW) and never truncated: in a shared folder
        another user may have planted a link or a hard link there to make us destroy a file elsewhere."""
        flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NONBLOCK", 0))
        try:
            descriptor = os.open(self.path, flags, 0o600)
        except OSError as error:
            if os.path.islink(self.path):
                raise OutputRefused(f"{self.path}: the lock beside {self.target.name} is a link (planted by someone "
                                    "else?); refusing to follow it — remove it, then run again") from None
            raise write_failed(self.target, error, "nothing was written") from None
        info = os.fstat(descriptor)
        problem = ("is not a regular file" if not stat.S_ISREG(info.st_mode)
                   else "has another name (a hard link)" if info.st_nlink > 1
                   else "belongs to another user" if hasattr(os, "getuid") and info.st_uid != os.getuid() else "")
        if problem:
            os.close(descriptor)
            raise OutputRefused(f"{self.path}: the lock beside {self.target.name} {problem}; refusing to use it "
                                "— remove it, then run again")
        return descriptor

    def _still_named(self, descriptor: int) -> bool:
        try:
            return os.path.samestat(os.fstat(descriptor), os.stat(self.path))
        except FileNotFoundError:
            return False

    def release(self) -> None:
        """Remove the lock file, then let go (in this order, so no one locks a file that is being removed)."""
        if self._descriptor is not None:
            self.path.unlink(missing_ok=True)
            os.close(self._descriptor)
            self._descriptor = None


# What no output may carry raw: C0 controls but tab and newline, DEL, C1 controls (0x9b is a terminal's CSI, 0x9d
# its OSC); the bidi embeddings, overrides and isolates; lone surrogates (the undecodable bytes of a file name, or
# a `\ud800` escape: not text, and no UTF-8 holds them); U+FFFE and U+FFFF (not characters: XML 1.0 forbids them,
# and a feed holding one is refused by every strict parser) and the other non-characters (U+FDD0–FDEF, U+1FFFE …:
# an HTML parse error). Tab and newline are left to each format.
_NON_CHARACTERS = "\ufdd0-\ufdef\ufffe\uffff" + "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}"
                                                       for plane in range(1, 17))
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff{_NON_CHARACTERS}]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")  # json: C0 too


def _not_text(char: str) -> bool:
    return "\ud800" <= char <= "\udfff" or "\ufdd0" <= char <= "\ufdef" or (ord(char) & 0xFFFE) == 0xFFFE


def _replacement(match: re.Match) -> str:
    char = match.group()
    if _not_text(char):
        return "\ufffd"
    return "" if "\u202a" <= char <= "\u2069" else " "


def safe_text(text: object) -> str:
    """Text from a corpus or a library fit for every output but JSON (terminal, Markdown, HTML, XML, CSV, mail,
    BibTeX, RIS): control characters (ESC, BEL, NUL, C1) become a space, bidi overrides are dropped, what is not
    text (lone surrogates, U+FFFE, U+FFFF and the other non-characters) becomes U+FFFD."""
    return _UNSAFE.sub(_replacement, str(text if text is not None else ""))


def safe_json(document: str) -> str:
    """Serialised JSON with DEL, C1 controls, bidi overrides, U+FFFE/U+FFFF and the line separators U+2028/U+2029
    (a reader that splits lines on them would cut a JSON Lines row) written as \\u escapes (the data is kept,
    nothing acts on a terminal), and lone surrogates as U+FFFD (they are not text)."""
    return _JSON_UNSAFE.sub(lambda m: "\ufffd" if "\ud800" <= m.group() <= "\udfff"
                            else f"\\u{ord(m.group()):04x}", document)


SPREADSHEET_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: object) -> object:
    """A CSV cell made `safe_text` and one a spreadsheet will not evaluate: text starting with = + - @, a tab
    or a CR gets a leading apostrophe (the OWASP rule; Excel, LibreOffice and Google Sheets then show it as
    text). Numbers pass."""
    if isinstance(cell, str):
        cell = safe_text(cell)
        if cell.startswith(SPREADSHEET_TRIGGERS):
            return "'" + cell
    return cell


def spreadsheet_unsafe(cell: str) -> str:
    """The text `spreadsheet_safe` was given (for reading our own CSV back, e.g. on resume)."""
    if cell.startswith("'") and cell[1:].startswith(SPREADSHEET_TRIGGERS):
        return cell[1:]
    return cell
