"""`openalex:FILTER` (issue 37): works by topic, journal ISSN, institution or search from the window's first
day, cursor paging, abstracts rebuilt from the inverted index, the API key sent and never shown, credit-based
429s. Real format: tests/data/web/openalex-works.json (README.md there names its source); the live side is
the double tests/fake_openalex.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recommender.corpus.http import FetchError, FetchSettings
from recommender.corpus.openalex_parse import abstract, api_filter, parse_works
from recommender.corpus.store import read_stored, stored_path
from recommender.corpus.stream import fetch_stream
from recommender.streams import stream_source
from recommender.errors import InputError
from tests.fake_openalex import FakeOpenAlex, Work

SAVED = Path(__file__).parent / "data" / "web"
NOW = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)
KEY = "oaKEYabcdefghijklmnopqrstuv"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    monkeypatch.setenv("ZOTREC_OPENALEX_PAUSE_S", "0")
    for name in ("OPENALEX_API_KEY", "OPENALEX_EMAIL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def openalex(monkeypatch):
    fake = FakeOpenAlex()
    monkeypatch.setenv("ZOTREC_OPENALEX_API", fake.start())
    yield fake
    fake.stop()


def stored(source) -> dict[str, dict]:
    return {row["id"]: row for row in read_stored(stored_path(source.name)).papers}


def works(count: int, start: int = 1, days_ago: int = 1, **fields) -> list[Work]:
    return [Work(4_410_000_000 + n, f"Imaging work {n}", (NOW - timedelta(days=days_ago)).date(), **fields)
            for n in range(start, start + count)]


def test_a_saved_works_answer_and_its_inverted_index():
    page = parse_works((SAVED / "openalex-works.json").read_bytes(), "openalex-works.json")
    first, second = page.rows
    assert page.total == 2 and page.cursor is None
    assert first["id"] == "openalex:W4410000001" and first["doi"] == "10.1038/s41591-026-03001-2"
    assert first["abstract"] == "Chest radiographs are the most common imaging test; we pretrain the model on a million."
    assert first["authors"] == ["Maya Rosen", "Kwame Mensah"] and first["venue"] == "Nature Medicine"
    assert first["published"] == "2026-12-01T00:00:00+00:00"
    assert second["abstract"] is None and second["doi"] == "" and second["url"] == "https://openalex.org/W4410000002"
    assert abstract({"b": [1], "a": [0, 2]}) == "a b a" and abstract({}) is None


def test_the_short_filters():
    assert api_filter("topic:T10017") == ("primary_topic.id:T10017", "")
    assert api_filter("journal:1078-8956") == ("primary_location.source.issn:1078-8956", "")
    assert api_filter("institution:I27837315") == ("institutions.id:I27837315", "")
    assert api_filter("search:cardiac MRI") == ("", "cardiac MRI")
    assert api_filter("type:article,is_oa:true") == ("type:article,is_oa:true", "")
    with pytest.raises(InputError, match="ISSN looks like"):
        api_filter("journal:Nature")


def test_corpus_fetch_openalex_from_the_saved_answer():
    source = stream_source("openalex:topic:T10017")
    report = fetch_stream(source, [str(SAVED / "openalex-works.json")], now=NOW)
    assert sorted(report.new) == ["openalex:W4410000001", "openalex:W4410000002"]


def test_cursor_paging_from_the_windows_first_day_with_the_key(openalex, monkeypatch, caplog):
    monkeypatch.setenv("OPENALEX_API_KEY", KEY)
    openalex.works = works(450) + works(5, start=900, topic="T99999") + works(3, start=950, days_ago=30)
    source = stream_source("openalex:topic:T10017")
    report = fetch_stream(source, (), FetchSettings(sleep=lambda s: None), now=NOW)
    assert len(report.new) == 450 and report.pages == 3
    assert [r["cursor"] == "*" for r in openalex.requests] == [True, False, False]
    assert {r["filter"] for r in openalex.requests} == {"primary_topic.id:T10017,from_publication_date:2026-11-28"}
    assert {r["api_key"] for r in openalex.requests} == {KEY} and {r["per_page"] for r in openalex.requests} == {"200"}
    assert KEY not in json.dumps(read_stored(stored_path(source.name)).header) and KEY not in repr(source)
    assert KEY not in caplog.text


def test_a_search_and_the_next_day_only_what_is_new(openalex):
    openalex.works = works(3, abstract="late gadolinium enhancement in cardiac MRI")
    source = stream_source("openalex:search:cardiac MRI")
    fetch_stream(source, (), now=NOW)
    assert openalex.requests[0]["search"] == "cardiac MRI" and "filter" in openalex.requests[0]
    openalex.works += works(1, start=10, days_ago=-1, abstract="cardiac MRI strain")
    report = fetch_stream(stream_source("openalex:search:cardiac MRI"), (), now=NOW + timedelta(days=1))
    assert report.new == ["openalex:W4410000010"] and len(stored(source)) == 4
    before = stored_path(source.name).stat().st_mtime_ns
    quiet = fetch_stream(stream_source("openalex:search:cardiac MRI"), (), now=NOW + timedelta(days=1, hours=1))
    assert not quiet.changed and stored_path(source.name).stat().st_mtime_ns == before


def test_a_burst_429_is_waited_out(openalex):
    openalex.works = works(3)
    openalex.faults = {1: ("burst",)}
    waits = []
    report = fetch_stream(stream_source("openalex:topic:T10017"), (), FetchSettings(sleep=waits.append), now=NOW)
    assert len(report.new) == 3 and report.stats.retries == 1 and 1 in [round(w) for w in waits]


def test_used_up_credits_are_one_line_and_keep_the_stored_corpus(openalex):
    openalex.works = works(3)
    source = stream_source("openalex:topic:T10017")
    fetch_stream(source, (), now=NOW)
    openalex.keyless_credits = 0
    openalex.credits.clear()
    openalex.works += works(2, start=20, days_ago=0)
    with pytest.raises(FetchError) as refused:
        fetch_stream(stream_source("openalex:topic:T10017"), (), FetchSettings(sleep=lambda s: None), now=NOW)
    assert "429" in str(refused.value) and "OPENALEX_API_KEY" in str(refused.value)
    assert "\n" not in str(refused.value) and len(stored(source)) == 3


def test_a_bad_filter_is_openalexs_own_message(openalex):
    with pytest.raises(FetchError, match="is not a valid field"):
        fetch_stream(stream_source("openalex:colour:blue"), (), now=NOW)
