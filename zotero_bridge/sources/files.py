"""Zotero export files → library items: BibTeX, RIS, CSL-JSON and JSON Lines."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path

from recommender.errors import InputError
from recommender.formats.bibtex import parse_bibtex
from recommender.formats.textfile import STDIN, json_lines, load_json, read_text
from recommender.items import Creator, LibraryItem, Skipped
from recommender.text import clean_text
from zotero_bridge.sources.zotero_json import (
    FieldShapeError,
    item_from_zotero_json,
    list_of,
    text_of,
    year_of,
)

# Zotero's export type names → its item types (BibTeX and RIS carry their own vocabulary).
BIBTEX_TYPES = {
    "article": "journalArticle", "inproceedings": "conferencePaper", "conference": "conferencePaper",
    "book": "book", "incollection": "bookSection", "inbook": "bookSection", "phdthesis": "thesis",
    "mastersthesis": "thesis", "techreport": "report", "misc": "document", "online": "webpage",
    "unpublished": "manuscript", "patent": "patent",
}
RIS_TYPES = {
    "JOUR": "journalArticle", "CONF": "conferencePaper", "CPAPER": "conferencePaper", "BOOK": "book",
    "CHAP": "bookSection", "THES": "thesis", "RPRT": "report", "ELEC": "webpage", "GEN": "document",
    "UNPB": "manuscript", "PAT": "patent", "EJOUR": "journalArticle", "MGZN": "magazineArticle",
}
CSL_TYPES = {
    "article-journal": "journalArticle", "paper-conference": "conferencePaper", "book": "book",
    "chapter": "bookSection", "thesis": "thesis", "report": "report", "webpage": "webpage",
    "article": "preprint", "manuscript": "manuscript", "article-magazine": "magazineArticle",
}
NON_REGULAR_CSL = {"note", "attachment"}


def library_format(path: Path, text: str = "") -> str:
    """The export format, by suffix; standard input ('-') by its first character (@ BibTeX, [ CSL-JSON, { JSON
    Lines, else RIS)."""
    if str(path) == STDIN:
        start = text.lstrip()[:1]
        return {"@": "bibtex", "[": "csljson", "{": "jsonl"}.get(start, "ris")
    suffix = path.suffix.lower()
    formats = {".bib": "bibtex", ".bibtex": "bibtex", ".ris": "ris", ".json": "csljson",
               ".jsonl": "jsonl", ".ndjson": "jsonl"}
    if suffix not in formats:
        raise InputError(
            f"unknown library format '{suffix or '(none)'}' (use .bib, .ris, .json (CSL-JSON), .jsonl "
            "or .sqlite)",
            path=path,
        )
    return formats[suffix]


def _shape_checked(reader: Callable[[Mapping, str, int], LibraryItem | Skipped]):
    """A field of the wrong type skips that entry with the reason (never a traceback, never a misread)."""
    def read(row: Mapping, where: str, number: int) -> LibraryItem | Skipped:
        try:
            return reader(row, where, number)
        except FieldShapeError as error:
            return Skipped(where, str(error), True)
    return read


def read_library_file(path: str | Path) -> tuple[list[LibraryItem], list[Skipped]]:
    """Read one export file; entries that cannot be used come back as Skipped with a reason."""
    path = Path(path)
    text = read_text(path)  # first, so a missing file, a folder or a device is named as such
    results = _READERS[library_format(path, text)](text, path)
    items = [r for r in results if isinstance(r, LibraryItem)]
    skipped = [r for r in results if isinstance(r, Skipped)]
    return items, skipped


_AND = re.compile(r"\s+and\s+")


def _bibtex_creators(value: str, creator_type: str) -> list[Creator]:
    creators = (_bibtex_creator(part, creator_type) for part in _AND.split(value.strip()))
    return [creator for creator in creators if creator is not None]


@lru_cache(maxsize=1 << 16)
def _bibtex_creator(part: str, creator_type: str) -> Creator | None:
    """One 'Last, First' or 'First Last' name (None for an empty one); cached, as a library names the same
    people again and again and each name's TeX accents go through the LaTeX clean-up."""
    part = clean_text(part)
    if not part:
        return None
    last, comma, first = part.partition(",")
    if comma:
        return Creator(last=last.strip(), first=first.strip(), creator_type=creator_type)
    if " " in part:
        first, _, last = part.rpartition(" ")
        return Creator(last=last, first=first, creator_type=creator_type)
    return Creator(last=part, creator_type=creator_type)


def _read_bibtex(text: str, path: Path) -> list[LibraryItem | Skipped]:
    entries, skipped = parse_bibtex(text, path)
    results: list[LibraryItem | Skipped] = list(skipped)
    for entry in entries:
        where = f"{path}:{entry['_line']}"
        title, abstract = clean_text(entry.get("title")), clean_text(entry.get("abstract"))
        if not title and not abstract:
            results.append(Skipped(where, "empty (no title, no abstract)"))
            continue
        date = entry.get("date") or entry.get("year", "")
        keywords = entry.get("keywords", "")
        results.append(
            LibraryItem(
                key=entry["ID"],
                title=title,
                item_type=BIBTEX_TYPES.get(entry.get("ENTRYTYPE", entry.get("entrytype", "")).lower(), "document"),
                abstract=abstract,
                creators=tuple(_bibtex_creators(entry.get("author", ""), "author")
                               + _bibtex_creators(entry.get("editor", ""), "editor")),
                doi=entry.get("doi", "").strip(),
                url=entry.get("url", "").strip(),
                date=date,
                year=year_of(date),
                date_added=entry.get("timestamp", "") or entry.get("dateadded", ""),
                tags=tuple(t.strip() for t in re.split(r"[,;]", keywords) if t.strip()),
                collections=tuple(c.strip() for c in entry.get("groups", "").split(",") if c.strip()),
                extra=entry.get("note", ""),
                publication=clean_text(entry.get("journal") or entry.get("journaltitle") or entry.get("booktitle")),
                issn=entry.get("issn", "").strip(),
            )
        )
    return results


def _read_ris(text: str, path: Path) -> list[LibraryItem | Skipped]:
    import rispy

    results: list[LibraryItem | Skipped] = []
    # Split by record so that one broken record does not lose the others.
    starts = [m.start() for m in re.finditer(r"^TY  - ", text, re.MULTILINE)]
    if not starts:
        raise InputError("no RIS records (no 'TY  - ' line)", path=path)
    for number, start in enumerate(starts):
        chunk = text[start : starts[number + 1] if number + 1 < len(starts) else len(text)]
        where = f"{path}:{text.count(chr(10), 0, start) + 1}"
        try:
            records = rispy.loads(chunk)
        except Exception as error:  # noqa: BLE001 - rispy raises plain IOError/ValueError variants
            results.append(Skipped(where, f"broken RIS record ({error})", True))
            continue
        if not records or "ER  -" not in chunk:
            results.append(Skipped(where, "broken RIS record (no 'ER  -' end line)", True))
            continue
        results.append(_ris_item(records[0], where, number))
    return results


@_shape_checked
def _ris_item(record: Mapping, where: str, number: int) -> LibraryItem | Skipped:
    title = clean_text(record.get("title") or record.get("primary_title") or "")
    abstract = clean_text(record.get("abstract") or record.get("notes_abstract") or "")
    if not title and not abstract:
        return Skipped(where, "empty (no title, no abstract)")
    creators = []
    for field, kind in (("authors", "author"), ("first_authors", "author"), ("secondary_authors", "editor")):
        creators += _bibtex_creators(" and ".join(record.get(field) or []), kind)
    date = str(record.get("date") or record.get("year") or record.get("publication_year") or "")
    urls = record.get("urls") or []
    return LibraryItem(
        key=str(record.get("id") or f"ris-{number + 1}"),
        title=title,
        item_type=RIS_TYPES.get(str(record.get("type_of_reference", "")).upper(), "document"),
        abstract=abstract,
        creators=tuple(creators),
        doi=str(record.get("doi") or "").strip(),
        url=str(urls[0] if urls else record.get("url") or "").strip(),
        date=date,
        year=year_of(date),
        date_added=str(record.get("access_date") or ""),
        tags=tuple(record.get("keywords") or []),
        extra="\n".join(record.get("notes") or []) if isinstance(record.get("notes"), list) else "",
        publication=clean_text(str(record.get("journal_name") or record.get("secondary_title") or "")),
        issn=str(record.get("issn") or "").strip(),
    )


def _read_csljson(text: str, path: Path) -> list[LibraryItem | Skipped]:
    rows = load_json(text, path, "a library")
    if isinstance(rows, dict):
        rows = rows.get("items", [rows])
    if not isinstance(rows, list):
        raise InputError("CSL-JSON must be a list of items", path=path)
    results: list[LibraryItem | Skipped] = []
    for number, row in enumerate(rows, start=1):
        where = f"{path}: item {number}"
        if not isinstance(row, dict):
            results.append(Skipped(where, "not a JSON object", True))
        elif "itemType" in row or "data" in row:
            results.append(item_from_zotero_json(row, where=where))
        else:
            results.append(_csl_item(row, where, number))
    return results


def _csl_date(issued: object) -> str:
    """CSL 'issued': {'date-parts': [[2020, 5, 1]]} or {'raw': '2020-05'} → '2020-05-01'."""
    if issued is None or issued == "":
        return ""
    if isinstance(issued, (str, int)) and not isinstance(issued, bool):
        return str(issued)
    if not isinstance(issued, Mapping):
        raise FieldShapeError("'issued' should be a CSL date object")
    parts = issued.get("date-parts")
    if parts:
        if not (isinstance(parts, list) and isinstance(parts[0], list)
                and all(isinstance(p, (int, str)) and not isinstance(p, bool) for p in parts[0])):
            raise FieldShapeError("'issued.date-parts' should be a list of [year, month, day] lists")
        pieces = [str(p).strip() for p in parts[0] if str(p).strip()]
        return "-".join(p.zfill(2) if i and p.isdigit() else p for i, p in enumerate(pieces))
    return text_of(issued, "raw")


@_shape_checked
def _csl_item(row: Mapping, where: str, number: int) -> LibraryItem | Skipped:
    kind = text_of(row, "type")
    if kind in NON_REGULAR_CSL:
        return Skipped(where, kind)
    title = clean_text(text_of(row, "title"))
    abstract = clean_text(text_of(row, "abstract"))
    if not title and not abstract:
        return Skipped(where, "empty (no title, no abstract)")
    creators = []
    for field, role in (("author", "author"), ("editor", "editor")):
        for name in list_of(row, field, (dict,)):
            if name.get("literal"):
                creators.append(Creator(last=clean_text(text_of(name, "literal")), creator_type=role))
            else:
                creators.append(Creator(last=clean_text(text_of(name, "family")),
                                        first=clean_text(text_of(name, "given")), creator_type=role))
    date = _csl_date(row.get("issued"))
    return LibraryItem(
        key=(text_of(row, "id") or f"csl-{number}").rsplit("/", 1)[-1],
        title=title,
        item_type=CSL_TYPES.get(kind, "document"),
        abstract=abstract,
        creators=tuple(creators),
        doi=text_of(row, "DOI").strip(),
        url=text_of(row, "URL").strip(),
        date=date,
        year=year_of(date),
        tags=tuple(list_of(row, "keyword")),
        extra=text_of(row, "note"),
        publication=clean_text(text_of(row, "container-title")),
        issn=text_of(row, "ISSN").strip(),
    )


def _read_jsonl(text: str, path: Path) -> list[LibraryItem | Skipped]:
    """One item per line: Zotero API item JSON, or our own flat form (key, title, abstract, …)."""
    results: list[LibraryItem | Skipped] = []
    for number, row, problem in json_lines(text, path):  # bounded lines, named errors
        where = f"{path}:{number}"
        if row is None:
            results.append(Skipped(where, problem, True))
        elif "itemType" in row or "data" in row:
            results.append(item_from_zotero_json(row, where=where))
        else:
            results.append(_flat_item(row, where, number))
    return results


@_shape_checked
def _flat_item(row: Mapping, where: str, number: int) -> LibraryItem | Skipped:
    title = clean_text(text_of(row, "title"))
    abstract = clean_text(text_of(row, "abstract"))
    if not title and not abstract:
        return Skipped(where, "empty (no title, no abstract)")
    creators = []
    field = "creators" if row.get("creators") else "authors"
    names = row.get(field)
    if isinstance(names, str):  # one text: 'Last, First and Other, A.'
        creators += _bibtex_creators(names, "author")
        names = []
    for creator in list_of(row, field, (dict, str)) if names else []:
        if isinstance(creator, Mapping):
            creators.append(Creator(last=clean_text(text_of(creator, "lastName") or text_of(creator, "name")),
                                    first=clean_text(text_of(creator, "firstName"))))
        else:
            creators += _bibtex_creators(creator, "author")
    date = text_of(row, "date") or text_of(row, "year")
    return LibraryItem(
        key=text_of(row, "key") or text_of(row, "id") or f"item-{number}",
        title=title,
        item_type=text_of(row, "item_type") or text_of(row, "itemType") or "journalArticle",
        abstract=abstract,
        creators=tuple(creators),
        doi=text_of(row, "doi") or text_of(row, "DOI"),
        url=text_of(row, "url"),
        date=date,
        year=year_of(date),
        date_added=text_of(row, "date_added") or text_of(row, "dateAdded"),
        tags=tuple(list_of(row, "tags")),
        collections=tuple(list_of(row, "collections")),
        extra=text_of(row, "extra"),
    )


_READERS: dict[str, Callable[[str, Path], list[LibraryItem | Skipped]]] = {
    "bibtex": _read_bibtex, "ris": _read_ris, "csljson": _read_csljson, "jsonl": _read_jsonl,
}
