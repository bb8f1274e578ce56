"""Reading user-supplied text files: one place for missing files, odd files, sizes and encodings."""

from __future__ import annotations

import codecs
import logging
import os
import re
import stat
import sys
from pathlib import Path
from typing import BinaryIO

from recommender.errors import InputError

log = logging.getLogger(__name__)

MAX_INPUT_BYTES = 512 << 20  # the most read from one library or corpus file (README, Safety): far above any export
MAX_JSON_LINE_CHARS = 16 << 20  # one JSON Lines record: a paper or an item with its full text fits many times
STDIN = "-"


BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
FALLBACK_ENCODING = "cp1252"  # the declared fallback: what Windows tools (and old Zotero/JabRef) wrote
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # a first test: pairs match too
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_LINE_BREAK = re.compile("\r\n?|\n")  # JSON Lines' own; U+2028, U+0085, FS… are text inside a JSON string


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


def input_kind(mode: int) -> str | None:
    """What a file that is not a regular file is ('a named pipe (FIFO)', …); None for a regular file."""
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _refuse(kind: str, path: str | Path) -> InputError:
    hint = "" if kind == "a folder" else " (zotrec reads regular files, or '-' for standard input)"
    return InputError(f"is {kind}, not a file{hint}", path=path)


def read_input_bytes(path: str | Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of an input the user named: a regular file, or '-' for standard input, at most `limit` bytes.

    The file is opened without blocking and checked with fstat before any read, so a FIFO with no writer,
    a device (/dev/zero) or a folder is refused in one line, never waited on or read without end.
    """
    if str(path) == STDIN:
        if sys.stdin is None or not hasattr(sys.stdin, "buffer"):
            raise InputError("is closed; nothing to read (give a file, or pipe one in)",
                             path="standard input")
        try:
            return _read_bounded(sys.stdin.buffer, limit, "standard input")
        except (OSError, ValueError) as error:  # a closed or broken descriptor
            raise InputError(f"cannot read ({getattr(error, 'strerror', None) or error})",
                             path="standard input") from None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except PermissionError:
        raise InputError("permission denied", path=path) from None
    except IsADirectoryError:
        raise _refuse("a folder", path) from None
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror})", path=path) from None
    try:
        status = os.fstat(descriptor)
        kind = input_kind(status.st_mode)
        if kind is not None:
            raise _refuse(kind, path)
        if status.st_size > limit:
            raise _too_large(limit, path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)
        with open(descriptor, "rb", closefd=False) as handle:
            return _read_bounded(handle, limit, path, status.st_size)
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror})", path=path) from None
    finally:
        os.close(descriptor)


def _too_large(limit: int, path: str | Path) -> InputError:
    return InputError(f"is larger than {limit / 2**20:g} MB, the most zotrec reads from one file", path=path)


def _read_bounded(handle: BinaryIO, limit: int, path: str | Path, expected: int = 0) -> bytes:
    """At most `limit` bytes: a regular file in one read of its size, then (it may grow, or be a pipe) 1 MiB at
    a time; one byte more than `limit` means it is too large."""
    parts = [handle.read(min(expected, limit) + 1)] if expected else []
    total = sum(map(len, parts))
    while total <= limit:
        part = handle.read(min(1 << 20, limit + 1 - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    if total > limit:
        raise _too_large(limit, path)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_text(path: str | Path) -> str:
    """Read a text input (`read_input_bytes`), decoded by `decode_text` (BOM, UTF-8, then Windows-1252)."""
    shown = "standard input" if str(path) == STDIN else path
    data = read_input_bytes(path)
    if not data.strip():
        raise InputError("file is empty", path=shown)
    text = decode_text(data, shown)
    if not text.strip():
        raise InputError("file is empty", path=shown)
    return text


def allow_large_csv_fields() -> None:
    """Let the csv module read cells as large as an input may be (its default stops at 128 KiB, less than a
    long reasons cell or a pasted full text); the limit is process-wide in Python."""
    import csv

    csv.field_size_limit(max(csv.field_size_limit(), MAX_INPUT_BYTES))


def _mend(value, mended: list[int]):
    """`value` with every lone surrogate (a `\\ud800` escape without its pair: not text, and no UTF-8 can
    hold it) replaced by U+FFFD; `mended` counts them."""
    if isinstance(value, str):
        found = len(_LONE_SURROGATE.findall(value))
        if found:
            mended[0] += found
            return _LONE_SURROGATE.sub("\ufffd", value)
        return value
    if isinstance(value, list):
        return [_mend(item, mended) for item in value]
    if isinstance(value, dict):
        return {_mend(key, mended): _mend(item, mended) for key, item in value.items()}
    return value


def _mended(value, text: str, mended: list[int]):
    """`_mend` only for a text that holds a surrogate escape at all (most never do)."""
    return _mend(value, mended) if _SURROGATE_ESCAPE.search(text) else value


def _first_lone_line(text: str) -> int:
    """The line of the first surrogate escape that is not half of a pair (the one a warning names)."""
    for match in _SURROGATE_ESCAPE.finditer(text):
        code = int(match.group()[2:], 16)
        after = text[match.end():match.end() + 6]
        before = text[max(0, match.start() - 6):match.start()]
        paired = (code < 0xDC00 and _SURROGATE_ESCAPE.fullmatch(after) and int(after[2:], 16) >= 0xDC00
                  or code >= 0xDC00 and _SURROGATE_ESCAPE.fullmatch(before) and int(before[2:], 16) < 0xDC00)
        if not paired:
            return text.count("\n", 0, match.start()) + 1
    return 1


def _warn_mended(path: str | Path, line: int, count: int) -> None:
    log.warning("%s:%d: %s not text (a lone surrogate escape such as \\ud800); read as U+FFFD", path, line,
                "1 character is" if count == 1 else f"{count} characters are")


def load_json(text: str, path: str | Path, what: str):
    """JSON text → data; invalid or absurdly nested JSON is one InputError naming the file (and line); lone
    surrogates are read as U+FFFD with one warning naming the line of the first."""
    import json

    mended = [0]
    try:
        data = _mended(json.loads(text), text, mended)
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON ({error.msg})", path=path, line=error.lineno) from None
    except RecursionError:
        raise InputError(f"JSON nested too deeply to be {what}", path=path) from None
    if mended[0]:
        _warn_mended(path, _first_lone_line(text), mended[0])
    return data


def json_lines(text: str, path: str | Path):
    """(line number, object or None, why it is not one) for each non-blank line of a JSON Lines text. A line
    over MAX_JSON_LINE_CHARS is not parsed (a 200 MB line took 3.7 GB), a broken or too deeply nested one
    is named, never a traceback; lone surrogates are read as U+FFFD, with one warning for the file."""
    import json

    mended, first = [0], 0
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):  # not splitlines: U+2028 is text
        if not line.strip():
            continue
        if len(line) > MAX_JSON_LINE_CHARS:
            yield number, None, (f"a line of {len(line) / 2**20:.0f} Mi characters, over the "
                                 f"{MAX_JSON_LINE_CHARS >> 20} Mi read as one record")
            continue
        before = mended[0]
        try:
            row = _mended(json.loads(line), line, mended)
        except json.JSONDecodeError as error:
            yield number, None, f"not valid JSON ({error.msg})"
            continue
        except RecursionError:
            yield number, None, "not valid JSON (nested too deeply)"
            continue
        first = first or (number if mended[0] > before else 0)
        yield (number, row, "") if isinstance(row, dict) else (number, None, "not a JSON object")
    if mended[0]:
        _warn_mended(path, first, mended[0])
