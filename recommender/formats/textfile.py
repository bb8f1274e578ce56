"""Reading user-supplied text files: one place for missing files, empty files and encodings."""

from __future__ import annotations

import codecs
import logging
from pathlib import Path

from recommender.errors import InputError

log = logging.getLogger(__name__)


BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
FALLBACK_ENCODING = "cp1252"  # the declared fallback: what Windows tools (and old Zotero/JabRef) wrote


def decode_text(data: bytes, path: str | Path) -> str:
    """Bytes → text: a BOM names UTF-32/UTF-16/UTF-8; else UTF-8; else Windows-1252 with a warning.

    UTF-16 without a BOM (every other byte NUL) is recognised too. A file that still holds NUL
    characters is binary, and is refused in one line rather than read as thousands of broken entries.
    """
    encoding = next((name for bom, name in BOMS if data.startswith(bom)), None)
    if encoding is None and len(data) >= 4 and data.count(0) * 3 >= len(data):
        even, odd = data[0::2].count(0), data[1::2].count(0)
        encoding = "utf-16-le" if odd > even * 4 else "utf-16-be" if even > odd * 4 else None
    if encoding is not None:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            raise InputError(f"starts like {encoding.upper()} text but is not (a damaged or binary file?)",
                             path=path) from None
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            log.warning("%s:%d: not UTF-8; read the file as Windows-1252", path, line)
            text = data.decode(FALLBACK_ENCODING, errors="replace")
    if "\x00" in text:
        raise InputError("is a binary file, not text (it holds NUL bytes)", path=path)
    return text


def read_text(path: str | Path) -> str:
    """Read a text file, decoded by `decode_text` (BOM, UTF-8, then the Windows-1252 fallback)."""
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
    text = decode_text(data, path)
    if not text.strip():
        raise InputError("file is empty", path=path)
    return text


def load_json(text: str, path: str | Path, what: str):
    """JSON text → data; invalid or absurdly nested JSON is one InputError naming the file (and line)."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON ({error.msg})", path=path, line=error.lineno) from None
    except RecursionError:
        raise InputError(f"JSON nested too deeply to be {what}", path=path) from None
