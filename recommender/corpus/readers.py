"""Corpus files → papers: the seed format, JSON Lines, CSV and BibTeX, de-duplicated across files."""

from __future__ import annotations

import csv
import io
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from recommender.corpus.store import json_rows, resolve_corpus_path
from recommender.errors import InputError
from recommender.formats.bibtex import parse_bibtex
from recommender.formats.textfile import allow_large_csv_fields, json_lines, read_text
from recommender.items import Paper, Skipped
from recommender.text import clean_text, derived_title, doi_key, text_id, title_key

log = logging.getLogger(__name__)

MAX_ABSTRACT_CHARS = 20_000
_KNOWN_KEYS = {"id", "title", "abstract", "authors", "url", "doi", "year", "venue"}


@dataclass
class CorpusLoad:
    """Papers read from one or more files, with what was skipped or merged as duplicates."""

    papers: list[Paper] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    duplicates: int = 0
    enriched: int = 0  # untitled abstracts merged into the titled papers they are (see enrich.py)
    fetched: int = 0  # papers read from the fetched corpus that enriches the others (default.py)
    fetched_enriched: int = 0  # papers that took an abstract, links or a presentation type from it
    fetched_added: int = 0  # fetched papers that matched none of the others, added as they are

    def fetch_counts(self) -> dict[str, int]:
        """What the fetched corpus did ({} when none was read): papers it enriched, papers it added."""
        return {"enriched": self.fetched_enriched, "added": self.fetched_added} if self.fetched else {}


def corpus_format(path: Path) -> str:
    """The format name for a corpus file, from its extension (seed files are plain .txt)."""
    suffix = path.suffix.lower()
    formats = {".txt": "seed", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".bib": "bibtex",
               ".json": "json"}
    if suffix not in formats:
        raise InputError(
            f"unknown corpus format '{suffix or '(none)'}' (use .txt seed, .jsonl, .json, .csv or .bib)",
            path=path,
        )
    return formats[suffix]


def load_corpus(paths: Iterable[str | Path], enrich_with: Iterable[str | Path] = ()) -> CorpusLoad:
    """Read every corpus file (or stored corpus name) and de-duplicate papers across them.

    The first occurrence wins, except that a titled paper takes the place of an untitled copy.
    Papers of `enrich_with` (a fetched corpus) fill in what the papers of `paths` lack, matched by id,
    and are added where none matches (default.py). Untitled abstracts (seed files) are then matched
    to the titled papers they are (enrich.py).
    """
    from recommender.corpus.default import enrich_by_id
    from recommender.corpus.enrich import enrich_untitled

    result = _read_files(paths)
    try:
        fetched = _read_files(enrich_with)
    except InputError as error:  # a damaged or newer fetch must not leave the user without a way back
        raise InputError(f"{error} (this fetched corpus enriches the default one; `zotrec corpus remove "
                         f"{Path(str(error.path or 'NAME')).stem}` goes back to the bundled list)") from None
    if fetched.papers:
        combined = enrich_by_id(result.papers, fetched.papers)
        result.papers = combined.papers
        result.fetched, result.fetched_enriched, result.fetched_added = (
            len(fetched.papers), combined.enriched, combined.added)
        result.skipped.extend(fetched.skipped)
        result.duplicates += fetched.duplicates + combined.repeated
    result.papers, result.enriched = enrich_untitled(result.papers)
    return result


def _read_files(paths: Iterable[str | Path]) -> CorpusLoad:
    """The papers of `paths`, each once (the first copy wins; a titled copy replaces an untitled one)."""
    result = CorpusLoad()
    seen: dict[str, int] = {}
    for path in map(resolve_corpus_path, paths):
        fmt = corpus_format(path)
        text = read_text(path)
        papers, skipped = _READERS[fmt](text, path)
        result.skipped.extend(skipped)
        if not papers:
            raise InputError("no papers found", path=path)
        for paper in papers:
            keys = _paper_keys(paper)
            if any(key in seen for key in keys):
                result.duplicates += 1
                first = next(seen[key] for key in keys if key in seen)
                if result.papers[first].title_derived and not paper.title_derived:
                    result.papers[first] = paper if paper.abstract else replace(
                        paper, abstract=result.papers[first].abstract)
                    seen.update(dict.fromkeys(_paper_keys(result.papers[first]), first))
                continue
            for key in keys:
                seen[key] = len(result.papers)
            result.papers.append(paper)
    return result


def _paper_keys(paper: Paper) -> list[str]:
    """Identity keys: id, DOI, abstract text and (real) title; any shared key means the same paper."""
    keys = [f"id:{paper.id}"]
    if paper.doi:
        keys.append(f"doi:{doi_key(paper.doi)}")
    if paper.abstract:
        keys.append(f"abstract:{title_key(paper.abstract)}")
    if not paper.title_derived and paper.title:
        keys.append(f"title:{title_key(paper.title)}")
    return keys


def make_paper(
    *,
    where: str,
    id: str = "",
    title: str = "",
    abstract: str | None = None,
    authors: Sequence[str] = (),
    metadata: dict[str, Any] | None = None,
    **fields: Any,
) -> Paper:
    """Build a clean Paper; untitled abstracts get a derived title and a text-based id."""
    abstract = clean_text(abstract) or None
    if abstract and len(abstract) > MAX_ABSTRACT_CHARS:
        log.warning("%s: abstract of %d characters cut to %d", where, len(abstract), MAX_ABSTRACT_CHARS)
        abstract = abstract[:MAX_ABSTRACT_CHARS]
    title = clean_text(title)
    if not title and not abstract:
        raise ValueError("no title and no abstract")
    derived = not title
    if derived:
        title = derived_title(abstract or "")
    year = fields.pop("year", None)
    try:
        year = int(str(year)[:4]) if year not in (None, "") else None
    except ValueError:
        year = None
    clean_fields = {k: clean_text(str(v), latex=False) for k, v in fields.items() if v}
    return Paper(
        id=str(id).strip() or text_id(abstract if derived else title),
        title=title,
        abstract=abstract,
        authors=tuple(a for a in (clean_text(a) for a in authors) if a),
        year=year,
        title_derived=derived,
        metadata=metadata or {},
        **clean_fields,
    )


def _read_seed(text: str, path: Path) -> tuple[list[Paper], list[Skipped]]:
    """The seed format: one header line, then abstracts separated by blank lines."""
    lines = text.splitlines()
    venue = clean_text(lines[0])
    papers: list[Paper] = []
    skipped: list[Skipped] = []
    paragraph: list[str] = []
    start = 0
    for number, line in enumerate([*lines[1:], ""], start=2):
        if line.strip():
            if not paragraph:
                start = number
            paragraph.append(line)
        elif paragraph:
            try:
                papers.append(make_paper(where=f"{path}:{start}", abstract=" ".join(paragraph),
                                         venue=venue, metadata={"source_line": start}))
            except ValueError as error:  # a paragraph of markup only: nothing left to read
                skipped.append(Skipped(f"{path}:{start}", str(error)))
            paragraph = []
    return papers, skipped


def _read_jsonl(text: str, path: Path) -> tuple[list[Paper], list[Skipped]]:
    """JSON Lines: one object per line with id, title, abstract, authors, url, … (extra keys kept)."""
    papers, skipped = [], []
    for number, row, problem in json_lines(text, path):
        if row is None:
            skipped.append(Skipped(f"{path}:{number}", problem))
        else:
            _append_row(row, f"{path}:{number}", papers, skipped)
    return papers, skipped


def _read_csv(text: str, path: Path) -> tuple[list[Paper], list[Skipped]]:
    """CSV with a header row naming at least `title` or `abstract`; authors split on ';'.

    Quoting is read strictly: a stray quote would otherwise open a cell that swallows every later row up to
    the next quote, so a quote that does not close where a cell ends, or a row spanning several lines that
    comes out with another number of cells than the header, is an error naming the line the row starts on.
    """
    allow_large_csv_fields()  # a long abstract or a pasted full text in one cell is over 128 KiB
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    papers, skipped = [], []
    start = 1
    try:
        fields = {name.strip().lower() for name in reader.fieldnames or []}
        if not fields & {"title", "abstract"}:
            raise InputError("CSV header needs a 'title' or 'abstract' column", path=path, line=1)
        start = reader.line_num + 1
        for row in reader:
            if reader.line_num > start and (None in row or None in row.values()):
                raise csv.Error(f"the row runs on to line {reader.line_num} with "
                                f"{len(row) - (None in row) + len(row.get(None) or ())} cells for "
                                f"{len(reader.fieldnames)} columns")
            row = {(k or "").strip().lower(): v for k, v in row.items() if k and isinstance(v, str)}
            authors = row.pop("authors", "") or ""
            row["authors"] = [a.strip() for a in authors.split(";") if a.strip()]
            _append_row(row, f"{path}:{start}", papers, skipped)
            start = reader.line_num + 1
    except csv.Error as error:
        raise InputError(f"not a readable CSV: a quote opened in the row starting here is not closed where a "
                         f"cell ends ({error}); quote the cell whole, doubling any quote inside it",
                         path=path, line=start) from None
    return papers, skipped


def _read_bibtex(text: str, path: Path) -> tuple[list[Paper], list[Skipped]]:
    """BibTeX: title, abstract, author (' and '-separated), url, doi, year, booktitle/journal, openreview.

    A PMLR volume file starts with an @Proceedings entry: it gives year and venue, and is no paper.
    """
    entries, skipped = parse_bibtex(text, path)
    header = next((e for e in entries if e["ENTRYTYPE"] == "proceedings"), {})  # PMLR's volume entry
    papers = []
    for entry in entries:
        if entry["ENTRYTYPE"] == "proceedings":
            continue
        openreview = entry.get("openreview", "").strip()
        forum = f"https://openreview.net/forum?id={openreview}" if re.fullmatch(r"[\w-]+", openreview) else ""
        row = {
            "id": entry["ID"],
            "title": entry.get("title", ""),
            "abstract": entry.get("abstract"),
            "authors": split_bibtex_authors(entry.get("author", "")),
            "url": entry.get("url", "") or forum,
            "doi": entry.get("doi", ""),
            "year": entry.get("year") or header.get("year"),
            "venue": entry.get("booktitle") or entry.get("journal", "") or header.get("booktitle", ""),
        }
        if forum:
            row["openreview_id"] = openreview
        _append_row(row, f"{path}:{entry['_line']}", papers, skipped)
    return papers, skipped


def split_bibtex_authors(value: str) -> list[str]:
    """'Last, First and Other, A.' → ['First Last', 'A. Other']."""
    names = []
    for part in re.split(r"\s+and\s+", value.strip()):
        last, comma, first = part.partition(",")
        names.append(f"{first.strip()} {last.strip()}" if comma else part.strip())
    return [clean_text(n) for n in names if n.strip()]


def _shape_problem(row: dict) -> str | None:
    """Why a row of valid JSON cannot be read as a paper (a field of the wrong type), or None.
    A title that is an object must not become its printed form: the row is skipped with the reason."""
    for key in ("id", "title", "abstract", "url", "doi", "venue", "year"):
        value = row.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int, float))):
            return f"'{key}' is {type(value).__name__}, expected text"
    authors = row.get("authors")
    if authors is not None and not isinstance(authors, str) and not (
            isinstance(authors, list) and all(isinstance(a, str) for a in authors)):
        return "'authors' should be a list of names or one text"
    return None


def _append_row(row: dict, where: str, papers: list[Paper], skipped: list[Skipped]) -> None:
    if (problem := _shape_problem(row)) is not None:
        skipped.append(Skipped(where, problem))
        return
    authors = row.get("authors") or []
    if isinstance(authors, str):
        authors = [a.strip() for a in re.split(r";|\s+and\s+", authors) if a.strip()]
    extra = {k: v for k, v in row.items() if k not in _KNOWN_KEYS and v not in (None, "")}
    try:
        papers.append(
            make_paper(
                where=where,
                id=str(row.get("id") or ""),
                title=str(row.get("title") or ""),
                abstract=row.get("abstract") if isinstance(row.get("abstract"), str) else None,
                authors=[str(a) for a in authors],
                url=row.get("url") or "",
                doi=row.get("doi") or "",
                year=row.get("year"),
                venue=row.get("venue") or "",
                metadata=extra,
            )
        )
    except ValueError as error:
        skipped.append(Skipped(where, str(error)))


def _read_json(text: str, path: Path) -> tuple[list[Paper], list[Skipped]]:
    """A corpus stored by `zotrec corpus fetch` (version-checked), or a JSON list of paper objects."""
    papers: list[Paper] = []
    skipped: list[Skipped] = []
    for number, row in enumerate(json_rows(text, path), start=1):
        _append_row(row, f"{path}: paper {number}", papers, skipped)
    return papers, skipped


_READERS = {"seed": _read_seed, "jsonl": _read_jsonl, "csv": _read_csv, "bibtex": _read_bibtex,
            "json": _read_json}
