"""Import files for Zotero (BibTeX, RIS, CSL-JSON): well-formed, reasons included, and our importer reads them back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from recommender.items import Paper, Reason, Recommendation
from recommender.text import clean_text
from tests import zotero_db
from zotero_bridge.cli.main import cli
from zotero_bridge.render.export import EXPORT_FORMATS, EXPORT_SUFFIXES, _balanced, render_export, split_name
from zotero_bridge.sources.files import read_library_file

PAPERS = [
    Paper(id="icml2025:Xy_12", title="Über-parameterised Networks: 50% Fewer Steps & $O(n^2)$ Costs #1 {really}",
          abstract="We cut training cost by 50% (see https://x.org/a_b?c=1&d=2); the bound is x^2 ~ y_i.",
          authors=("Łukasz Kaiser", "Jean-Pierre de la Fontaine", "Plato", "明 王", "Zoë O'Neil-Smith"),
          url="https://openreview.net/forum?id=Xy_12&noteId=3", doi="10.48550/arXiv.2501.00001", year=2025,
          venue="ICML 2025"),
    Paper(id="journal paper 2", title="A Title Only Paper", abstract=None, authors=(), year=None,
          venue="Journal of Machine Learning Research"),
    Paper(id="icml2025:Xy_12", title="Same id, different paper", abstract="Keys must stay unique.",
          authors=("Ada Lovelace",), year=2024, venue=""),
]


def recommendations(papers=PAPERS):
    return [Recommendation(paper=paper, score=0.9 - rank / 10, rank=rank,
                           reasons=(Reason("ATTN2017", "Attention Is All You Need", 0.61),
                                    Reason("DLBOOK16", "Deep Learning", 0.3)))
            for rank, paper in enumerate(papers, start=1)]


def read_back(text: str, fmt: str, folder: Path):
    path = folder / f"recommendations{EXPORT_SUFFIXES[fmt]}"
    path.write_text(text, encoding="utf-8")
    items, skipped = read_library_file(path)
    assert skipped == []
    return items


def assert_same(papers, items, *, exact_text: bool = True):
    assert len(items) == len(papers)
    for paper, item in zip(papers, items):
        expected_title = paper.title if exact_text else clean_text(paper.title)
        expected_abstract = (paper.abstract or "") if exact_text else clean_text(paper.abstract)
        assert item.title == expected_title
        assert item.abstract == expected_abstract
        assert [c.name for c in item.creators] == list(paper.authors)
        assert (item.doi, item.url, item.year) == (paper.doi, paper.url, paper.year)
        assert "Because you saved: Attention Is All You Need (0.61); Deep Learning (0.30)" in item.extra


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_round_trip_reads_back_the_same_papers(fmt, tmp_path):
    items = read_back(render_export(recommendations(), fmt), fmt, tmp_path)
    # BibTeX escapes every special character, so even LaTeX-looking titles come back as they were;
    # RIS and CSL-JSON carry plain text, which our importer (like every reader) cleans of stray LaTeX.
    assert_same(PAPERS, items, exact_text=fmt == "bibtex")
    assert items[0].tags == ("zotrec",)


_TEXT = st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"],
                              exclude_characters="\u2028\u2029"), min_size=1, max_size=60)
_NAME_PART = st.text(st.characters(categories=["L"]), min_size=1, max_size=12)


@st.composite
def papers(draw):
    """Papers as our corpus readers produce them: text already cleaned (a fixed point of clean_text)."""
    title, abstract = draw(_TEXT), draw(st.none() | _TEXT)
    assume(clean_text(title) == title and (abstract is None or clean_text(abstract) == abstract))
    # A lone brace is written as {\textbraceleft}, which Zotero reads but pylatexenc (our importer) drops.
    assume(_balanced(title) and _balanced(abstract or ""))
    names = draw(st.lists(st.lists(_NAME_PART, min_size=1, max_size=3).map(" ".join), max_size=4))
    assume(all(clean_text(n) == n and "and" not in n.split() for n in names))
    return Paper(id=draw(st.text(min_size=1, max_size=20)), title=title, abstract=abstract, authors=tuple(names),
                 url=draw(st.sampled_from(["", "https://openreview.net/forum?id=a_b&x=1%20y"])),
                 doi=draw(st.sampled_from(["", "10.1000/a_b-(c)"])), year=draw(st.none() | st.integers(1900, 2030)),
                 venue=draw(st.sampled_from(["", "ICML 2025", "Nature"])))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.filter_too_much])
@given(st.lists(papers(), min_size=1, max_size=3))
def test_round_trip_property(tmp_path, batch):
    for fmt in EXPORT_FORMATS:
        assert_same(batch, read_back(render_export(recommendations(batch), fmt), fmt, tmp_path))


def test_bibtex_is_what_zotero_imports():
    text = render_export(recommendations(), "bibtex")
    keys = re.findall(r"^@(\w+)\{([^,]+),$", text, re.MULTILINE)
    assert [kind for kind, _ in keys] == ["inproceedings", "article", "article"]
    assert len({key for _, key in keys}) == 3 and all(re.fullmatch(r"[A-Za-z0-9_:.-]+", k) for _, k in keys)
    assert r"50\% Fewer Steps \& \$O(n^2)\$ Costs \#1 \{really\}" in text
    assert "journal = {Journal of Machine Learning Research}" in text and "booktitle = {ICML 2025}" in text
    assert "author = {Kaiser, Łukasz and Fontaine, Jean-Pierre de la and Plato and 王, 明" in text


def test_lone_brace_keeps_the_bibtex_file_readable(tmp_path):
    paper = Paper(id="p", title="Sets like {x | x > 0", abstract="A closing } alone.", authors=("Ada Lovelace",))
    text = render_export(recommendations([paper]), "bibtex")
    assert r"{\textbraceleft}x" in text and r"{\textbraceright} alone" in text
    items = read_back(text, "bibtex", tmp_path)
    assert items[0].title == "Sets like x | x > 0"  # the file parses; only the stray brace is lost here


def test_ris_is_only_tags():
    text = render_export(recommendations(), "ris")
    lines = [line for line in text.splitlines() if line.strip()]
    assert all(re.match(r"^[A-Z][A-Z0-9]  - ", line) or line == "ER  -" or line.startswith("ER  - ") for line in lines)
    assert lines[0] == "TY  - CONF" and text.count("TY  - ") == text.count("ER  - ") == 3
    assert "N1  - Recommended by zotrec: rank 1" in text and "AU  - Kaiser, Łukasz" in text


def test_csljson_shape():
    rows = json.loads(render_export(recommendations(), "csljson"))
    assert [row["type"] for row in rows] == ["paper-conference", "article-journal", "article-journal"]
    assert rows[0]["author"][2] == {"literal": "Plato"} and rows[0]["issued"] == {"date-parts": [[2025]]}
    assert rows[0]["note"].startswith("Recommended by zotrec: rank 1, score 0.8000.")


def test_split_name():
    assert split_name("Jean-Pierre de la Fontaine") == ("Fontaine", "Jean-Pierre de la")
    assert split_name("Plato") == ("Plato", "")


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown export format 'endnote'"):
        render_export([], "endnote")


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_cli_writes_an_import_file_with_the_reading_list(fmt, tmp_path):
    if not zotero_db.schema_available():
        pytest.skip("../shared/fixtures/zotero-schema is not here")
    database = zotero_db.build_sample_library(tmp_path / "zotero.sqlite")
    base = ["-q", "reading-list", "--library", str(database), "-n", "5", "--features", "tfidf"]
    listing = CliRunner().invoke(cli, [*base, "--format", "json"])
    assert listing.exit_code == 0, listing.output
    output = tmp_path / f"icml2025{EXPORT_SUFFIXES[fmt]}"
    result = CliRunner().invoke(cli, [*base, "--format", fmt, "-o", str(output)])
    assert result.exit_code == 0, result.output
    items, skipped = read_library_file(output)
    expected = json.loads(listing.stdout)
    assert not skipped and len(items) == len(expected) == 5
    assert [clean_text(i.title) for i in items] == [clean_text(row["title"]) for row in expected]
    assert all("Because you saved:" in item.extra for item in items)
