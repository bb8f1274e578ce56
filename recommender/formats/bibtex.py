"""BibTeX parsing for corpus and library files, reporting entries the parser could not read."""

from __future__ import annotations

import re
from pathlib import Path

from recommender.items import Skipped

_ENTRY_START = re.compile(r"^[ \t]*@[ \t]*(\w+)[ \t]*[{(][ \t]*([^,\s]*)", re.MULTILINE)
_NOT_ENTRIES = {"comment", "string", "preamble"}


def parse_bibtex(text: str, path: str | Path) -> tuple[list[dict], list[Skipped]]:
    """Parse BibTeX text into entry dicts (lower-case field names, `ID`, `ENTRYTYPE`, `_line`).

    bibtexparser drops entries it cannot parse without a word, so every `@type{key,` start is
    checked against what came back and the missing ones are reported with their line.
    """
    import bibtexparser
    from bibtexparser.bparser import BibTexParser

    parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False, interpolate_strings=True)
    parser.homogenise_fields = False
    starts = []
    for match in _ENTRY_START.finditer(text):
        if match.group(1).lower() in _NOT_ENTRIES:
            continue
        starts.append((match.group(2), text.count("\n", 0, match.start()) + 1))
    try:
        database = bibtexparser.loads(text, parser=parser)
        entries = list(database.entries)
    except Exception:  # noqa: BLE001 - the parser fails whole on some inputs; report, don't crash
        entries = []
    by_key: dict[str, list[dict]] = {}
    for entry in entries:
        by_key.setdefault(entry.get("ID", ""), []).append(entry)
    found: list[dict] = []
    skipped: list[Skipped] = []
    for key, line in starts:
        candidates = by_key.get(key)
        if candidates:
            entry = candidates.pop(0)
            found.append({**{k.lower(): v for k, v in entry.items()}, "ID": key, "_line": line})
        else:
            skipped.append(Skipped(f"{path}:{line}", f"BibTeX entry '{key or '?'}' could not be parsed"))
    return found, skipped
