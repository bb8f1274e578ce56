"""The CLI contract: help with examples, formats, output files, and one-line errors."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from zotero_bridge.cli.main import cli

from .conftest import REPO, SEEDS

LIBRARY = REPO / "examples" / "library.bib"
# The CLI contract is checked on the 31 seed papers (fast with dense features on two cores);
# test_reading_list_on_bundled_example runs the real default, the 3,330-paper ICML 2025 list.
SEED_CORPUS = [part for seed in SEEDS for part in ("--corpus", seed)]

SMALL_BIB = """@article{flows, title={Heavy tails in normalizing flows}, abstract={Density estimation with flows
and heavy tailed base distributions.}, groups={Generative/Flows}}
@article{ts, title={Time series forecasting foundation models}, abstract={Periodic patterns in forecasting.},
groups={Forecasting}}
"""


def all_commands(group, prefix=()):
    import click

    for name, command in group.commands.items():
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from all_commands(command, (*prefix, name))


@pytest.fixture
def small_library(tmp_path):
    path = tmp_path / "small.bib"
    path.write_text(SMALL_BIB, encoding="utf-8")
    return path


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("path, command", list(all_commands(cli)), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_command_has_help_with_an_example(path, command):
    result = run(*path, "--help")
    assert result.exit_code == 0, result.output
    assert command.help and "Example:" in result.output


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and "zotrec, version" in result.output


def test_reading_list_on_bundled_example(tmp_path, monkeypatch):
    """The first command a new user runs: real ICML 2025 titles with links, offline."""
    result = run("reading-list", "--library", LIBRARY, "-n", 5, "--format", "json", "--features", "tfidf")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [row["rank"] for row in rows] == [1, 2, 3, 4, 5]
    titles = {json.loads(line)["title"] for line in
              (REPO / "recommender" / "data" / "icml2025.jsonl").read_text(encoding="utf-8").splitlines()}
    for row in rows:
        assert {"rank", "id", "title", "score", "authors", "url", "reasons", "abstract"} <= row.keys()
        assert 1 <= len(row["reasons"]) <= 3
        assert {"title", "similarity"} <= row["reasons"][0].keys()
        assert row["title"] in titles and row["authors"]  # a real title, not an abstract's first words
        assert row["url"].startswith(("https://openreview.net/forum?id=", "https://proceedings.mlr.press/v267/"))
    # the list is in the ranking's order (interests seated seat by seat: facets.py), and -n 5 is the start of -n 10
    longer = json.loads(run("reading-list", "--library", LIBRARY, "-n", 10, "--format", "json", "--features",
                            "tfidf").stdout)
    assert [row["id"] for row in longer[:5]] == [row["id"] for row in rows]
    monkeypatch.setenv("COLUMNS", "100")
    table = run("reading-list", "--library", LIBRARY, "-n", 3, "--features", "tfidf")
    assert table.exit_code == 0  # the table shows the link too, unbroken, without its scheme
    assert rows[0]["url"].removeprefix("https://") in table.stdout


@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "json", "jsonl", "csv"])
def test_every_format_lists_the_same_top_paper(small_library, fmt):
    result = run("reading-list", *SEED_CORPUS, "--library", small_library, "-n", 3, "--format", fmt)
    assert result.exit_code == 0, result.output
    top = json.loads(run("reading-list", *SEED_CORPUS, "--library", small_library, "-n", 1, "--format", "json").stdout)[0]
    assert top["title"][:40] in result.stdout.replace("\n", " ") or fmt == "table"
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        assert len(rows) == 3 and rows[0]["id"] == top["id"]
    if fmt == "jsonl":
        assert [json.loads(line)["rank"] for line in result.stdout.splitlines()] == [1, 2, 3]


def test_top_zero_lists_every_corpus_paper_and_output_file(small_library, tmp_path):
    out = tmp_path / "list.jsonl"
    result = run("reading-list", *SEED_CORPUS, "--library", small_library, "--top", 0, "--format", "jsonl", "-o", out)
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 31


def test_collection_builds_profile_from_that_collection(small_library):
    def top_for(collection):
        result = run("reading-list", *SEED_CORPUS, "--library", small_library, "-n", 1, "--format", "json",
                     "--collection", collection)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)[0]

    flows, forecasting = top_for("Generative"), top_for("Forecasting")
    assert "flows" in flows["abstract"].lower()
    assert "time series" in forecasting["abstract"].lower()
    assert [r["key"] for r in flows["reasons"]] == ["flows"]
    missing = run("reading-list", *SEED_CORPUS, "--library", small_library, "--collection", "Nope")
    assert missing.exit_code == 1
    assert "no items in collection 'Nope'" in missing.output and "Forecasting" in missing.output


def test_library_command_lists_items_and_skipped(tmp_path):
    path = tmp_path / "lib.bib"
    path.write_text(SMALL_BIB + "@article{bad, title={unclosed\n\n@misc{e, note={x}}\n", encoding="utf-8")
    result = run("library", "--library", path, "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert [i["key"] for i in payload["items"]] == ["flows", "ts"]
    assert payload["items"][0]["collections"] == ["Generative/Flows"]
    assert payload["summary"]["skipped"] == {"unparseable entry": 1, "empty (no title, no abstract)": 1}
    table = run("library", "--library", path)
    assert "Skipped: 1 unparseable entry, 1 empty" in table.stdout


@pytest.mark.parametrize("args, message", [
    (["reading-list", "--library", "missing.bib"], "missing.bib: no such file"),
    (["reading-list", "--library", "notes.json"], "no item with a title or abstract"),
    (["reading-list", "--library", "lib.bib", "--corpus", "empty.txt"], "empty.txt: file is empty"),
    (["reading-list", "--library", "lib.bib", "--aggregation", "median"], "unknown aggregation 'median'"),
    (["reading-list", "--library", "zotero:nowhere"], "unknown library source 'zotero:nowhere'"),
    (["library", "--library", "folder"], "is a folder, not a file"),
])
def test_errors_are_one_line_without_traceback(tmp_path, monkeypatch, small_library, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lib.bib").write_text(SMALL_BIB)
    (tmp_path / "notes.json").write_text(json.dumps([{"id": "n", "type": "note"}, {"id": "x", "type": "book"}]))
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "folder").mkdir()
    if args[0] == "reading-list" and "--corpus" not in args:
        args = [*args, *SEED_CORPUS]  # the errors do not depend on the corpus; 31 papers keep this fast
    result = run(*args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1].startswith("Error: ")
    assert message in result.output
    assert "Traceback" not in result.output


def test_cli_default_aggregation_is_the_measured_one():
    from recommender.scoring.fusion import DEFAULT_SCORING
    from zotero_bridge import cli as cli_module

    assert cli_module.DEFAULT_AGGREGATION == DEFAULT_SCORING
