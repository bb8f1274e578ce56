"""The one-pass reading of common BibTeX entries gives exactly what pybtex's token-by-token scanner gives:
the same entries, fields, keys, lines and skipped reports, on real entries and on text made to trip it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recommender.formats import bibtex
from recommender.formats.bibtex import parse_bibtex

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "pmlr-v267" / "icml25-sample.bib"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "library.bib"

# pieces that sit on the edges of the one-pass reading: nesting, quotes, macros, '#', parentheses, '@' in text
PIECES = ["@article", "@inproceedings", "@string", "@comment", "@preamble", "@misc(", "{", "}", "{{", "}}", ",",
          " = ", "=", "#", '"', "\n", " ", "\t", "title", "Author", "key1", "2024", "jan", "x@y", "{B}ayes",
          "$x^{2}$", "\\'{e}", "{" * 101, "}" * 101, "month = jan", "year = 2024,", "title = {A {B} c},"]
pieced = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
entries = st.lists(st.tuples(st.sampled_from(["article", "InProceedings", "misc", "string", "comment"]),
                             st.text(alphabet="ab1,{} ", max_size=5),
                             st.lists(st.tuples(st.sampled_from(["title", "Title", "year", "abstract", "x"]),
                                                st.sampled_from(["{A {B} c}", "2024", "jan", '"q"', "{a} # {b}",
                                                                 "{unclosed", "{x}}", "{}", "12ab", "{a@b}"]),
                                                st.sampled_from([",", "", " ,\n", ",,"])), max_size=4),
                             st.sampled_from(["}", "", ")", "}\n@", "} trailing @ text", "}\n\n"])),
                   max_size=4).map(lambda made: "\n".join(
                       f"@{kind}{{{key},\n" + "".join(f"  {name} = {value}{end}" for name, value, end in fields) + tail
                       for kind, key, fields, tail in made))


def _by_scanner(text: str):
    original = bibtex._plain_entry
    bibtex._plain_entry = lambda *_: None
    try:
        return parse_bibtex(text, "lib.bib")
    finally:
        bibtex._plain_entry = original


def _same(text: str) -> None:
    assert parse_bibtex(text, "lib.bib") == _by_scanner(text)


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(pieced, entries))
def test_one_pass_reads_what_the_scanner_reads(text):
    _same(text)


def test_the_common_entry_takes_the_one_pass_and_the_rest_the_scanner():
    parser = bibtex._bounded_parser(*_scanner_classes())
    assert bibtex._plain_entry("@Article{k1,\n title = {A {B} c},\n year = 2024,\n}\n", parser) == (
        "Article", "k1", [("title", "A {B} c"), ("year", "2024")])
    for text in ("@string{a = {b}}", "@article{k, month = jan}", "@article{k, title = {a} # {b}}",
                 '@article{k, title = "q"}', "@article(k, title = {q})", "@article{k, title = {open}",
                 "@article{k, title = {x}} and @misc{j, title = {y}}"):
        assert bibtex._plain_entry(text, parser) is None, text


def test_bounds_still_hold_on_the_one_pass(monkeypatch):
    monkeypatch.setattr(bibtex, "MAX_FIELD_CHARS", 10)
    entries, skipped = parse_bibtex("@article{k, title = {" + "x" * 11 + "}}\n@article{j, title = {short}}\n", "l.bib")
    assert [e["ID"] for e in entries] == ["j"] and skipped[0].where == "l.bib:1"


@pytest.mark.parametrize("depth", [99, 100, 101, 102])
def test_deep_braces_read_as_the_scanner_reads_them(depth):
    _same("@article{k, title = {" + "{" * depth + "x" + "}" * depth + "}}\n@misc{j, title = {y}}\n")


@pytest.mark.parametrize("path", [SAMPLE, EXAMPLE], ids=["pmlr-v267-sample", "examples-library"])
def test_real_files_read_the_same(path):
    if not path.exists():
        pytest.skip(f"{path} is not here (../shared)")
    _same(path.read_text(encoding="utf-8"))


def _scanner_classes():
    from pybtex.database.input.bibtex import LowLevelParser
    from pybtex.scanner import PybtexSyntaxError

    return LowLevelParser, PybtexSyntaxError
