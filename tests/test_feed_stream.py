"""`feed:URL` (issue 37): a journal's TOC feed — RSS 1.0/RDF with Dublin Core and PRISM (Nature's), RSS 2.0
(PubMed's search feed), Atom (PLOS ONE's) — stored as a stream corpus, and conditional GET so that an
unchanged feed costs one 304. Real formats: tests/data/web/README.md names each saved answer's source; the
live side is the double tests/fake_feed.py (ETag, Last-Modified, 304)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recommender.corpus.feed_parse import parse_feed
from recommender.corpus.http import FetchError, FetchSettings
from recommender.corpus.store import read_stored, stored_path
from recommender.corpus.stream import fetch_stream
from recommender.streams import stream_source
from recommender.errors import InputError
from tests.fake_feed import FakeFeed, Item

SAVED = Path(__file__).parent / "data" / "web"
NOW = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    return tmp_path / "zotrec-data"


@pytest.fixture
def feed():
    fake = FakeFeed(items=[Item("10.1038/s41591-026-03001-2", "Foundation models for chest radiographs",
                                NOW - timedelta(days=2)),
                           Item("10.1038/s41591-026-03002-9", "Low-dose CT screening outcomes", NOW - timedelta(days=3))])
    fake.url = fake.start()
    yield fake
    fake.stop()


def settings() -> FetchSettings:
    return FetchSettings(sleep=lambda seconds: None)


def stored(source) -> dict[str, dict]:
    return {row["id"]: row for row in read_stored(stored_path(source.name)).papers}


def test_natures_rss10_with_dublin_core_and_prism():
    page = parse_feed((SAVED / "nature-rss10.xml").read_bytes(), "nature-rss10.xml")
    first, second = page.rows
    assert first["id"] == "feed:10.1038/s41591-026-03001-2" and first["doi"] == "10.1038/s41591-026-03001-2"
    assert first["title"] == "Foundation models for chest radiograph interpretation"
    assert first["authors"] == ["Maya Rosen", "Kwame Mensah"]  # the corresponding author listed twice: once
    assert first["abstract"] == ("A model pretrained on a million chest radiographs reads them as well as "
                                 "radiologists.")  # without the "Published online: …; doi:…" line
    assert first["published"] == "2026-12-01T00:00:00+00:00" and first["venue"] == "Nature Medicine"
    assert second["title"] == "Screening for lung cancer & the limits of low-dose CT"
    assert second["abstract"] is None  # the item held nothing but the "Published online" line


def test_pubmeds_rss20_keeps_the_doi_of_its_second_identifier_and_a_link_id_without_one():
    first, second = parse_feed((SAVED / "pubmed-rss20.xml").read_bytes(), "pubmed-rss20.xml").rows
    assert first["id"] == "feed:10.1016/j.jocmr.2026.101234"
    assert first["authors"] == ["Lena Fischer", "Sean P O'Brien"]
    assert first["abstract"] == "Native T1 is raised in hypertrophic cardiomyopathy."
    assert first["published"] == "2026-12-01T11:00:00+00:00"
    assert first["venue"] == "Journal of cardiovascular magnetic resonance"
    assert second["id"] == "feed:https://pubmed.ncbi.nlm.nih.gov/41234999/" and second["doi"] == ""


def test_plos_atom_with_an_info_doi_id_and_its_byline_left_out():
    (entry,) = parse_feed((SAVED / "plos-atom.xml").read_bytes(), "plos-atom.xml").rows
    assert entry["id"] == "feed:10.1371/journal.pone.0312345"
    assert entry["authors"] == ["Tomás Ruiz", "Hana Sato"]
    assert entry["abstract"] == "Left-ventricular strain was lower in endurance athletes."
    assert entry["published"] == "2026-12-03T14:00:00+00:00"


def test_a_saved_feed_is_stored_under_its_url(tmp_path):
    source = stream_source("feed:https://feeds.nature.com/nm/rss/current")
    report = fetch_stream(source, [str(SAVED / "nature-rss10.xml")], settings(), now=NOW)
    assert sorted(report.new) == ["feed:10.1038/s41591-026-03001-2", "feed:10.1038/s41591-026-03010-1"]
    assert source.name.startswith("feed-feeds-nature-com-nm-rss-current-")
    assert set(stored(source)) == set(report.new) and report.stats.requests == 0


def test_an_unchanged_feed_costs_one_304_and_writes_nothing(feed):
    source = stream_source(f"feed:{feed.url}")
    first = fetch_stream(source, (), settings(), now=NOW)
    assert len(first.new) == 2 and feed.bodies == 1
    validators = read_stored(stored_path(source.name)).header["stream"]["memory"]["validators"]
    assert validators["etag"].startswith('"') and validators["last_modified"]
    before = stored_path(source.name).stat().st_mtime_ns

    again = fetch_stream(stream_source(f"feed:{feed.url}"), (), settings(), now=NOW + timedelta(hours=6))
    assert not again.changed and again.stats.requests == 1 and feed.not_modified == 1 and feed.bodies == 1
    assert feed.requests[-1]["if-none-match"] == validators["etag"]
    assert stored_path(source.name).stat().st_mtime_ns == before


def test_the_next_day_stores_only_the_new_item(feed):
    source = stream_source(f"feed:{feed.url}")
    fetch_stream(source, (), settings(), now=NOW)
    feed.publish(Item("10.1038/s41591-026-03050-5", "Cardiac MRI in athletes", NOW + timedelta(hours=20)),
                 when=NOW + timedelta(hours=20))
    report = fetch_stream(stream_source(f"feed:{feed.url}"), (), settings(), now=NOW + timedelta(days=1))
    assert report.new == ["feed:10.1038/s41591-026-03050-5"] and report.unchanged == 2
    assert feed.bodies == 2 and set(stored(source)) == {
        "feed:10.1038/s41591-026-03001-2", "feed:10.1038/s41591-026-03002-9", "feed:10.1038/s41591-026-03050-5"}
    validators = read_stored(stored_path(source.name)).header["stream"]["memory"]["validators"]
    assert feed.requests[-1].get("if-none-match") != validators["etag"]  # the new ETag is the one kept


@pytest.mark.parametrize("kind", ["rss10", "rss20", "atom"])
def test_each_feed_format_from_the_double(feed, kind):
    feed.kind = kind
    source = stream_source(f"feed:{feed.url}")
    fetch_stream(source, (), settings(), now=NOW)
    row = stored(source)["feed:10.1038/s41591-026-03001-2"]
    assert row["title"] == "Foundation models for chest radiographs"
    assert row["authors"] == ["Maya Rosen", "Kwame Mensah"]
    assert row["abstract"] == "We report a finding in patients."
    assert row["published"].startswith((NOW - timedelta(days=2)).date().isoformat())


def test_a_503_is_waited_out_and_an_html_page_is_one_line_that_keeps_the_stored_feed(feed):
    feed.faults = {1: ("503", 2)}
    waits = []
    source = stream_source(f"feed:{feed.url}")
    fetch_stream(source, (), FetchSettings(sleep=waits.append), now=NOW)
    assert 2 in [round(w) for w in waits] and len(stored(source)) == 2
    feed.faults = {len(feed.requests) + 1: ("html",)}
    feed.publish(Item("10.1038/new", "Something new", NOW))
    with pytest.raises(FetchError, match="not an RSS or Atom feed"):
        fetch_stream(stream_source(f"feed:{feed.url}"), (), settings(), now=NOW + timedelta(days=1))
    assert len(stored(source)) == 2


def test_a_feed_name_must_be_a_web_address():
    with pytest.raises(InputError, match="feed:URL"):
        stream_source("feed:nature.com")
    one, other = stream_source("feed:https://a.example/rss"), stream_source("feed:https://a.example/rss?x=1")
    assert one.name != other.name  # two feeds never share a stored corpus


def test_a_validator_of_another_url_is_not_sent(feed):
    source = stream_source(f"feed:{feed.url}")
    fetch_stream(source, (), settings(), now=NOW)
    path = stored_path(source.name)
    document = json.loads(path.read_text())
    document["stream"]["memory"]["url"] = "https://elsewhere.example/rss"
    path.write_text(json.dumps(document))
    fetch_stream(stream_source(f"feed:{feed.url}"), (), settings(), now=NOW)
    assert "if-none-match" not in feed.requests[-1] and feed.bodies == 2


def test_a_changed_feed_without_new_items_keeps_its_new_validators_so_the_next_fetch_is_a_304(feed):
    source = stream_source(f"feed:{feed.url}")
    fetch_stream(source, (), settings(), now=NOW)
    feed.items[0].abstract = "A corrected abstract."  # the feed changed; no item is new
    report = fetch_stream(stream_source(f"feed:{feed.url}"), (), settings(), now=NOW + timedelta(hours=1))
    assert report.new == [] and feed.bodies == 2
    fetch_stream(stream_source(f"feed:{feed.url}"), (), settings(), now=NOW + timedelta(hours=2))
    assert feed.not_modified == 1 and feed.bodies == 2
