"""BibTeX parsing for corpus and library files, reporting entries the parser could not read.

pybtex's low-level scanner reads the file (bibtexparser 1.x's pyparsing grammar is far slower on a
whole PMLR volume, and bibtexparser 2.x cannot be installed beside pyzotero 1.16, which pins < 2). Field names come back lower-case; `ID`,
`ENTRYTYPE` and `_line` (1-based) are added. `@string` macros, `#` concatenation and the month
names are expanded, within bounds: one value (a field or a macro) holds at most MAX_FIELD_CHARS
characters and a file's macro expansions at most MAX_EXPANSION_CHARS in all, so a few hundred bytes of
`@string` macros that double each other cannot expand to gigabytes (the entry or macro over a bound is
skipped, naming its line). A broken entry is reported with its file and line, never dropped silently;
an entry whose key repeats an earlier one is kept (libraries do that; the library reader warns).
"""

from __future__ import annotations

import re
from pathlib import Path

from recommender.items import Skipped

_ENTRY_START = re.compile(r"^[ \t]*@", re.MULTILINE)
_SPACE = re.compile(r"\s*")
_BRACES = re.compile(r"[{}]")
MAX_FIELD_CHARS = 1 << 20  # one field or @string value: 1 Mi characters, far above any abstract
MAX_EXPANSION_CHARS = 64 << 20  # every macro substitution of one file together


def parse_bibtex(text: str, path: str | Path) -> tuple[list[dict], list[Skipped]]:
    """Parse BibTeX text into entry dicts (lower-case field names, `ID`, `ENTRYTYPE`, `_line`).

    Each `@` that starts a line starts a new entry, so a brace left open in one entry (a common
    hand-editing slip) costs that entry alone, as in BibTeX itself, instead of the rest of the file.
    """
    from pybtex.database.input.bibtex import LowLevelParser, month_names
    from pybtex.scanner import PybtexSyntaxError
    from pybtex.utils import CaseInsensitiveDict

    macros = CaseInsensitiveDict(month_names)  # shared by the pieces; the scanner adds each @string
    budget = [MAX_EXPANSION_CHARS]  # shared by the pieces too
    parser_class = _bounded_parser(LowLevelParser, PybtexSyntaxError)
    entries: list[dict] = []
    skipped: list[Skipped] = []
    lines = _LineCounter(text)
    starts = [match.start() for match in _ENTRY_START.finditer(text)]
    for start, end in zip(starts, [*starts[1:], len(text)]):
        line = lines.line_of(start)
        plain = _plain_entry(text[start:end], parser_class)
        if plain is not None:
            command, key, fields = plain
            entry = {}
            for name, value in fields:
                entry.setdefault(name.lower(), " ".join(value.split()))
            entries.append({**entry, "ID": key, "ENTRYTYPE": command.lower(), "_line": line})
            continue
        errors: list[Exception] = []
        parser = parser_class(text[start:end], macros=macros, handle_error=errors.append)
        parser.budget = budget
        for command, body in parser:
            too_large = next((error for error in errors if isinstance(error, parser.TooLarge)), None)
            if too_large is not None:
                name = f"@string '{body[0]}'" if command.lower() == "string" else f"entry '{body[0] or '?'}'"
                skipped.append(Skipped(f"{path}:{line}", f"BibTeX {name}: {too_large.bound}"))
                break
            if command.lower() in ("string", "preamble"):
                continue
            key, fields = body
            if any(isinstance(error, PybtexSyntaxError) for error in errors):  # partial fields are not an item
                skipped.append(Skipped(f"{path}:{line}", f"BibTeX entry '{key or '?'}' could not be parsed", True))
                break
            entry: dict = {}
            for name, values in fields:
                entry.setdefault(name.lower(), " ".join("".join(values).split()))
            entries.append({**entry, "ID": key or "", "ENTRYTYPE": command.lower(), "_line": line})
        else:
            if any(isinstance(error, PybtexSyntaxError) for error in errors):  # nothing came back at all
                key = parser.current_entry_key or "?"
                skipped.append(Skipped(f"{path}:{line}", f"BibTeX entry '{key}' could not be parsed", True))
    return entries, skipped


def _plain_entry(text: str, scanner: type) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(command, key, [(field, value)]) of the common entry, read in one pass with pybtex's own token
    patterns: `@name{key, field = {braced} or 2024, ...}` with nothing after it; None for anything else (an
    `@string`, a macro, `#`, quotes, parentheses, an open brace, a value over the bound), which pybtex's
    token-by-token scanner then reads, errors and bounds included. The scanner cost ~75 µs an entry."""
    space = _SPACE.match
    pos = space(text, text.index("@") + 1).end()
    command = scanner.NAME.match(text, pos)
    if not command or command.group().lower() in ("string", "preamble", "comment"):
        return None
    pos = space(text, command.end()).end()
    if not text.startswith("{", pos):
        return None
    key = scanner.KEY_BRACE.match(text, space(text, pos + 1).end())
    if not key:
        return None
    pos, fields = key.end(), []
    while True:
        pos = space(text, pos).end()
        field = scanner.NAME.match(text, pos)
        if field:
            pos = space(text, field.end()).end()
            if not text.startswith("=", pos):
                return None
            pos = space(text, pos + 1).end()
            if text.startswith("{", pos):
                close = _closing_brace(text, pos)
                if close is None:
                    return None
                value, pos = text[pos + 1:close], close + 1
            else:
                number = scanner.NUMBER.match(text, pos)
                if not number:
                    return None
                value, pos = number.group(), number.end()
            if len(value) > MAX_FIELD_CHARS:
                return None
            pos = space(text, pos).end()  # a '#' here is neither ',' nor '}': the scanner reads it
            fields.append((field.group(), value))
        if not text.startswith(",", pos):
            break
        pos += 1
    if not text.startswith("}", pos) or "@" in text[pos + 1:]:
        return None
    return command.group(), key.group(), fields


def _closing_brace(text: str, start: int) -> int | None:
    """Offset of the brace closing the one at `start`; None when it is not closed or nests over 100 deep
    (pybtex's own limit, whose error the scanner then gives)."""
    close, inner = text.find("}", start + 1), text.find("{", start + 1)
    if close != -1 and (inner == -1 or inner > close):
        return close
    depth = 0
    for brace in _BRACES.finditer(text, start):
        if brace.group() == "{":
            depth += 1
            if depth > 100:
                return None
        else:
            depth -= 1
            if not depth:
                return brace.start()
    return None


def _bounded_parser(base: type, syntax_error: type) -> type:
    """pybtex's scanner with each value's length and the file's macro expansions counted as they grow: a
    value over a bound stops its entry (or @string, which is then not defined) before it is joined."""

    class TooLarge(syntax_error):
        def __init__(self, bound: str, parser) -> None:
            super().__init__(bound, parser)
            self.bound = bound

    class BoundedParser(base):
        budget = [MAX_EXPANSION_CHARS]

        def parse_value(self):  # pybtex's loop, measured
            parts, size = [], 0
            while not parts or self.optional([self.HASH]):
                part = self.parse_value_part()
                size += len(part)
                if size > MAX_FIELD_CHARS:
                    raise TooLarge(f"a value longer than {MAX_FIELD_CHARS >> 20} Mi characters "
                                   "(@string macros that expand without end?)", self)
                parts.append(part)
            self.current_value = parts

        def substitute_macro(self, name):
            value = super().substitute_macro(name)
            self.budget[0] -= len(value)
            if self.budget[0] < 0:
                raise TooLarge(f"the file's @string macros expand to more than {MAX_EXPANSION_CHARS >> 20} Mi "
                               "characters", self)
            return value

    BoundedParser.TooLarge = TooLarge
    return BoundedParser


class _LineCounter:
    """Offsets → 1-based line numbers, counting each stretch of text once (offsets mostly increase)."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def line_of(self, offset: int) -> int:
        if offset < self.offset:
            return self.text.count("\n", 0, offset) + 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line
