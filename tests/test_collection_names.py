"""A collection literally named "Thesis/Ch2" and the path Thesis › Ch2: an error listing both, never merged."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from recommender.retry import RetryPolicy
from zotero_bridge.cli.main import cli
from zotero_bridge.errors import BridgeError
from zotero_bridge.sources import SourceOptions
from recommender.scoring.ranking import Recommender
from zotero_bridge.sync.run import SyncRequest, run_sync
from zotero_bridge.zotero_api.collection_path import collection_paths

from .conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_sync import corpus_file, papers  # noqa: F401  (fixtures)


def test_split_and_join_are_inverse():
    from zotero_bridge.zotero_api.collection_path import join_path, split_path

    for parts in (["A"], ["A", "B"], ["Thesis/Ch2"], ["Thesis", "Ch2/draft", "x"]):
        assert split_path(join_path(parts)) == parts
    assert split_path("Thesis/Ch2") == ["Thesis", "Ch2"] and split_path("Thesis\\/Ch2") == ["Thesis/Ch2"]


def both(server):
    library = server.library("user", ZOTERO_USER_ID)
    literal = server.add_collection(library, "Thesis/Ch2")
    nested = server.add_collection(library, "Ch2", server.add_collection(library, "Thesis"))
    return library, literal, nested


def sync_into(server, papers, name, dry_run=True):
    source = SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY, endpoint=server.url,
                           extra={"retry_policy": RetryPolicy(sleep=lambda s: None)})
    return run_sync(SyncRequest(Recommender(papers), source, name, top_n=3, dry_run=dry_run))


def test_sync_refuses_a_name_that_fits_two_collections(zotero_server, papers, tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    library, literal, nested = both(zotero_server)
    assert collection_paths(library.collections)[literal] == "Thesis\\/Ch2"
    with pytest.raises(BridgeError) as error:
        sync_into(zotero_server, papers, "Thesis/Ch2")
    message = str(error.value)
    assert "\n" not in message and "Thesis › Ch2" in message and "'Thesis/Ch2'" in message
    assert "Thesis\\/Ch2" in message  # how to pick the one whose name holds a slash


def test_sync_writes_into_the_collection_it_was_told(zotero_server, papers, tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    library, literal, nested = both(zotero_server)
    assert sync_into(zotero_server, papers, "Thesis\\/Ch2", dry_run=False).result.collection_key == literal
    members = [d for d in library.items.values() if literal in d.get("collections", [])]
    assert len(members) == 3 and not [d for d in library.items.values() if nested in d.get("collections", [])]


def test_a_plain_path_finds_the_only_collection_it_fits(zotero_server, papers, tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    literal = zotero_server.add_collection(zotero_server.library("user", ZOTERO_USER_ID), "Thesis/Ch2")
    assert sync_into(zotero_server, papers, "Thesis/Ch2").plan.collection_key == literal


def _library(tmp_path):
    rows = [{"key": "A", "title": "Alpha flows", "collections": ["Thesis\\/Ch2"]},
            {"key": "B", "title": "Beta forecasting", "collections": ["Thesis/Ch2"]},
            {"key": "C", "title": "Gamma reasoning", "collections": ["Thesis"]}]
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_reading_list_refuses_a_path_that_fits_two_collections(tmp_path):
    result = CliRunner().invoke(cli, ["reading-list", "--library", str(_library(tmp_path)), "--features", "tfidf",
                                      "--collection", "Thesis/Ch2"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "fits 2 collections" in result.output and "Thesis › Ch2" in result.output
    assert "'Thesis/Ch2'" in result.output


def test_reading_list_picks_one_collection_when_told(tmp_path):
    from zotero_bridge.cli.common import profile_for
    from zotero_bridge.sources.files import read_library_file

    items = read_library_file(_library(tmp_path))[0]
    assert [i.key for i in profile_for(items, "Thesis\\/Ch2")] == ["A"]
    assert [i.key for i in profile_for(items, "Thesis")] == ["B", "C"]  # the literal one is not inside Thesis
