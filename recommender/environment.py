"""Numbers zotrec reads from the environment (`ZOTREC_DEADLINE_S`, `COLUMNS`): a value that is not a positive
number is one warning naming the variable, then the default, never a silent fallback or a traceback."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

log = logging.getLogger(__name__)

_WARNED: set[tuple[str, str]] = set()  # each bad value is said once per process, however often it is read


def positive_number(name: str, default: float, kind: Callable[[str], float] = float) -> float:
    """`$name` as a positive `kind` (float or int), or `default` when unset, blank or invalid (warned once)."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = kind(raw.strip())
    except ValueError:
        value = None
    if value is not None and value > 0 and value == value and value != float("inf"):
        return value
    if (name, raw) not in _WARNED:
        _WARNED.add((name, raw))
        shown = raw if len(raw) <= 40 else raw[:40] + "…"
        log.warning("%s=%r is not a positive %s; using %s", name, shown,
                    "whole number" if kind is int else "number", default)
    return default
