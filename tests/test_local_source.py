"""zotero:local: the desktop's local API (pyzotero local=True) against a local HTTP server standing in for Zotero."""

from __future__ import annotations

import json
import logging
import socket
from dataclasses import replace

import pytest
from click.testing import CliRunner
from werkzeug import Request, Response

from tests import zotero_db
from zotero_bridge.cli.main import cli
from zotero_bridge.errors import SourceError
from zotero_bridge.sources import SourceOptions, read_library
from zotero_bridge.sources.local import read_local_library
from zotero_bridge.sources.sqlite import read_sqlite_library

pytest.importorskip("pytest_httpserver")

COLLECTIONS = [
    {"key": "THESIS01", "data": {"key": "THESIS01", "name": "Thesis", "parentCollection": False}},
    {"key": "CHAPTER2", "data": {"key": "CHAPTER2", "name": "Chapter 2", "parentCollection": "THESIS01"}},
    {"key": "METHODS3", "data": {"key": "METHODS3", "name": "Methods", "parentCollection": "CHAPTER2"}},
    {"key": "OLDSTUFF", "data": {"key": "OLDSTUFF", "name": "Old stuff", "parentCollection": False, "deleted": True}},
]


def api_item(key: str, item_type: str, **data) -> dict:
    """One item as Zotero's API serves it (local API and Web API share the shape)."""
    body = {"key": key, "version": 7, "itemType": item_type, "title": "", "creators": [], "abstractNote": "",
            "date": "", "url": "", "extra": "", "dateAdded": "2024-05-01T10:00:00Z",
            "dateModified": "2024-05-01T10:00:00Z", "tags": [], "collections": [], "relations": {}}
    body.update(data)
    return {"key": key, "version": 7, "library": {"type": "user", "id": 0}, "meta": {}, "data": body}


# The items of tests/zotero_db.build_sample_library, written out the way the local API serves them.
SAMPLE_ITEMS = [
    api_item("ATTN2017", "conferencePaper", title="Attention Is All You Need",
             abstractNote="We propose the Transformer, based solely on attention mechanisms.",
             date="December 2017", DOI="10.5555/3295222.3295349", url="https://arxiv.org/abs/1706.03762",
             proceedingsTitle="Advances in Neural Information Processing Systems", dateAdded="2023-01-15T08:30:00Z",
             creators=[{"creatorType": "author", "firstName": f, "lastName": la} for f, la in
                       [("Ashish", "Vaswani"), ("Noam", "Shazeer"), ("Niki", "Parmar"), ("Łukasz", "Kaiser")]]
             + [{"creatorType": "editor", "firstName": "Samy", "lastName": "Bengio"}],
             tags=[{"tag": "attention", "type": 1}, {"tag": "transformers"}], collections=["CHAPTER2", "OLDSTUFF"]),
    api_item("UEBER009", "journalArticle", title="Über die Möglichkeit neuronaler Übersetzung", date="2009-11-1",
             extra="DOI: 10.1000/xyz123\nOriginal Date: 2008", publicationTitle="Zeitschrift für KI",
             creators=[{"creatorType": "author", "firstName": "Jürgen", "lastName": "Schmidhuber"},
                       {"creatorType": "author", "firstName": "José", "lastName": "Hernández-Orallo"},
                       {"creatorType": "author", "firstName": "明", "lastName": "王"},
                       {"creatorType": "author", "name": "Deutsche Forschungsgemeinschaft"}],
             tags=[{"tag": "translation"}], collections=["METHODS3"]),
    api_item("CASE2015", "case", caseName="Authors Guild v. Google", dateDecided="October 16, 2015",
             court="2nd Cir."),
    api_item("TRASHED1", "preprint", title="A Trashed Preprint", abstractNote="Gone.", deleted=1),
    api_item("DLBOOK16", "book", title="Deep Learning", date="2016", url="http://www.deeplearningbook.org",
             creators=[{"creatorType": "author", "firstName": f, "lastName": la} for f, la in
                       [("Ian", "Goodfellow"), ("Yoshua", "Bengio"), ("Aaron", "Courville")]],
             collections=["THESIS01"]),
    api_item("NOTE0001", "note", note="<p>A standalone note about reading</p>"),
    api_item("EMPTY001", "journalArticle"),
]
GROUP_ITEMS = [api_item("ALEXNET1", "journalArticle",
                        title="ImageNet Classification with Deep Convolutional Neural Networks")]


@pytest.fixture(autouse=True)
def _quiet_test_server():
    """The stand-in server's request log is not part of what a user would see."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)


def paged(rows: list[dict], base: str):
    """A handler that pages like Zotero: start/limit parameters, Link rel="next", Total-Results."""
    def handler(request: Request) -> Response:
        start, limit = int(request.args.get("start", 0)), int(request.args.get("limit", 25))
        headers = {"Total-Results": str(len(rows)), "Zotero-API-Version": "3"}
        if start + limit < len(rows):
            headers["Link"] = f'<{base}{request.path}?start={start + limit}&limit={limit}>; rel="next"'
        return Response(json.dumps(rows[start:start + limit]), headers=headers, content_type="application/json")
    return handler


@pytest.fixture
def zotero(httpserver):
    """A running 'Zotero 7' with the local API switched on; returns the endpoint to pass as zotero:local:URL."""
    base = httpserver.url_for("").rstrip("/")
    httpserver.expect_request("/api/users/0/items/top").respond_with_handler(paged(SAMPLE_ITEMS, base))
    httpserver.expect_request("/api/users/0/collections").respond_with_handler(paged(COLLECTIONS, base))
    httpserver.expect_request("/api/users/0/groups").respond_with_json(
        [{"id": 5551212, "data": {"id": 5551212, "name": "Vision Lab"}}])
    httpserver.expect_request("/api/groups/5551212/items/top").respond_with_handler(paged(GROUP_ITEMS, base))
    httpserver.expect_request("/api/groups/5551212/collections").respond_with_json([])
    return f"{base}/api"


def test_local_api_gives_the_same_items_as_zotero_sqlite(zotero, tmp_path):
    local = read_local_library(zotero, SourceOptions())
    database = zotero_db.build_sample_library(tmp_path / "zotero.sqlite")
    from_sqlite = read_sqlite_library(str(database), SourceOptions())
    assert [replace(i, library="") for i in local.items] == [replace(i, library="") for i in from_sqlite.items]
    assert {s.reason for s in local.skipped} == {"in the trash", "note", "empty (no title, no abstract)"}
    assert local.items[0].library == "user library 0"


def test_pages_are_followed(httpserver):
    base = httpserver.url_for("").rstrip("/")
    many = [api_item(f"K{n:07d}", "journalArticle", title=f"Paper {n}") for n in range(230)]
    httpserver.expect_request("/api/users/0/items/top").respond_with_handler(paged(many, base))
    httpserver.expect_request("/api/users/0/collections").respond_with_handler(paged([], base))
    read = read_local_library(f"{base}/api", SourceOptions())
    assert [i.title for i in read.items] == [f"Paper {n}" for n in range(230)]


@pytest.mark.parametrize("group", ["Vision Lab", "5551212"])
def test_group_by_name_or_id(zotero, group):
    read = read_local_library(zotero, SourceOptions(group=group))
    assert [i.key for i in read.items] == ["ALEXNET1"] and read.items[0].library == "group library 5551212"


def test_unknown_group_lists_the_groups(zotero):
    with pytest.raises(SourceError, match=r"no group library 'Physics' .*\(groups here: Vision Lab \(5551212\)\)"):
        read_local_library(zotero, SourceOptions(group="Physics"))


def test_local_api_switched_off_is_one_clear_line(httpserver):
    httpserver.expect_request("/api/users/0/collections").respond_with_data("Local API is not enabled", status=403)
    result = CliRunner().invoke(cli, ["library", "--library", f"zotero:local:{httpserver.url_for('/api')}"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: Zotero's local API is switched off (403 from")
    assert "Allow other applications on this computer to communicate with Zotero" in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_zotero_not_running_is_one_clear_line():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(cli, ["library", "--library", f"zotero:local:http://127.0.0.1:{port}/api"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: Zotero is not running, or is older than Zotero 7 (nothing answers at")
    assert "--library zotero:sqlite" in result.output and len(result.output.strip().splitlines()) == 1


def test_cli_reads_the_local_api(zotero):
    result = CliRunner().invoke(cli, ["library", "--library", f"zotero:local:{zotero}", "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [row["key"] for row in payload["items"]] == ["ATTN2017", "UEBER009", "CASE2015", "DLBOOK16"]
    assert payload["items"][0]["collections"] == ["Thesis/Chapter 2"]


def test_read_library_routes_the_scheme(zotero):
    assert len(read_library([f"zotero:local:{zotero}"], SourceOptions()).items) == 4
