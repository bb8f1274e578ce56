"""One answer for one library: `zotrec score`, `reading-list` and `sync --dry-run` rank through the one function
(recommender/pipeline), so they give the same papers in the same order, what the user did with zotrec's papers
included: on a zotero.sqlite built from Zotero's real schema, and on the Web API and local API fakes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests import zotero_db
from zotero_bridge.cli.main import cli

from .conftest import ZOTERO_READ_KEY, ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_feedback_sqlite import build
from .test_local_sync import desktop  # noqa: F401 (fixture)
from .test_local_sync import ours as local_ours
from .test_local_sync import sync as local_sync
from .test_sync import corpus_file, papers  # noqa: F401 (fixtures)
from .test_sync import ours as web_ours
from .test_sync import sync as web_sync

TFIDF = ["--features", "tfidf", "--model", "none"]


def invoke(*args, env=None):
    result = CliRunner().invoke(cli, [str(arg) for arg in args], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


def listed(library, corpus, top_n, *extra, env=None) -> list[str]:
    out = invoke("reading-list", "--library", library, "--corpus", corpus, "-n", top_n, *TFIDF, "--format", "json",
                 *extra, env=env)
    return [row["id"] for row in json.loads(out)]


def scored(path, corpus, top_n, tmp_path) -> list[str]:
    out = tmp_path / "scores.jsonl"
    invoke("score", "--libraries", path, "--corpus", corpus, "-n", top_n, *TFIDF, "--format", "jsonl",
           "--out", out, "--overwrite")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return [row["id"] for row in sorted(rows, key=lambda row: row["rank"])]


def planned(*args, env=None) -> list[str]:
    """The papers a dry-run sync would hold in the collection, in rank order."""
    report = json.loads(invoke("sync", *args, *TFIDF, "--dry-run", "--format", "json", env=env))
    entries = [e for e in report["plan"] if e["action"] in ("add", "link", "keep") and e["rank"]]
    return [e["corpus_id"] for e in sorted(entries, key=lambda e: e["rank"])]


@pytest.mark.skipif(not zotero_db.schema_available(), reason="../shared Zotero schema missing")
@pytest.mark.parametrize("top_n", [10, 20])
def test_score_on_a_zotero_sqlite_with_a_trashed_pick_is_the_reading_list(tmp_path, corpus_file, top_n):
    plain = tmp_path / "plain.sqlite"
    build(plain, {})
    first = listed(plain, corpus_file, top_n)[0]
    path = tmp_path / "ada.sqlite"
    build(path, {first: {"trashed": True}})  # the user trashed zotrec's #1 paper
    reading = listed(path, corpus_file, top_n)
    assert first not in reading and len(reading) == top_n
    assert scored(path, corpus_file, top_n, tmp_path) == reading


def test_sync_dry_run_and_reading_list_agree_on_the_web_api(zotero_server, papers, corpus_file):
    web_sync(zotero_server, papers, top_n=6)
    collection, items, _ = web_ours(zotero_server)
    library = zotero_server.library("user", ZOTERO_USER_ID)
    zotero_server.file_item(library, items[0]["key"], remove=collection)  # taken out: dismissed
    zotero_server.tag_item(library, items[1]["key"], "to-read")  # kept
    common = ["--library-id", ZOTERO_USER_ID, "--endpoint", zotero_server.url, "--corpus", corpus_file]
    reading = listed("zotero:web", corpus_file, 10, *common[:4], env={"ZOTERO_API_KEY": ZOTERO_READ_KEY})
    plan = planned("--library", "zotero:web", *common, "-n", 10, env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert items[0]["extra"].split()[1] not in reading
    assert plan == reading


def test_sync_dry_run_and_reading_list_agree_on_the_local_api(desktop, papers, corpus_file):  # noqa: F811
    desktop.dialog = ["always"]
    local_sync(desktop, papers, top_n=6)
    items, _, _ = local_ours(desktop)
    desktop.trash_item(desktop.library(), items[0]["key"])
    desktop.edit_item(desktop.library(), items[1]["key"], tags=[{"tag": "zotrec"}, {"tag": "to-read"}])
    spec = f"zotero:local:{desktop.url}"
    reading = listed(spec, corpus_file, 10)
    plan = planned("--library", spec, "--corpus", corpus_file, "-n", 10)
    assert items[0]["extra"].split()[1] not in reading
    assert plan == reading


@pytest.mark.skipif(not zotero_db.schema_available(), reason="../shared Zotero schema missing")
def test_one_library_as_an_export_and_as_zotero_sqlite_gets_one_list(tmp_path, corpus_file):
    """The list's length sets the interests' seats the same way whichever source the library comes from."""
    from .test_feedback_sqlite import PROFILE

    path = tmp_path / "zotero.sqlite"
    build(path, {})
    bib = tmp_path / "library.bib"
    bib.write_text("".join(f"@article{{item{n},\n  title = {{{title}}},\n}}\n\n" for n, title in enumerate(PROFILE)),
                   encoding="utf-8")
    for top_n in (3, 5, 10):
        exported = listed(bib, corpus_file, top_n)
        assert listed(path, corpus_file, top_n) == exported
        assert scored(path, corpus_file, top_n, tmp_path) == exported


def test_one_parser_reads_every_library_spec(tmp_path):
    """Reading a source, its feedback and sync's target all read `--library` by sources/dispatch.py's parser."""
    from zotero_bridge.errors import SourceError
    from zotero_bridge.sources.dispatch import FILE, LibrarySpec, parse_library_spec

    (tmp_path / "zotero.sqlite").write_bytes(b"")
    assert parse_library_spec("zotero:sqlite:/x/z.sqlite") == LibrarySpec("zotero:sqlite", "/x/z.sqlite")
    assert parse_library_spec("zotero:sqlite") == LibrarySpec("zotero:sqlite", "")
    assert parse_library_spec(str(tmp_path)) == LibrarySpec("zotero:sqlite", str(tmp_path / "zotero.sqlite"))
    assert parse_library_spec("lab/ada.DB") == LibrarySpec("zotero:sqlite", "lab/ada.DB")
    assert parse_library_spec("zotero:local:http://127.0.0.1:23119") == LibrarySpec("zotero:local",
                                                                                    "http://127.0.0.1:23119")
    assert parse_library_spec("zotero:web") == LibrarySpec("zotero:web", "")
    assert parse_library_spec("library.bib") == LibrarySpec(FILE, "library.bib")
    with pytest.raises(SourceError, match="unknown library source"):
        parse_library_spec("zotero:mendeley")


@pytest.mark.skipif(not zotero_db.schema_available(), reason="../shared Zotero schema missing")
def test_the_zotero_data_folder_shows_its_feedback_as_its_database_does(tmp_path, corpus_file):
    plain = tmp_path / "plain.sqlite"
    build(plain, {})
    first = listed(plain, corpus_file, 10)[0]
    folder = tmp_path / "Zotero"
    folder.mkdir()
    build(folder / "zotero.sqlite", {first: {"trashed": True}})
    assert listed(folder, corpus_file, 10) == listed(folder / "zotero.sqlite", corpus_file, 10)
    assert first not in listed(folder, corpus_file, 10)
