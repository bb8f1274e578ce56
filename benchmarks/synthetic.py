"""Synthetic Zotero libraries made of real text (CiteULike-a titles), written as .jsonl for `--library`."""

from __future__ import annotations

import json
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CITEULIKE_TITLES = SHARED / "data" / "citeulike-a" / "titles.txt"


def read_titles(path: Path = CITEULIKE_TITLES) -> list[str]:
    """The 16,980 CiteULike-a titles, in file order (all distinct)."""
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def library_titles(size: int, titles: list[str]) -> list[str]:
    """`size` distinct titles: the real titles first, then pairs of real titles joined by ': '.

    Beyond the 16,980 real titles a library needs new distinct texts (a cache must not get
    them for free); joining two real titles keeps the vocabulary and the length realistic.
    """
    count = len(titles)
    chosen = titles[:size]
    step = 7919  # a prime, so the second title walks the whole list
    index = 0
    while len(chosen) < size:
        first, second = titles[index % count], titles[(index * step + 1) % count]
        chosen.append(f"{first}: {second}")
        index += 1
    return chosen


def write_library(path: Path, size: int, titles: list[str] | None = None) -> Path:
    """Write a flat JSON Lines library (key, title, date_added) with `size` items."""
    rows = library_titles(size, titles if titles is not None else read_titles())
    with path.open("w", encoding="utf-8") as handle:
        for number, title in enumerate(rows):
            handle.write(json.dumps({"key": f"SYN{number:06d}", "title": title,
                                     "date_added": f"2024-01-01T00:00:{number % 60:02d}Z"}) + "\n")
    return path
