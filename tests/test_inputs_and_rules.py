"""Issue 14's wrong reads, noise and inconsistencies, one test each: tags and titles of the wrong type, UTF-16,
binary and nested files, the Zotero data folder, --collection rules, corpus counts, folder corpora, the
evaluate example, the private web cache, -q, retry messages and the deadline."""

from __future__ import annotations

import json
import logging
import os
import stat
import time

import pytest
from click.testing import CliRunner

from recommender.errors import InputError
from zotero_bridge.cli.main import cli
from zotero_bridge.sources import SourceOptions, read_library
from zotero_bridge.sources.files import read_library_file

from .conftest import REPO, ZOTERO_USER_ID, ZOTERO_WRITE_KEY

LIBRARY = REPO / "examples" / "library.bib"


def test_a_text_tag_is_one_tag_and_an_object_title_is_skipped_with_the_reason(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text('{"key": "A", "title": "Flows", "tags": "x"}\n{"key": "B", "title": {"en": "Nope"}}\n'
                    '{"key": "C", "title": "Ok", "tags": "a, b; c", "authors": "Doe, J. and Roe, R."}\n')
    items, skipped = read_library_file(path)
    assert [(i.key, i.tags) for i in items] == [("A", ("x",)), ("C", ("a", "b", "c"))]
    assert [c.name for c in items[1].creators] == ["J. Doe", "R. Roe"]
    assert len(skipped) == 1 and "'title' is an object, expected text" in skipped[0].reason


def test_csl_json_of_unusual_shapes_is_read_or_skipped(tmp_path):
    path = tmp_path / "l.json"
    path.write_text(json.dumps([{"id": "a", "title": "T", "author": "not a list", "issued": "2020"},
                                {"id": "b", "title": "U", "author": [{"family": "Doe", "given": "J"}],
                                 "issued": {"date-parts": [["2021", 5]]}, "keyword": ["x", "y"]}]))
    items, skipped = read_library_file(path)
    assert [(i.key, i.year, i.tags) for i in items] == [("b", 2021, ("x", "y"))]
    assert "'author'" in skipped[0].reason


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "utf-8-sig"])
def test_unicode_bibtex_in_any_bom_encoding(tmp_path, encoding):
    path = tmp_path / "l.bib"
    path.write_bytes("@article{k, title={Über Flüsse}, author={Müller, Jürgen}}\n".encode(encoding))
    items, _ = read_library_file(path)
    assert [i.title for i in items] == ["Über Flüsse"] and items[0].creators[0].last == "Müller"


def test_binary_and_deeply_nested_files_are_one_line(tmp_path):
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b'{"title": "x"}\n' + bytes(range(256)) * 20)
    with pytest.raises(InputError, match="binary file"):
        read_library_file(binary)
    deep = tmp_path / "d.json"
    deep.write_text("[" * 100_000)
    with pytest.raises(InputError, match="nested too deeply"):
        read_library_file(deep)
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(LIBRARY), "--corpus", str(deep)])
    assert result.exit_code == 1 and "nested too deeply" in result.output and "Traceback" not in result.output


def test_the_zotero_data_folder_is_a_library(tmp_path):
    from tests import zotero_db

    if not zotero_db.schema_available():
        pytest.skip(zotero_db.SCHEMA_MISSING)
    zotero_db.build_sample_library(tmp_path / "zotero.sqlite")
    read = read_library([str(tmp_path)], SourceOptions())
    assert read.items


def _library_with_collections(tmp_path):
    rows = [{"key": "A", "title": "Alpha flows", "collections": ["Thesis/Chapter 2"]},
            {"key": "B", "title": "Beta forecasting", "collections": ["Teaching/Chapter 2"]},
            {"key": "C", "title": "Gamma reasoning", "collections": ["Thesis/Chapter 2/Methods"]}]
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(("collection", "message"), [
    ("   ", "--collection is blank"),
    ("Chapter 2", "more than one collection is named 'Chapter 2': Teaching/Chapter 2, Thesis/Chapter 2"),
    ("Nope/Chapter 2", "no items in collection"),
])
def test_collection_rules_refuse(tmp_path, collection, message):
    path = _library_with_collections(tmp_path)
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(path), "--features", "tfidf",
                                      "--collection", collection])
    assert result.exit_code == 1 and message in result.output


def test_a_collection_path_picks_that_branch(tmp_path):
    from zotero_bridge.cli.common import profile_for

    items = read_library_file(_library_with_collections(tmp_path))[0]
    assert [i.key for i in profile_for(items, "thesis/chapter 2")] == ["A", "C"]
    assert [i.key for i in profile_for(items, "Methods")] == ["C"]
    assert [i.key for i in profile_for(items, " Teaching / Chapter 2 ")] == ["B"]


def test_corpus_list_and_info_agree(tmp_path, monkeypatch):
    """Seed abstracts stored beside the titled papers they belong to: `info` counts them merged, and
    `list` used to count the stored rows (3368 against 3333 papers)."""
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    from recommender.corpus.fetch import FetchSettings, fetch_corpus

    seeds = sorted(str(p) for p in (REPO / "examples" / "icml2025-seeds").glob("*.txt"))[:5]
    fetch_corpus("mine", [*seeds, str(REPO / "recommender" / "data" / "icml2025.jsonl")],
                 FetchSettings(sleep=lambda s: None))
    listed = json.loads(CliRunner().invoke(cli, ["corpus", "list", "--format", "json"]).stdout)
    info = json.loads(CliRunner().invoke(cli, ["corpus", "info", "mine", "--format", "json"]).stdout)
    keys = ("papers", "with_abstracts", "with_authors", "duplicates_dropped", "skipped")
    assert [{k: row[k] for k in keys} for row in listed] == [{k: info[0][k] for k in keys}]


def test_a_folder_corpus_is_its_files():
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(LIBRARY), "--features", "tfidf", "-n", "3",
                                      "--corpus", str(REPO / "examples" / "icml2025-seeds"), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == 3


def test_the_evaluate_help_example_runs_on_the_bundled_library():
    help_text = CliRunner().invoke(cli, ["evaluate", "--help"]).output
    example = next(line.split()[1:] for line in help_text.splitlines() if "evaluate library" in line)
    result = CliRunner().invoke(cli, [*example, "--features", "tfidf"] if "--features" in
                                CliRunner().invoke(cli, ["evaluate", "library", "--help"]).output else example)
    assert result.exit_code == 0, result.output
    assert "recall@20" in result.output


def test_the_web_cache_is_private(zotero_server, tmp_path):
    options = SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY, endpoint=zotero_server.url,
                            cache_dir=tmp_path / "cache")
    old = os.umask(0o022)
    try:
        read_library(["zotero:web"], options)
    finally:
        os.umask(old)
    files = list((tmp_path / "cache").iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700


def test_quiet_silences_the_score_summary(tmp_path):
    out = tmp_path / "s.csv"
    args = ["score", "--libraries", str(LIBRARY), "--features", "tfidf", "-n", "2", "--out", str(out)]
    loud = CliRunner().invoke(cli, args)
    assert loud.exit_code == 0 and "Scored 1 user against" in loud.stderr
    quiet = CliRunner().invoke(cli, ["-q", *args, "--overwrite"])
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == ""


def test_quiet_silences_corpus_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "1", "title": "One"}\n')
    result = CliRunner().invoke(cli, ["-q", "corpus", "fetch", "mine", "--from", str(corpus)])
    assert result.exit_code == 0, result.output
    assert result.output == ""


def test_retry_messages_name_the_real_cause(zotero_server, caplog):
    from recommender.retry import RetryPolicy

    zotero_server.inject(503, times=1)
    options = SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY, endpoint=zotero_server.url,
                            extra={"retry_policy": RetryPolicy(sleep=lambda s: None)})
    with caplog.at_level(logging.INFO):
        read_library(["zotero:web"], options)
    assert "HTTP 503 while reading items; retrying" in caplog.text
    assert "slow down" not in caplog.text


def test_a_server_that_never_answers_is_given_up_within_the_deadline(tmp_path):
    import socket

    from recommender.retry import RetryPolicy
    from zotero_bridge.zotero_api.client import ZoteroBusyError

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)  # accepts connections, never answers
    try:
        options = SourceOptions(library_id="1", api_key=ZOTERO_WRITE_KEY, cache_dir=tmp_path,
                                endpoint=f"http://127.0.0.1:{listener.getsockname()[1]}",
                                extra={"retry_policy": RetryPolicy(deadline_s=2, first_wait_s=0.2)})
        started = time.monotonic()
        with pytest.raises(ZoteroBusyError, match=r"no answer \(timed out\)"):
            read_library(["zotero:web"], options)
        assert time.monotonic() - started < 10
    finally:
        listener.close()
