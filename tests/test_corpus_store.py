"""Stored corpora: names, versions, atomic writes, the last good corpus kept, `corpus info`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from recommender.corpus.catalog import describe_corpus, list_corpora
from recommender.corpus.readers import load_corpus
from recommender.corpus.store import (
    FORMAT_VERSION,
    CorpusStoreError,
    read_stored,
    resolve_corpus_path,
    save_corpus,
    stored_path,
)
from recommender.errors import InputError
from zotero_bridge.cli.main import cli

ROWS = [
    {"id": "a1", "title": "Breaking the $n^{1.5}$ Barrier", "abstract": "We break it.", "authors": ["Martı́n Soto"],
     "url": "https://proceedings.mlr.press/v267/a25a.html", "openreview_id": "a1", "presentation": "oral"},
    {"id": "b2", "title": "Title Only", "abstract": None, "authors": [], "url": None},
]
PROVENANCE = {"fetched_at": "2026-11-30T12:00:00+00:00", "sources": [{"kind": "bibtex", "location": "x.bib"}],
              "counts": {"duplicates_dropped": 2, "with_abstracts": 1, "with_authors": 1}}


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def test_saved_corpus_is_used_by_name_with_clean_text(data_dir):
    path = save_corpus("icml2025", ROWS, PROVENANCE)
    assert path == data_dir / "corpora" / "icml2025.json"
    document = json.loads(path.read_text())
    assert document["format_version"] == FORMAT_VERSION and document["fetched_at"] == PROVENANCE["fetched_at"]
    papers = load_corpus(["icml2025"]).papers
    assert [p.title for p in papers] == ["Breaking the n^1.5 Barrier", "Title Only"]
    assert papers[0].authors == ("Martín Soto",) and papers[0].metadata["presentation"] == "oral"
    assert papers[1].abstract is None
    assert not list(path.parent.glob(".*.tmp"))  # the temporary file was renamed, not left behind


def test_an_existing_path_wins_over_a_stored_name(tmp_path, monkeypatch):
    save_corpus("icml2025", ROWS, PROVENANCE)
    local = tmp_path / "work"
    local.mkdir()
    (local / "icml2025").write_text("not a corpus")
    monkeypatch.chdir(local)
    assert resolve_corpus_path("icml2025").resolve() == (local / "icml2025").resolve()


def test_unknown_name_says_what_is_stored_and_how_to_fetch():
    save_corpus("icml2025", ROWS, PROVENANCE)
    with pytest.raises(InputError, match=r"stored: icml2025\); fetch it with `zotrec corpus fetch neurips2025`"):
        load_corpus(["neurips2025"])


def test_a_file_from_a_newer_zotrec_is_refused_clearly():
    path = save_corpus("icml2025", ROWS, PROVENANCE)
    document = json.loads(path.read_text())
    document.update(format_version=FORMAT_VERSION + 1, zotrec_version="9.0.0")
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match="written by zotrec 9.0.0 .*upgrade zotrec or fetch the corpus again"):
        load_corpus(["icml2025"])
    result = CliRunner().invoke(cli, ["corpus", "info", "icml2025"])
    assert result.exit_code == 1 and result.output.startswith("Error: ") and "Traceback" not in result.output


def test_a_cut_short_stored_file_is_one_error_line():
    path = save_corpus("icml2025", ROWS, PROVENANCE)
    path.write_text(path.read_text()[:200])
    with pytest.raises(InputError, match="icml2025.json:"):
        read_stored(path)


def test_a_much_smaller_corpus_does_not_replace_the_stored_one():
    save_corpus("icml2025", ROWS * 10, PROVENANCE)
    with pytest.raises(CorpusStoreError, match="kept the stored one"):
        save_corpus("icml2025", ROWS, PROVENANCE)
    assert len(read_stored(stored_path("icml2025")).papers) == 20
    save_corpus("icml2025", ROWS, PROVENANCE, allow_shrink=True)
    assert len(read_stored(stored_path("icml2025")).papers) == 2


def test_bad_names_are_refused():
    with pytest.raises(InputError, match="corpus name"):
        save_corpus("../escape", ROWS, PROVENANCE)


def test_info_and_list_count_papers_abstracts_authors_duplicates_source_date():
    save_corpus("icml2025", ROWS, PROVENANCE)
    info = describe_corpus("icml2025")
    assert (info.papers, info.with_abstracts, info.with_authors, info.duplicates_dropped) == (2, 1, 1, 2)
    assert info.source == "x.bib" and info.date == PROVENANCE["fetched_at"]
    [listed] = list_corpora()
    assert (listed.name, listed.papers, listed.with_abstracts) == ("icml2025", 2, 1)
    result = CliRunner().invoke(cli, ["corpus", "info", "icml2025", "--format", "json"])
    assert json.loads(result.output)[0]["with_authors"] == 1


def test_info_shows_a_header_s_escape_sequence_as_text_not_to_the_terminal():
    provenance = {**PROVENANCE, "sources": [{"kind": "bibtex", "location": "x.bib\x1b]0;owned\x07\x1b[2J"}]}
    save_corpus("icml2025", ROWS, provenance)
    table = CliRunner().invoke(cli, ["corpus", "info", "icml2025"])
    assert table.exit_code == 0 and "\x1b" not in table.output and "\x07" not in table.output
    assert "source: x.bib ]0;owned  [2J" in table.output
    listed = CliRunner().invoke(cli, ["corpus", "info", "icml2025", "--format", "json"])
    assert "\x1b" not in listed.output
    assert json.loads(listed.output)[0]["source"] == provenance["sources"][0]["location"]  # the data kept, escaped


def test_info_on_a_plain_file_uses_its_counts(tmp_path):
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in [*ROWS, ROWS[0]]), encoding="utf-8")
    info = describe_corpus(corpus)
    assert (info.papers, info.duplicates_dropped, info.source) == (2, 1, str(corpus))
    assert info.date.endswith("(file date)")


def test_list_with_nothing_stored_says_how_to_fetch():
    result = CliRunner().invoke(cli, ["corpus", "list"])
    assert result.exit_code == 0 and "zotrec corpus fetch icml2025" in result.output


def test_stored_corpora_are_private_under_umask_zero(data_dir):
    import os
    import stat

    from recommender.corpus.store import save_corpus, stored_path

    old = os.umask(0)
    try:
        saved = save_corpus("mine", [{"id": "a", "title": "T"}], {})
    finally:
        os.umask(old)
    assert saved == stored_path("mine") and stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert stat.S_IMODE(data_dir.stat().st_mode) == stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
