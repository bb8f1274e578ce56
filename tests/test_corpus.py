"""Corpus readers: the seed format, JSON Lines, CSV, BibTeX, de-duplication and bad input."""

from __future__ import annotations

import json

import pytest

from recommender.corpus.readers import load_corpus
from recommender.errors import InputError
from recommender.text import clean_text, title_key

from .conftest import SEEDS


def test_two_seed_files_hold_31_distinct_papers():
    loaded = load_corpus(SEEDS)
    assert len(SEEDS) == 2
    assert len(loaded.papers) == 31
    assert loaded.duplicates == 38 - 31
    assert len({paper.id for paper in loaded.papers}) == 31


def test_untitled_abstract_gets_readable_title_and_stable_id(tmp_path):
    loaded = load_corpus(SEEDS)
    first = loaded.papers[0]
    assert first.title_derived
    assert first.title.startswith("Normalizing flows are a flexible class")
    assert len(first.title.split()) <= 13
    assert first.metadata["source_line"] == 3
    # The same abstract with other whitespace in another file gets the same id.
    copy = tmp_path / "copy.txt"
    copy.write_text("Header\n\n" + "  ".join(first.abstract.split(" ")) + "\n", encoding="utf-8")
    assert load_corpus([copy]).papers[0].id == first.id


def test_jsonl_keeps_extra_keys_and_reports_bad_lines(tmp_path):
    path = tmp_path / "c.jsonl"
    rows = [
        {"id": "p1", "title": "Flows with $n^{1.5}$ tails", "abstract": "About flows.", "authors": ["A B"],
         "url": "https://x/1", "pdf_url": "https://x/1.pdf"},
        "{not json",
        {"id": "p2", "title": "Only a title", "abstract": None},
        {"id": "p3"},
    ]
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    loaded = load_corpus([path])
    assert [p.id for p in loaded.papers] == ["p1", "p2"]
    assert loaded.papers[0].metadata == {"pdf_url": "https://x/1.pdf"}
    assert loaded.papers[0].title == "Flows with n^1.5 tails"
    assert loaded.papers[1].abstract is None
    assert [s.where for s in loaded.skipped] == [f"{path}:2", f"{path}:4"]


def test_csv_and_bibtex_corpora(tmp_path):
    csv_path = tmp_path / "c.csv"
    csv_path.write_text('id,title,abstract,authors\nc1,"A, title",Some text,"Ann Lee; Bo Chen"\n')
    bib_path = tmp_path / "c.bib"
    bib_path.write_text("@inproceedings{k1, title={{Deep} Nets}, author={Lee, Ann and Chen, Bo},"
                        " abstract={Text.}, year={2025}, booktitle={ICML}}\n")
    loaded = load_corpus([csv_path, bib_path])
    assert [(p.id, p.title) for p in loaded.papers] == [("c1", "A, title"), ("k1", "Deep Nets")]
    assert loaded.papers[0].authors == ("Ann Lee", "Bo Chen")
    assert loaded.papers[1].authors == ("Ann Lee", "Bo Chen")
    assert loaded.papers[1].venue == "ICML" and loaded.papers[1].year == 2025


def test_same_paper_in_two_formats_is_kept_once(tmp_path):
    a = tmp_path / "a.jsonl"
    a.write_text(json.dumps({"id": "x1", "title": "Attention Is All You Need", "abstract": "t"}) + "\n")
    b = tmp_path / "b.csv"
    b.write_text("id,title\nother,Attention is all you need!\n")
    loaded = load_corpus([a, b])
    assert len(loaded.papers) == 1 and loaded.duplicates == 1


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("empty.txt", b"", "file is empty"),
        ("blank.jsonl", b"\n\n  \n", "file is empty"),
        ("noabs.jsonl", b'{"id": "a"}\n', "no papers found"),
        ("bad.csv", b"foo,bar\n1,2\n", "needs a 'title' or 'abstract' column"),
        ("x.pdf", b"%PDF", "unknown corpus format"),
    ],
)
def test_bad_corpus_files_give_one_line_naming_the_file(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as error:
        load_corpus([path])
    assert message in str(error.value)
    assert str(path) in str(error.value)
    assert "\n" not in str(error.value)


def test_missing_corpus_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_corpus([tmp_path / "nope.jsonl"])


def test_non_utf8_bytes_are_read_and_reported(tmp_path, caplog):
    path = tmp_path / "latin.csv"
    path.write_bytes("title,abstract\nCaf\xe9 models,Na\xefve text\n".encode("latin-1"))
    loaded = load_corpus([path])
    assert loaded.papers[0].title == "Café models"
    assert f"{path}:2: not UTF-8" in caplog.text


def test_huge_abstract_is_cut_with_a_warning(tmp_path, caplog):
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"id": "big", "title": "Big", "abstract": "word " * 2_100_000}) + "\n")
    paper = load_corpus([path]).papers[0]
    assert len(paper.abstract) == 20_000
    assert "abstract of" in caplog.text and "cut to 20000" in caplog.text


def test_clean_text_repairs_tex_leftovers_and_latex():
    assert clean_text("Rodr\u0131\u0301guez") == "Rodríguez"
    assert clean_text("Işık") == "Işık"
    assert clean_text("A  {B}ayesian\n view of 50% of $\\ell_1$") == "A Bayesian view of 50% of ℓ_1"
    assert title_key("Breaking the $n^{1.5}$ Barrier") == title_key("breaking the n^1.5 barrier")
