"""Reading user-supplied text files: one place for missing files, empty files and encodings."""

from __future__ import annotations

import logging
from pathlib import Path

from recommender.errors import InputError

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 1 << 30


def read_text(path: str | Path) -> str:
    """Read a text file as UTF-8 (with or without BOM).

    Bytes that are not UTF-8 are read as Windows-1252 and a warning names the first bad line,
    so a legacy export still loads and the user learns about it.
    """
    path = Path(path)
    try:
        if path.is_dir():
            raise InputError("is a folder, not a file", path=path)
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except PermissionError:
        raise InputError("permission denied", path=path) from None
    except IsADirectoryError:
        raise InputError("is a folder, not a file", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror})", path=path) from None
    if not data.strip():
        raise InputError("file is empty", path=path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        log.warning("%s:%d: not UTF-8; read the file as Windows-1252", path, line)
        return data.decode("cp1252", errors="replace")
