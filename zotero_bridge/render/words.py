"""Counts in words: '1 item', '2 items' — one rule for every count zotrec prints."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """'1 paper', '3 papers', '0 papers'; `many` for a plural that is not noun + 's' ('1 library', '2 libraries')."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"
