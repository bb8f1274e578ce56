"""Recommendations → files Zotero imports without an API key: BibTeX, RIS and CSL-JSON, reasons included.

In Zotero: File → Import…, pick the file, tick "Place imported collections and items into new collection".
The reasons ("Because you saved …") go where each importer keeps them: the BibTeX `note` and RIS `N1`
become a child note, the CSL-JSON `note` becomes the item's Extra field. Our own importer
(`library_files.read_library_file`) reads back the same titles, authors, abstracts, DOIs and URLs.
"""

from __future__ import annotations

from recommender.errors import SettingError
import json
import logging
import re
from collections.abc import Sequence

from recommender.formats.output import safe_json, safe_text
from recommender.items import Paper, Recommendation
from recommender.words import capitalised, more_reasons

log = logging.getLogger(__name__)

EXPORT_FORMATS = ("bibtex", "ris", "csljson")
EXPORT_SUFFIXES = {"bibtex": ".bib", "ris": ".ris", "csljson": ".json"}
EXPORT_TAG = "zotrec"
_CONFERENCE = re.compile(r"\b(ICML|NeurIPS|NIPS|ICLR|CVPR|ICCV|ECCV|ACL|EMNLP|NAACL|AAAI|IJCAI|KDD|"
                         r"UAI|AISTATS|COLT|SIGIR|WWW|Conference|Proceedings|Workshop|Symposium)\b", re.I)
# A bare ^ reads back fine. BibTeX counts braces even after a backslash, so \{ \} only when balanced.
_BIBTEX_SPECIALS = {"\\": r"{\textbackslash}", "{": r"\{", "}": r"\}", "$": r"\$",
                    "%": r"\%", "&": r"\&", "#": r"\#", "_": r"\_", "~": r"{\textasciitilde}"}
_UNBALANCED_BRACES = {"{": r"{\textbraceleft}", "}": r"{\textbraceright}"}
_BIBTEX_ESCAPE = re.compile("|".join(re.escape(c) for c in _BIBTEX_SPECIALS))
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_:.-]+")


def render_export(recs: Sequence[Recommendation], fmt: str) -> str:
    """The text of an import file in `fmt` (one of EXPORT_FORMATS)."""
    # control characters from a corpus would make the file unreadable as text (Zotero's import and ours
    # refuse NUL), and an escape sequence or a bidi override must not reach whoever views the file
    if fmt == "bibtex":
        return safe_text(to_bibtex(recs))
    if fmt == "ris":
        return safe_text(to_ris(recs))
    if fmt == "csljson":
        return safe_json(to_csljson(recs))
    raise SettingError(f"unknown export format '{fmt}' (use {', '.join(EXPORT_FORMATS)})")


def reasons_note(rec: Recommendation) -> str:
    """One line for the note/Extra field: rank, score, the library items that led to the paper, then the
    interest it serves, its authors in the library and the --prefer texts it matches (when it has them)."""
    because = "; ".join(f"{r.item_title} ({r.similarity:.2f})" for r in rec.reasons)
    shown = "" if rec.match is None else f" {rec.match}% match" + (" (weak)." if rec.weak else ".")
    line = f"Recommended by zotrec: rank {rec.rank}, score {rec.score:.4f}.{shown}"
    line = f"{line} Because you saved: {because}" if because else line
    more = [capitalised(reason) + "." for reason in more_reasons(rec)]
    if not more:
        return line  # a list without issue 25's reasons: the note it always had
    return " ".join([line + ("." if because else ""), *more])


def split_name(name: str) -> tuple[str, str]:
    """'Ada King Lovelace' → ('Lovelace', 'Ada King'); a one-word name is all family name."""
    first, _, last = name.strip().rpartition(" ")
    return last, first


def is_conference(paper: Paper) -> bool:
    return bool(_CONFERENCE.search(paper.venue or ""))


def _entry_key(paper: Paper, used: set[str]) -> str:
    key = _KEY_UNSAFE.sub("-", paper.id).strip("-") or "paper"
    candidate, number = key, 2
    while candidate in used:
        candidate, number = f"{key}-{number}", number + 1
    used.add(candidate)
    return candidate


def bibtex_escape(text: str) -> str:
    """Plain Unicode → BibTeX-safe text: specials escaped, non-ASCII left as UTF-8 (Zotero reads it)."""
    specials = _BIBTEX_SPECIALS if _balanced(text) else {**_BIBTEX_SPECIALS, **_UNBALANCED_BRACES}
    return _BIBTEX_ESCAPE.sub(lambda m: specials[m.group(0)], " ".join(text.split()))


def _verbatim(text: str) -> str:
    """A DOI or URL as BibTeX keeps it verbatim: a brace or backslash in it, which would end the field or the
    entry early, percent-encoded (as a link may be)."""
    return re.sub(r"[{}\\]", lambda match: f"%{ord(match.group()):02X}", " ".join(text.split()))


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def to_bibtex(recs: Sequence[Recommendation]) -> str:
    from bibtexparser.bibdatabase import BibDatabase
    from bibtexparser.bwriter import BibTexWriter

    database, used = BibDatabase(), set()
    for rec in recs:
        paper = rec.paper
        entry = {"ENTRYTYPE": "inproceedings" if is_conference(paper) else "article",
                 "ID": _entry_key(paper, used), "title": bibtex_escape(paper.title),
                 "note": bibtex_escape(reasons_note(rec)), "keywords": EXPORT_TAG}
        if paper.authors:
            entry["author"] = " and ".join(bibtex_escape(", ".join(p for p in split_name(a) if p))
                                           for a in paper.authors)
        if paper.abstract:
            entry["abstract"] = bibtex_escape(paper.abstract)
        if paper.venue:
            entry["booktitle" if is_conference(paper) else "journal"] = bibtex_escape(paper.venue)
        if paper.year:
            entry["year"] = str(paper.year)
        if paper.doi:
            entry["doi"] = _verbatim(paper.doi)
        if paper.url:
            entry["url"] = _verbatim(paper.url)
        database.entries.append(entry)
    writer = BibTexWriter()
    writer.order_entries_by = None  # keep the ranking order
    writer.indent = "  "
    return writer.write(database)


def to_ris(recs: Sequence[Recommendation]) -> str:
    import rispy

    records = []
    for rec in recs:
        paper = rec.paper
        record = {"type_of_reference": "CONF" if is_conference(paper) else "JOUR", "id": paper.id,
                  "title": paper.title, "notes": [reasons_note(rec)], "keywords": [EXPORT_TAG],
                  "authors": [", ".join(p for p in split_name(a) if p) for a in paper.authors]}
        if paper.abstract:
            record["abstract"] = paper.abstract
        if paper.venue:
            record["secondary_title"] = paper.venue
        if paper.year:
            record["year"] = str(paper.year)
        if paper.doi:
            record["doi"] = paper.doi
        if paper.url:
            record["urls"] = [paper.url]
        records.append({key: _one_line(value) for key, value in record.items()})
    return rispy.dumps(records, implementation=_plain_ris_writer()) if records else ""


def _plain_ris_writer():
    import rispy

    class PlainRisWriter(rispy.RisWriter):
        """rispy numbers the records ("1.") between them; Zotero needs nothing but tags."""

        def set_header(self, count: int) -> str:
            return ""

    return PlainRisWriter


def _one_line(value):
    """RIS is line-based: a line break inside a value would start a bogus tag."""
    if isinstance(value, list):
        return [" ".join(str(v).split()) for v in value]
    return " ".join(str(value).split())


def to_csljson(recs: Sequence[Recommendation]) -> str:
    rows = []
    for rec in recs:
        paper = rec.paper
        kind = "paper-conference" if is_conference(paper) else "article-journal"
        row: dict = {"id": paper.id, "type": kind, "title": paper.title, "note": reasons_note(rec),
                     "keyword": EXPORT_TAG}
        authors = []
        for name in paper.authors:
            family, given = split_name(name)
            authors.append({"family": family, "given": given} if given else {"literal": family})
        if authors:
            row["author"] = authors
        if paper.abstract:
            row["abstract"] = paper.abstract
        if paper.venue:
            row["container-title"] = paper.venue
        if paper.year:
            row["issued"] = {"date-parts": [[paper.year]]}
        if paper.doi:
            row["DOI"] = paper.doi
        if paper.url:
            row["URL"] = paper.url
        rows.append(row)
    return json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
