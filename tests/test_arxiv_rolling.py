"""`zotrec sync --corpus arxiv:cs.LG` across three days against the fake Zotero Web API and the arXiv double:
the collection holds the last days' best N; papers that left the window leave unless the user kept them;
a paper shown on an earlier day is not added again."""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime, timedelta

import pytest
from click.testing import CliRunner

from recommender.corpus.stream import fetch_stream
from recommender.streams import stream_source
from recommender.corpus.http import FetchSettings
from recommender.corpus.readers import load_corpus
from recommender.retry import RetryPolicy
from recommender.scoring.ranking import Recommender
from tests.fake_arxiv import FakeArxiv, paper
from zotero_bridge.cli.main import cli
from zotero_bridge.sources import SourceOptions
from zotero_bridge.sync.run import SyncRequest, run_sync

from .conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY

NAME = "Recommended · arXiv cs.LG"
SPEC = stream_source("arxiv:cs.LG")
TOPICS = ["sherlock holmes detective crime fiction", "cell apoptosis neuron t cell activation",
          "earthquakes seismic waves", "electron microscopy analysis", "food allergy sensitization children"]
START = datetime(2025, 3, 3, 6, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    return tmp_path / "zotrec-data"


def day_papers(day: int, count: int = 8):
    when = START + timedelta(days=day) - timedelta(hours=8)
    return [paper(100 * day + n, when, hour=n, title=f"{TOPICS[n % 5].title()}: study {day}.{n}",
                  abstract=f"{TOPICS[n % 5]} {TOPICS[(n + day) % 5]} data model we show {day} {n}")
            for n in range(count)]


def sync(server, top_n=4):
    source = SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY, endpoint=server.url,
                           extra={"retry_policy": RetryPolicy(sleep=lambda seconds: None)})
    papers = load_corpus(["arxiv:cs.LG"]).papers
    return run_sync(SyncRequest(Recommender(papers), source, NAME, top_n=top_n))


def members(server) -> dict[str, dict]:
    library = server.library("user", ZOTERO_USER_ID)
    found = [key for key, data in library.collections.items() if data["name"] == NAME]
    if not found:
        return {}
    [collection] = found
    return {data["key"]: data for data in library.items.values()
            if collection in data.get("collections", []) and data["itemType"] != "note"}


def corpus_id(data) -> str:
    return next(line.split()[1] for line in data.get("extra", "").splitlines() if line.startswith("zotrec:"))


def a_day_passes(data_dir) -> None:
    with sqlite3.connect(data_dir / "seen.sqlite") as db:
        db.execute("UPDATE seen SET first_day = date(first_day, '-1 day')")


def test_the_rolling_collection_stays_at_n_across_three_days(zotero_server, data_dir):
    arxiv = FakeArxiv()
    url = arxiv.start()
    try:
        window, kept_key = {}, None
        for day in range(3):
            arxiv.add(*day_papers(day))
            fetch_stream(SPEC, [url], FetchSettings(sleep=lambda s: None, page_size=50), days=2,
                        now=START + timedelta(days=day))
            window[day] = {row.id for row in load_corpus(["arxiv:cs.LG"]).papers}
            if day:
                a_day_passes(data_dir)
            before = {corpus_id(d) for d in members(zotero_server).values()}
            sync(zotero_server)
            now_in = members(zotero_server)
            ids = {corpus_id(d) for d in now_in.values()}
            picks = {corpus_id(d) for key, d in now_in.items() if key != kept_key}
            assert len(picks) == 4, f"day {day}: {len(picks)} picks"  # and the kept one, the user's now
            assert picks <= window[day]  # nothing that left the window stays unless kept
            if day == 1:  # the user keeps one of today's picks (a tag of their own)
                kept_key, kept = next(iter(now_in.items()))
                library = zotero_server.library("user", ZOTERO_USER_ID)
                zotero_server.edit_item(library, kept_key, tags=[*kept["tags"], {"tag": "to-read"}])
            added = ids - before
            with sqlite3.connect(data_dir / "seen.sqlite") as db:
                earlier = {row[0] for row in db.execute("SELECT corpus_id FROM seen WHERE first_day < date('now')")}
            assert not added & earlier  # nothing shown on an earlier day comes in again
        assert corpus_id(kept) in ids and corpus_id(kept) not in window[2]  # kept after it left the window
    finally:
        arxiv.stop()


def test_sync_names_the_arxiv_collection(zotero_server, monkeypatch):
    from zotero_bridge.cli.sync import default_collection_name

    assert default_collection_name(["arxiv:cs.LG"]) == NAME
    assert default_collection_name(["arxiv:cs.LG", "icml2025"]) == "Recommended · ICML 2025"
    assert default_collection_name([]) == "Recommended · ICML 2025"
