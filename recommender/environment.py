"""Numbers zotrec reads from the environment (`ZOTREC_DEADLINE_S`, `COLUMNS`, `LINES`): a value that is not a
positive number within its range is one warning naming the variable, then the default, never a silent
fallback or a traceback (`COLUMNS=99999999999999999999` once overflowed the table renderer)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

log = logging.getLogger(__name__)

_WARNED: set[tuple[str, str]] = set()  # each bad value is said once per process, however often it is read
MAXIMUM = {"COLUMNS": 10_000, "LINES": 10_000, "ZOTREC_DEADLINE_S": 86_400.0}  # a terminal, a day
DEFAULT_MAXIMUM = 1e9
TERMINAL_SIZE = ("COLUMNS", "LINES")


def positive_number(name: str, default: float, kind: Callable[[str], float] = float) -> float:
    """`$name` as a positive `kind` (float or int) up to its MAXIMUM, or `default` when unset, blank or
    invalid (warned once)."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    value = _parsed(raw, kind)
    if value is not None and 0 < value <= MAXIMUM.get(name, DEFAULT_MAXIMUM):
        return value
    _warn(name, raw, kind, default)
    return default


def _parsed(raw: str, kind: Callable[[str], float]) -> float | None:
    try:
        value = kind(raw.strip())
    except (ValueError, OverflowError):
        return None
    return value if value == value else None  # NaN


def _warn(name: str, raw: str, kind: Callable[[str], float], default: object) -> None:
    if (name, raw) in _WARNED:
        return
    _WARNED.add((name, raw))
    shown = raw if len(raw) <= 40 else raw[:40] + "…"
    top = MAXIMUM.get(name, DEFAULT_MAXIMUM)
    log.warning("%s=%r is not a positive %s up to %s; using %s", name, shown,
                "whole number" if kind is int else "number", f"{top:g}", default)


def drop_bad_terminal_size() -> None:
    """Unset a COLUMNS or LINES that is not a whole number from 1 to 10,000 (one warning each), so that
    nothing — our tables, rich, shutil — sizes output by it: the terminal's own size is used instead."""
    for name in TERMINAL_SIZE:
        raw = os.environ.get(name)
        if raw is None or not raw.strip():
            continue
        value = _parsed(raw, int)
        if value is None or not 0 < value <= MAXIMUM[name]:
            _warn(name, raw, int, "the terminal's size")
            del os.environ[name]
