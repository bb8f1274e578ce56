"""`--corpus zotero:feeds[:NAME]`: the feeds a user follows in Zotero, read from a zotero.sqlite built from
Zotero's real schema (tests/zotero_db.py), ranked against the same database's library: unread items only,
none the library already holds, each shown once (the seen memory treats them as a daily stream).

How Zotero stores a feed entry is taken from its source (zotero/zotero chrome/content/zotero/xpcom/data/
feed.js `_updateFeed` and feedItem.js `_saveData`): an item in the feed's library (type 'feed') and a
feedItems row (itemID, guid, readTime, translatedTime); readTime is set when the user marks it read.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.zotero_db import ZoteroDatabase, multipart_date
from zotero_bridge.cli.main import cli

REEF = "Coral reef resilience under ocean warming"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    return tmp_path / "zotrec-data"


def build(path: Path, *, feeds: bool = True) -> Path:
    db = ZoteroDatabase(path, seed=37)
    for number, (title, doi) in enumerate([
            ("Coral bleaching and symbiont shuffling in reef corals", "10.3354/meps01"),
            ("Ocean warming drives coral reef decline", "10.3354/meps02"),
            ("Recovery of coral reefs after marine heatwaves", "10.3354/meps03"),
            ("Reef fish communities track coral cover", "10.3354/meps04"),
            ("Seagrass meadows as nurseries for reef fish", "10.3354/meps05")]):
        db.add_item("journalArticle", {"title": title, "DOI": doi, "publicationTitle": "Marine Ecology Progress Series",
                                       "abstractNote": f"{title}: field surveys of coral reef sites, study {number}."},
                    creators=[("Terry", "Hughes")])
    if feeds:
        meps = db.add_feed("Marine Ecology Progress Series", "https://www.int-res.com/rss/meps.xml")
        other = db.add_feed("Physical Review Letters")
        for number, title in enumerate(["Coral reef fish recover after bleaching", REEF,
                                        "Heatwaves and coral symbiont loss on reefs"]):
            db.add_feed_item(meps, f"https://www.int-res.com/abstracts/meps/v{number}", {
                "title": title, "abstractNote": f"{title}. We surveyed coral reefs after ocean warming events.",
                "DOI": f"10.3354/meps1{number}", "date": multipart_date("2026-11-30", "2026-11-30 08:00:00"),
                "url": f"https://www.int-res.com/abstracts/meps/v{number}",
                "publicationTitle": "Marine Ecology Progress Series"}, creators=[("Ana", "Reyes")])
        db.add_feed_item(meps, "meps-read", {"title": "Coral reefs already read", "abstractNote": "coral reef warming"},
                         read="2026-12-01 09:00:00")
        db.add_feed_item(meps, "meps-owned-doi", {"title": "A new title for an owned paper", "DOI": "10.3354/MEPS02",
                                                  "abstractNote": "coral reef decline"})
        db.add_feed_item(meps, "meps-owned-title", {"title": "Recovery of Coral Reefs after Marine Heatwaves",
                                                    "abstractNote": "coral reef recovery"})
        for number in range(3):
            db.add_feed_item(other, f"prl-{number}", {
                "title": f"Quantum chromodynamics on the lattice, part {number}",
                "abstractNote": f"We compute hadron masses with lattice QCD, run {number}."})
    db.close()
    return path


def run(*args: str) -> CliRunner:
    return CliRunner().invoke(cli, list(args))


def listed(database: Path, corpus: str = "zotero:feeds", *extra: str) -> list[dict]:
    result = run("reading-list", "--library", str(database), "--corpus", corpus, "--features", "tfidf", "-n", "20",
                 "--format", "json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_unread_feed_items_are_ranked_and_read_or_owned_ones_left_out(tmp_path):
    rows = listed(build(tmp_path / "zotero.sqlite"))
    titles = [row["title"] for row in rows]
    assert sorted(titles) == sorted(["Coral reef fish recover after bleaching", REEF,
                                     "Heatwaves and coral symbiont loss on reefs"]
                                    + [f"Quantum chromodynamics on the lattice, part {n}" for n in range(3)])
    assert all(title.startswith(("Coral", "Heatwaves")) for title in titles[:3])  # the library's field first
    reef = next(row for row in rows if row["title"] == REEF)
    assert reef["id"] == "zotero-feed:https://www.int-res.com/abstracts/meps/v1"
    assert reef["doi"] == "10.3354/meps11" and reef["year"] == 2026
    assert reef["authors"] == ["Ana Reyes"]


def test_one_feed_by_name_and_an_unknown_name(tmp_path):
    database = build(tmp_path / "zotero.sqlite")
    rows = listed(database, "zotero:feeds:physical review letters")
    assert {row["title"][:20] for row in rows} == {"Quantum chromodynami"}
    result = run("reading-list", "--library", str(database), "--corpus", "zotero:feeds:Cell", "--features", "tfidf")
    assert result.exit_code == 1
    assert "no feed named 'Cell' (feeds here: Marine Ecology Progress Series; Physical Review Letters)" in result.output
    assert "Traceback" not in result.output


def test_a_database_without_feeds_says_so_in_one_line(tmp_path):
    result = run("reading-list", "--library", str(build(tmp_path / "zotero.sqlite", feeds=False)),
                 "--corpus", "zotero:feeds", "--features", "tfidf")
    assert result.exit_code == 1
    assert "follows no feeds" in result.output and "Traceback" not in result.output


def test_everything_read_is_nothing_to_rank_alone_and_a_note_beside_another_corpus(tmp_path):
    database = build(tmp_path / "zotero.sqlite")
    with sqlite3.connect(database) as db:
        db.execute("UPDATE feedItems SET readTime = '2026-12-02 10:00:00'")
    result = run("reading-list", "--library", str(database), "--corpus", "zotero:feeds", "--features", "tfidf")
    assert result.exit_code == 1 and "nothing new to rank" in result.output
    corpus = tmp_path / "other.jsonl"
    corpus.write_text(json.dumps({"id": "x1", "title": "Coral reef genomics"}) + "\n", encoding="utf-8")
    result = run("reading-list", "--library", str(database), "--corpus", "zotero:feeds", "--corpus", str(corpus),
                 "--features", "tfidf", "--format", "json")
    assert result.exit_code == 0, result.output
    assert [row["id"] for row in json.loads(result.stdout)] == ["x1"]


def test_each_feed_item_is_shown_once(tmp_path, data_dir):
    database = build(tmp_path / "zotero.sqlite")
    first = listed(database, "zotero:feeds", "-n", "2")
    assert listed(database, "zotero:feeds", "-n", "2") == first  # the same day: the same list
    with sqlite3.connect(data_dir / "seen.sqlite") as db:
        db.execute("UPDATE seen SET first_day = ?", ((date.today() - timedelta(days=1)).isoformat(),))
    later = listed(database, "zotero:feeds", "-n", "2")
    assert later and not {row["id"] for row in later} & {row["id"] for row in first}


def test_the_feed_corpus_file_is_rewritten_only_when_it_changes(tmp_path):
    from zotero_bridge.cli.feed_corpus import feed_corpus_file

    database = build(tmp_path / "zotero.sqlite")
    path = feed_corpus_file("zotero:feeds", [str(database)])
    stamp = path.stat().st_mtime_ns
    assert feed_corpus_file("zotero:feeds", [str(database)]) == path and path.stat().st_mtime_ns == stamp
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    with sqlite3.connect(database) as db:
        db.execute("UPDATE feedItems SET readTime = '2026-12-02 10:00:00' WHERE guid = 'prl-0'")
    assert feed_corpus_file("zotero:feeds", [str(database)]) == path
    assert "prl-0" not in path.read_text(encoding="utf-8")


def test_sync_names_its_collection_after_the_feeds():
    from zotero_bridge.cli.sync import default_collection_name

    assert default_collection_name(["zotero:feeds"]) == "Recommended · Zotero feeds"
    assert default_collection_name(["zotero:feeds:Nature", "arxiv:cs.LG"]) == (
        "Recommended · Zotero feed Nature · arXiv cs.LG")
    assert default_collection_name(["zotero:feeds", "icml2025"]) == "Recommended · ICML 2025"


def test_sources_and_auto_put_the_followed_feeds_first(tmp_path):
    database = build(tmp_path / "zotero.sqlite")
    result = run("sources", "--library", str(database))
    assert result.exit_code == 0, result.output
    first, second = result.stdout.splitlines()[1:3]
    assert " ".join(first.split()) == "--corpus zotero:feeds # the 2 feeds you follow in Zotero, unread: 6 items"
    assert second.startswith("# Marine Ecology Progress Series (no ISSN in the library): 5 items")
    result = run("daily", "--library", str(database), "--corpus", "auto", "--features", "tfidf",
                 "--atom", str(tmp_path / "day.xml"))
    assert result.exit_code == 0, result.output
    assert "--corpus auto: zotero:feeds (from what the library reads)" in result.output
    assert (tmp_path / "day.xml").read_text(encoding="utf-8").count("<entry>") == 6


@pytest.mark.parametrize("userdata", [123, 125, 129])  # Zotero 7–8, 9, 10
def test_every_schema_zotrec_reads_gives_the_same_feed_papers(tmp_path, userdata):
    from zotero_bridge.sources.feeds import feed_papers
    from zotero_bridge.sources.sqlite import read_sqlite_feeds

    db = ZoteroDatabase(tmp_path / "zotero.sqlite", userdata=userdata, seed=userdata)
    feed = db.add_feed("Ecology Letters", "https://onlinelibrary.wiley.com/feed/14610248/most-recent")
    db.add_feed_item(feed, "https://doi.org/10.1111/ele.70001", {
        "title": "Warming shifts <i>Daphnia</i> phenology", "abstractNote": "Lakes warm earlier.",
        "DOI": "10.1111/ele.70001", "date": multipart_date("2026-11-28", "2026-11-28"),
        "publicationTitle": "Ecology Letters", "extra": ""}, creators=[("Kim", "Lee"), ("Ecology Consortium",)])
    db.add_feed_item(feed, "read-one", {"title": "An old one"}, read="2026-11-29 10:00:00")
    db.close()
    found = feed_papers(read_sqlite_feeds(str(tmp_path / "zotero.sqlite")))
    assert found.read == 1 and found.feeds == ["Ecology Letters"]
    [paper] = found.papers
    assert (paper.id, paper.title, paper.doi, paper.year, paper.venue, paper.authors) == (
        "zotero-feed:https://doi.org/10.1111/ele.70001", "Warming shifts Daphnia phenology", "10.1111/ele.70001",
        2026, "Ecology Letters", ("Kim Lee", "Ecology Consortium"))
    assert paper.metadata["feed"] == "Ecology Letters" and paper.metadata["published"] == "2026-11-28"


def test_without_a_zotero_sqlite_library_the_default_profile_is_looked_for_and_named(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    library = tmp_path / "library.bib"
    library.write_text("@article{a, title={Coral reefs}}\n", encoding="utf-8")
    result = run("reading-list", "--library", str(library), "--corpus", "zotero:feeds", "--features", "tfidf")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"no zotero.sqlite found (looked in {tmp_path / 'Zotero' / 'zotero.sqlite'})" in result.output
