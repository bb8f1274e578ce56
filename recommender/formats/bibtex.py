"""BibTeX parsing for corpus and library files, reporting entries the parser could not read.

bibtexparser 2.x splits a file with regular expressions (the 5.2 MB PMLR volume in about 0.3 s;
1.x with pyparsing took about 28 s). Field names come back lower-case; `ID`, `ENTRYTYPE` and
`_line` (1-based) are added. A broken entry is reported with its file and line, never dropped
silently; an entry whose key repeats an earlier one is kept (libraries do that; the library
reader warns about it).
"""

from __future__ import annotations

import re
from pathlib import Path

from recommender.errors import RecommenderError
from recommender.items import Skipped

_ENTRY_START = re.compile(r"@[ \t]*(\w+)[ \t]*[{(][ \t]*([^,\s]*)")
_STRING_CONCAT = re.compile(r"\s#\s")
_MONTHS = {name[:3].lower(): name for name in ("January", "February", "March", "April", "May", "June", "July",
                                              "August", "September", "October", "November", "December")}


def parse_bibtex(text: str, path: str | Path) -> tuple[list[dict], list[Skipped]]:
    """Parse BibTeX text into entry dicts (lower-case field names, `ID`, `ENTRYTYPE`, `_line`)."""
    import bibtexparser

    if not hasattr(bibtexparser, "parse_string"):  # 1.x left in an environment upgraded in place
        raise RecommenderError(f"reading {path} needs bibtexparser 2.1 or newer (installed: "
                               f"{getattr(bibtexparser, '__version__', '?')}); pip install 'bibtexparser>=2.1,<3'")
    from bibtexparser import model

    library = bibtexparser.parse_string(text)
    found: list[tuple[int, dict]] = []
    skipped: list[tuple[int, Skipped]] = []
    for block in library.failed_blocks:
        entry = block.ignore_error_block if isinstance(block, model.DuplicateBlockKeyBlock) else None
        if isinstance(entry, model.Entry):
            found.append((entry.start_line, _entry_dict(entry, library.strings_dict)))
            continue
        match = _ENTRY_START.search(block.raw or "")
        if match and match.group(1).lower() in ("comment", "preamble"):
            continue
        key = match.group(2) if match else "?"
        line = (block.start_line or 0) + 1
        skipped.append((line, Skipped(f"{path}:{line}", f"BibTeX entry '{key or '?'}' could not be parsed")))
    for entry in library.entries:
        found.append((entry.start_line, _entry_dict(entry, library.strings_dict)))
    found.sort(key=lambda pair: pair[0])
    skipped.sort(key=lambda pair: pair[0])
    return [entry for _, entry in found], [reason for _, reason in skipped]


def _entry_dict(entry, strings: dict) -> dict:
    fields = {}
    for field in entry.fields:
        value = field.value if isinstance(field.value, str) else str(field.value)
        if "#" in value and _STRING_CONCAT.search(value):
            value = _concatenate(value, strings)
        key = field.key.lower()
        if key == "month" and value in _MONTHS:  # BibTeX's predefined month strings (`month = may`)
            value = _MONTHS[value]
        fields.setdefault(key, value)
    return {**fields, "ID": entry.key, "ENTRYTYPE": entry.entry_type.lower(), "_line": entry.start_line + 1}


def _concatenate(value: str, strings: dict) -> str:
    """`name # {text}` (a @string joined to literal text), which the default parse leaves as written."""
    parts = []
    for part in _STRING_CONCAT.split(value):
        part = part.strip()
        if part[:1] in "{\"" and part[-1:] in "}\"":
            parts.append(part[1:-1])
        elif part in strings:
            parts.append(str(strings[part].value))
        else:
            return value  # not a concatenation after all (a '#' inside text)
    return "".join(parts)
