"""What sync writes (issue 14): only real papers, a full collection after the user removes some, reasons in the
dry run, no duplicate when the corpus changes its ids, and one rule for collection names ('/' is a path)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from recommender.corpus.readers import load_corpus
from zotero_bridge.cli.main import cli
from zotero_bridge.errors import BridgeError
from zotero_bridge.zotero_api.collection_path import parse_collection_path

from .conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_sync import NAME, corpus_file, corpus_rows, ours, papers, sync  # noqa: F401 (fixtures)


def write_corpus(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return load_corpus([path]).papers


def test_untitled_seed_abstracts_are_never_written(zotero_server, tmp_path, papers):
    from dataclasses import replace

    from recommender.text import derived_title

    # seed abstracts as the seed reader makes them: an id from the text, a made-up title, no URL
    untitled = [replace(p, id=f"abs-{n:04d}", title=derived_title(p.abstract), title_derived=True, url="")
                for n, p in enumerate(papers[:30])]
    assert all(p.title_derived for p in untitled)
    report = sync(zotero_server, [*untitled, *papers[30:]], top_n=50)  # every titled paper: past the untitled
    _, items, members = ours(zotero_server)
    assert report.result.created == 50 and len(members) == 50
    assert all(not i["title"].startswith(tuple(p.title for p in untitled)) for i in items)
    skipped = [e for e in report.plan.entries if e.action == "skip"]
    assert len(skipped) == 1 and "without a title" in skipped[0].title and "never written" in skipped[0].note


def test_the_collection_is_refilled_after_the_user_removes_an_item(zotero_server, papers):
    sync(zotero_server, papers, top_n=5)
    collection, items, _ = ours(zotero_server)
    library = zotero_server.library("user", ZOTERO_USER_ID)
    zotero_server.edit_item(library, items[1]["key"], collections=[])  # taken out of the collection
    report = sync(zotero_server, papers, top_n=5)
    _, after, members = ours(zotero_server)
    assert report.result.created >= 1 and len(members) == 5  # (learning from the removal may move others too)
    assert items[1]["key"] not in {m["key"] for m in members}  # not put back: the user's choice wins
    assert library.items[items[1]["key"]]["collections"] == []


def test_the_dry_run_shows_why(zotero_server, corpus_file):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    zotero_server.add_item(library, title="Sherlock Holmes detective crime fiction stories",
                           abstractNote="Detective crime fiction with sherlock holmes.")
    args = ["sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus",
            str(corpus_file), "--dry-run", "-n", "3", "--features", "tfidf"]
    result = CliRunner().invoke(cli, args, env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert result.exit_code == 0, result.output
    why = [line.strip() for line in result.output.splitlines() if "because you saved:" in line]
    # each planned paper says which saved items it is like; the best is the Sherlock Holmes paper's (the other
    # places may serve the library's other interests: facets.py)
    assert len(why) == 3 and "Sherlock Holmes detective" in why[0] and all("(0." in line for line in why)
    result = CliRunner().invoke(cli, [*args, "--format", "json"], env={"ZOTERO_API_KEY": ZOTERO_WRITE_KEY})
    assert all(entry["why"] for entry in json.loads(result.stdout)["plan"] if entry["action"] == "add")


def test_a_corpus_with_new_ids_does_not_duplicate_papers(zotero_server, tmp_path):
    rows = corpus_rows(40)
    first = write_corpus(tmp_path / "a.jsonl", rows)
    sync(zotero_server, first, top_n=10)
    renamed = [{**row, "id": f"or{n:03d}", "url": ""} for n, row in enumerate(rows)]  # same titles, new ids
    report = sync(zotero_server, write_corpus(tmp_path / "b.jsonl", renamed), top_n=10)
    _, items, members = ours(zotero_server)
    assert report.result is None or report.result.created == 0
    assert len(items) == 10 and len(members) == 10


def test_an_openreview_id_matches_the_users_own_copy(zotero_server, tmp_path):
    rows = corpus_rows(40)
    papers = write_corpus(tmp_path / "a.jsonl", [{**row, "openreview_id": f"OR{n:04d}x"}
                                                 for n, row in enumerate(rows)])
    first = sync(zotero_server, papers, top_n=1, dry_run=True).plan.of("add")[0]
    number = int(first.corpus_id.rsplit("/", 1)[1])
    library = zotero_server.library("user", ZOTERO_USER_ID)
    mine = zotero_server.add_item(library, itemType="preprint", title="My own differently titled copy",
                                  url=f"https://openreview.net/forum?id=OR{number:04d}x")
    report = sync(zotero_server, papers, top_n=1)
    assert [(e.action, e.item_key) for e in report.plan.entries if e.rank] == [("link", mine)]
    _, items, _ = ours(zotero_server)
    assert items == []


def test_a_seed_item_zotrec_wrote_before_is_found_by_its_abstract(zotero_server, papers):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    junk_paper = papers[0]
    collection = zotero_server.add_collection(library, NAME)
    junk = zotero_server.add_item(library, itemType="conferencePaper", title=" ".join(junk_paper.abstract.split()[:8]),
                                  abstractNote=junk_paper.abstract, extra="zotrec: abs-0123 score=0.5",
                                  tags=[{"tag": "zotrec"}], collections=[collection])
    report = sync(zotero_server, papers, top_n=80)
    entry = next(e for e in report.plan.entries if e.corpus_id == junk_paper.id)
    assert entry.action == "keep" and entry.item_key == junk
    titles = [i["title"] for i in ours(zotero_server)[1]]
    assert titles.count(junk_paper.title) == 0 and len(titles) == 80


@pytest.mark.parametrize("name,parts", [("A/B", ["A", "B"]), (" Reading / ICML 2025 ", ["Reading", "ICML 2025"]),
                                        ("Recommended · ICML 2025", ["Recommended · ICML 2025"])])
def test_collection_names_are_paths(name, parts):
    assert parse_collection_path(name) == parts


@pytest.mark.parametrize("name", ["", "   ", "A//B", "/A", "A/ /B"])
def test_blank_collection_names_are_refused(name):
    with pytest.raises(BridgeError, match="blank"):
        parse_collection_path(name)


def test_sync_collection_name_with_a_slash_makes_a_sub_collection(zotero_server, corpus_file):
    library = zotero_server.library("user", ZOTERO_USER_ID)
    reading = zotero_server.add_collection(library, "Reading")
    base = ["sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus",
            str(corpus_file), "-n", "3", "--features", "tfidf"]
    env = {"ZOTERO_API_KEY": ZOTERO_WRITE_KEY}
    result = CliRunner().invoke(cli, [*base, "--collection-name", "Reading/New/ICML"], env=env)
    assert result.exit_code == 0, result.output
    by_name = {data["name"]: data for data in library.collections.values()}
    assert "Reading/New/ICML" not in by_name
    assert by_name["New"]["parentCollection"] == reading
    assert by_name["ICML"]["parentCollection"] == by_name["New"]["key"]
    assert sum(by_name["ICML"]["key"] in i.get("collections", []) for i in library.items.values()) == 3
    again = CliRunner().invoke(cli, [*base, "--collection-name", "Reading/New/ICML"], env=env)
    assert again.exit_code == 0 and len(library.collections) == len(by_name)  # found, not made again
    blank = CliRunner().invoke(cli, [*base, "--collection-name", "  "], env=env)
    assert blank.exit_code == 1 and "blank" in blank.output and "Traceback" not in blank.output


def test_items_whose_paper_this_corpus_lacks_stay_and_the_fallen_out_leave(zotero_server, papers):
    """A run on another or a partial corpus (a 49-paper fetch) must not empty the collection: zotrec's items
    whose paper is not in this run's corpus are kept and counted; papers in it that fell out still leave."""
    from zotero_bridge.sync.run import render_sync_report

    sync(zotero_server, papers, top_n=20)
    _, items, _ = ours(zotero_server)
    written = {item["extra"].split()[1]: item["key"] for item in items}
    absent = sorted(written)[:5]  # five written papers this run's corpus does not hold
    report = sync(zotero_server, [p for p in papers if p.id not in absent], top_n=10)
    _, after, members = ours(zotero_server)
    member_keys = {m["key"] for m in members}
    assert {written[paper_id] for paper_id in absent} <= member_keys  # kept, though not ranked
    kept = [e for e in report.plan.entries if e.note == "not in this corpus"]
    assert sorted(e.corpus_id for e in kept) == absent and all(e.action == "keep" for e in kept)
    removed = report.plan.of("remove", "trash")  # untouched papers zotrec created leave to Zotero's trash
    assert len(removed) >= 5 and not {e.corpus_id for e in removed} & set(absent)  # the fallen out leave
    assert len(members) == 10 + 5 and len(after) == len(items)  # nothing deleted outright
    assert all(zotero_server.library("user", ZOTERO_USER_ID).items[e.item_key].get("deleted") == 1
               for e in report.plan.of("trash"))
    assert "(5 not in this corpus)" in render_sync_report(report, "table")
