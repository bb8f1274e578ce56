"""zotero.sqlite reader: what it reads per schema version, locks, groups, trash, and bad files."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests import zotero_db
from zotero_bridge.sources import sqlite_paths
from zotero_bridge.cli.main import cli
from zotero_bridge.errors import SourceError
from zotero_bridge.sources import SourceOptions, read_library
from zotero_bridge.sources.sqlite import api_timestamp, read_sqlite_library, split_multipart_date

pytestmark = pytest.mark.skipif(not zotero_db.schema_available(), reason=zotero_db.SCHEMA_MISSING)

SCHEMAS = [123, 125, 129]
REGULAR_KEYS = ["ATTN2017", "UEBER009", "CASE2015", "DLBOOK16"]


@pytest.fixture(params=SCHEMAS, ids=lambda v: f"userdata{v}")
def sample(request, tmp_path) -> Path:
    return zotero_db.build_sample_library(tmp_path / "zotero.sqlite", userdata=request.param,
                                          wal=request.param == 129)


def by_key(read):
    return {item.key: item for item in read.items}


def folder_state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def test_reads_exactly_the_regular_items_of_the_user_library(sample):
    read = read_sqlite_library(str(sample), SourceOptions())
    assert [item.key for item in read.items] == REGULAR_KEYS
    reasons = sorted(s.reason for s in read.skipped)
    assert reasons == ["annotation", "attachment", "attachment", "empty (no title, no abstract)",
                       "in the trash", "note", "note"]
    assert all(item.library == "user library 4242" for item in read.items)


def test_fields_creators_dates_tags_and_collection_paths(sample):
    items = by_key(read_sqlite_library(str(sample), SourceOptions()))
    attention = items["ATTN2017"]
    assert attention.title == "Attention Is All You Need"
    assert attention.abstract.startswith("We propose the Transformer")
    assert [c.name for c in attention.creators] == ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar",
                                                    "Łukasz Kaiser", "Samy Bengio"]
    assert [c.creator_type for c in attention.creators][-2:] == ["author", "editor"]
    assert (attention.doi, attention.url) == ("10.5555/3295222.3295349", "https://arxiv.org/abs/1706.03762")
    assert (attention.date, attention.year) == ("December 2017", 2017)
    assert attention.date_added == "2023-01-15T08:30:00Z"
    assert attention.item_type == "conferencePaper"
    assert sorted(attention.tags) == ["attention", "transformers"]
    assert attention.collections == ("Thesis/Chapter 2",)  # the trashed collection is left out
    german = items["UEBER009"]
    assert german.title == "Über die Möglichkeit neuronaler Übersetzung"
    assert [(c.first, c.last) for c in german.creators] == [
        ("Jürgen", "Schmidhuber"), ("José", "Hernández-Orallo"), ("明", "王"), ("", "Deutsche Forschungsgemeinschaft")]
    assert german.abstract == "" and german.doi == "10.1000/xyz123"  # DOI from the extra field
    assert german.collections == ("Thesis/Chapter 2/Methods",)
    assert (german.date, german.year) == ("2009-11-1", 2009)
    case = items["CASE2015"]  # caseName and dateDecided are found through their base fields
    assert (case.title, case.date, case.year) == ("Authors Guild v. Google", "October 16, 2015", 2015)
    assert items["DLBOOK16"].collections == ("Thesis",)


def test_type_and_field_ids_really_differ_between_databases(tmp_path):
    first = zotero_db.ZoteroDatabase(tmp_path / "a.sqlite", seed=1)
    second = zotero_db.ZoteroDatabase(tmp_path / "b.sqlite", seed=2)
    assert first.item_type_ids != second.item_type_ids  # so a reader that hard-codes ids would fail
    first.close(), second.close()


def test_group_library_by_id_or_name_and_unknown_group(sample):
    for group in ("5551212", "vision lab"):
        read = read_sqlite_library(str(sample), SourceOptions(group=group))
        assert [i.key for i in read.items] == ["ALEXNET1"]
        assert read.items[0].collections == ("Reading group",)
        assert read.items[0].library == "group library 5551212"
    with pytest.raises(SourceError, match=r"no group library 'Physics' \(groups here: Vision Lab \(5551212\)\)"):
        read_sqlite_library(str(sample), SourceOptions(group="Physics"))


def test_zotero6_schema_121_is_read_without_warning(tmp_path, caplog):
    # No userdata-121 file is available: the queries only use columns present since Zotero 6 (see the docs),
    # and the collection trash (deletedCollections), which came with Zotero 7, is optional.
    path = zotero_db.build_sample_library(tmp_path / "zotero.sqlite", userdata=123)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE version SET version = 121 WHERE schema = 'userdata'")
        connection.execute("DROP TABLE deletedCollections")
    with caplog.at_level(logging.WARNING):
        read = read_sqlite_library(str(path), SourceOptions())
    assert [i.key for i in read.items] == REGULAR_KEYS and not caplog.records
    assert read.stats["zotero.sqlite schema"] == "userdata 121"
    assert sorted(by_key(read)["ATTN2017"].collections) == ["Old stuff", "Thesis/Chapter 2"]  # no trash here


@pytest.mark.parametrize("schema", [107, 120])
def test_an_older_schema_with_every_table_read_is_read_without_warning(tmp_path, caplog, schema):
    path = zotero_db.build_sample_library(tmp_path / "zotero.sqlite", userdata=123)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE version SET version = ? WHERE schema = 'userdata'", (schema,))
    with caplog.at_level(logging.WARNING):
        read = read_sqlite_library(str(path), SourceOptions())
    assert [i.key for i in read.items] == REGULAR_KEYS and not caplog.records


def test_future_schema_warns_once_and_reads_what_it_can(tmp_path, caplog):
    path = zotero_db.build_sample_library(tmp_path / "zotero.sqlite")
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE version SET version = 135 WHERE schema = 'userdata'")
    with caplog.at_level(logging.WARNING):
        read = read_sqlite_library(str(path), SourceOptions())
    assert [i.key for i in read.items] == REGULAR_KEYS
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "userdata 135, newer than" in warnings[0]


def hold_like_zotero_running(path: Path) -> zotero_db.ZoteroDatabase:
    """Take Zotero's exclusive lock and add an item that only lives in the -wal (or journal) so far."""
    db = zotero_db.ZoteroDatabase.open(path, exclusive=True)
    db.add_item("preprint", {"title": "Saved While Zotero Was Open", "abstractNote": "Fresh."}, key="FRESH001")
    db.commit()
    with pytest.raises(sqlite3.OperationalError, match="locked"):  # the lock is real
        sqlite3.connect(path, timeout=0).execute("SELECT count(*) FROM items").fetchone()
    return db


@pytest.mark.parametrize("userdata", SCHEMAS)
def test_reads_a_consistent_copy_while_the_database_is_exclusively_locked(tmp_path, userdata):
    path = zotero_db.build_sample_library(tmp_path / "zotero.sqlite", userdata=userdata, wal=userdata == 129)
    zotero = hold_like_zotero_running(path)
    try:
        if userdata == 129:
            assert Path(f"{path}-wal").stat().st_size > 0  # the new item is only in the -wal file
        before = folder_state(tmp_path)
        read = read_library([str(path)], SourceOptions())
        assert [i.key for i in read.items] == [*REGULAR_KEYS, "FRESH001"]
        assert read.stats["zotero.sqlite read"] == "a private copy"
        assert folder_state(tmp_path) == before  # nothing written next to the database
    finally:
        zotero.close()


def test_what_a_user_sees_while_zotero_runs(tmp_path):
    path = zotero_db.build_sample_library(tmp_path / "zotero.sqlite", wal=True)
    zotero = hold_like_zotero_running(path)
    try:
        result = CliRunner().invoke(cli, ["library", "--library", str(path)])
    finally:
        zotero.close()
    assert result.exit_code == 0, result.output
    assert (f"Read 5 items from {path} (user library 4242, schema userdata 129, from a copy taken now; "
            "works while Zotero is open)") in result.stderr
    assert "FRESH001" in result.stdout and "Warning" not in result.stderr


def test_a_database_that_keeps_changing_is_copied_again_then_read_with_a_warning(tmp_path, monkeypatch, caplog):
    path = zotero_db.build_sample_library(tmp_path / "zotero.sqlite")
    ticks = iter(range(1000))
    monkeypatch.setattr(sqlite_paths, "_signature", lambda _path: next(ticks))  # changes between every look
    with caplog.at_level(logging.WARNING):
        read = read_sqlite_library(str(path), SourceOptions())
    assert [i.key for i in read.items] == REGULAR_KEYS
    assert next(ticks) == 2 * sqlite_paths.COPY_ATTEMPTS  # one before and one after each copy
    assert any("kept changing while zotrec copied it" in r.getMessage() for r in caplog.records)


def test_immutable_fallback_says_so_and_misses_what_is_only_in_the_wal(tmp_path, monkeypatch, caplog):
    path = zotero_db.build_sample_library(tmp_path / "zotero.sqlite", wal=True)
    zotero = hold_like_zotero_running(path)

    def no_room(*_args):
        raise OSError("not enough free space")

    monkeypatch.setattr(sqlite_paths, "_copy_database", no_room)
    try:
        before = folder_state(tmp_path)
        with caplog.at_level(logging.WARNING):
            read = read_sqlite_library(str(path), SourceOptions())
        assert [i.key for i in read.items] == REGULAR_KEYS  # FRESH001 is still only in the -wal
        assert read.stats["zotero.sqlite read"] == "in place (immutable)"
        assert any("immutable mode" in r.getMessage() for r in caplog.records)
        assert folder_state(tmp_path) == before
    finally:
        zotero.close()


def test_immutable_read_copes_with_spaces_and_hashes_in_the_path(tmp_path):
    folder = tmp_path / "My Zotero #1?"
    folder.mkdir()
    path = zotero_db.build_sample_library(folder / "zotero.sqlite")
    with sqlite_paths.open_snapshot(path, copy=False) as snapshot:
        assert snapshot.mode == "immutable"
        assert snapshot.connection.execute("SELECT count(*) FROM items").fetchone() == (13,)


def test_sources_accept_scheme_folder_and_plain_path(sample):
    for spec in (f"zotero:sqlite:{sample}", f"zotero:sqlite:{sample.parent}", str(sample)):
        assert [i.key for i in read_library([spec]).items] == REGULAR_KEYS


def test_default_data_directory_is_found(tmp_path, monkeypatch):
    (tmp_path / "Zotero").mkdir()
    zotero_db.build_sample_library(tmp_path / "Zotero" / "zotero.sqlite")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(sqlite_paths.platform, "system", lambda: "Linux")
    assert [i.key for i in read_library(["zotero:sqlite"]).items] == REGULAR_KEYS


@pytest.mark.parametrize("system, profiles", [
    ("Linux", ".zotero/zotero"), ("Darwin", "Library/Application Support/Zotero/Profiles"),
    ("Windows", "AppData/Roaming/Zotero/Zotero/Profiles")])
def test_custom_data_directory_from_zotero_prefs(tmp_path, system, profiles):
    profile = tmp_path / profiles / "abcd1234.default"
    profile.mkdir(parents=True)
    (profile / "prefs.js").write_text('user_pref("extensions.zotero.dataDir", "/data/My \\"Zotero\\"");\n'
                                      'user_pref("extensions.zotero.useDataDir", true);\n', encoding="utf-8")
    found = sqlite_paths.default_database_candidates(tmp_path, system, {})
    assert found == [Path('/data/My "Zotero"/zotero.sqlite'), tmp_path / "Zotero" / "zotero.sqlite"]


def test_no_default_database_names_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(SourceError, match=r"no zotero.sqlite found \(looked in .*Zotero/zotero.sqlite\)"):
        read_library(["zotero:sqlite"])


@pytest.mark.parametrize("value, expected", [
    ("2013-03-00 03/2013", ("03/2013", 2013)), ("2009-11-01 2009-11-1", ("2009-11-1", 2009)),
    ("0000-00-00 Spring term", ("Spring term", None)), ("sometime", ("sometime", None)), ("", ("", None))])
def test_multipart_dates(value, expected):
    assert split_multipart_date(value) == expected


def test_api_timestamp():
    assert api_timestamp("2024-05-01 10:00:00") == "2024-05-01T10:00:00Z"


def test_cli_lists_exactly_the_regular_items_with_creators_intact(sample):
    result = CliRunner().invoke(cli, ["library", "--library", str(sample), "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [row["key"] for row in payload["items"]] == REGULAR_KEYS
    assert payload["items"][1]["creators"] == ["Jürgen Schmidhuber", "José Hernández-Orallo", "明 王",
                                               "Deutsche Forschungsgemeinschaft"]


def test_cli_group_option(sample):
    result = CliRunner().invoke(cli, ["library", "--library", str(sample), "--group", "Vision Lab",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"ALEXNET1"' in result.stdout and '"ATTN2017"' not in result.stdout


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = zotero_db.build_sample_library(tmp_path / "good.sqlite").read_bytes()
    (tmp_path / "truncated.sqlite").write_bytes(good[: len(good) // 3])
    (tmp_path / "corrupt.sqlite").write_bytes(good[:100] + bytes(range(256)) * (len(good) // 256))
    (tmp_path / "notes.sqlite").write_text("these are my notes, not a database\n", encoding="utf-8")
    (tmp_path / "empty.sqlite").write_bytes(b"")
    with sqlite3.connect(tmp_path / "other.sqlite") as connection:
        connection.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    return {
        "truncated": (tmp_path / "truncated.sqlite", "damaged or truncated"),
        "corrupt": (tmp_path / "corrupt.sqlite", "damaged or truncated"),
        "not sqlite": (tmp_path / "notes.sqlite", "not an SQLite database"),
        "empty": (tmp_path / "empty.sqlite", "empty file, not a Zotero database"),
        "non-Zotero": (tmp_path / "other.sqlite", "an SQLite database but not a Zotero one"),
        "missing": (tmp_path / "nowhere" / "zotero.sqlite", "no such file"),
    }


def test_bad_files_give_one_clear_line_and_write_nothing(tmp_path):
    for name, (path, message) in _bad_files(tmp_path).items():
        before = folder_state(tmp_path)
        output = tmp_path / "out" / "list.csv"
        result = CliRunner().invoke(cli, ["-q", "reading-list", "--library", str(path), "--format", "csv",
                                          "-o", str(output)])
        assert result.exit_code == 1, name
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], (name, result.output)
        assert "Traceback" not in result.output and str(path) in lines[0]
        assert folder_state(tmp_path) == before and not output.parent.exists(), name


def test_permission_denied(tmp_path, monkeypatch):
    path = zotero_db.build_sample_library(tmp_path / "zotero.sqlite")
    if os.name == "nt" or os.geteuid() == 0:  # root (or Windows) reads anyway: simulate what a user gets
        real_open = Path.open

        def denied(self, *args, **kwargs):
            if self == path:
                raise PermissionError(13, "Permission denied")
            return real_open(self, *args, **kwargs)

        monkeypatch.setattr(Path, "open", denied)
    else:
        path.chmod(0)
    result = CliRunner().invoke(cli, ["library", "--library", str(path)])
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {path}: permission denied (zotrec needs read access to the file)"
