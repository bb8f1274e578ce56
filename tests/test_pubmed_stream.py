"""`pubmed:QUERY` (issue 37): esearch over the window onto NCBI's history server, efetch by WebEnv/query_key
page by page, labelled abstract sections, NCBI's 3/10 requests a second, `tool`, `email`, the key never shown.
Real formats: tests/data/web/pubmed-esearch.json and pubmed-efetch.xml (README.md there names their source);
the live side is the double tests/fake_pubmed.py."""

from __future__ import annotations

import json
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from recommender.corpus import pubmed
from recommender.corpus.http import FetchError, FetchSettings
from recommender.corpus.pubmed_parse import parse_articles, parse_search
from recommender.corpus.store import read_stored, stored_path
from recommender.corpus.stream import AnswerError, fetch_stream
from recommender.streams import stream_source
from tests.fake_pubmed import FakePubmed, Record

SAVED = Path(__file__).parent / "data" / "web"
NOW = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)
KEY = "ncbiKEY0123456789abcdef0123456789ab"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    for name in ("NCBI_API_KEY", "NCBI_EMAIL", "ZOTREC_PUBMED_PAUSE_S"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def eutils(monkeypatch):
    fake = FakePubmed(rate_limited=False)  # on where a test sleeps its pauses for real
    monkeypatch.setenv("ZOTREC_PUBMED_API", fake.start())
    yield fake
    fake.stop()


class Waits(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def record(n: int, entrez: date, title: str = "Cardiac MRI findings") -> Record:
    return Record(pmid=str(41_000_000 + n), title=f"{title} {n}", entrez=entrez, doi=f"10.1000/cmr.{n}")


def stored(source) -> dict[str, dict]:
    return {row["id"]: row for row in read_stored(stored_path(source.name)).papers}


def test_saved_esearch_and_efetch_answers():
    search = parse_search(json.loads((SAVED / "pubmed-esearch.json").read_bytes()), "esearch")
    assert (search.count, search.query_key, search.webenv) == (2, "1", "MCID_6760a1b2c3d4e5f60718293a")
    first, second = parse_articles((SAVED / "pubmed-efetch.xml").read_bytes(), "efetch").rows
    assert first["id"] == "pubmed:41234567" and first["doi"] == "10.1016/j.jocmr.2026.101234"
    assert first["title"] == "Myocardial T1 mapping at 3 T in hypertrophic cardiomyopathy"
    assert first["abstract"] == ("BACKGROUND: Native T1 is raised in hypertrophic cardiomyopathy (HCM). "
                                 "METHODS: We scanned 84 patients and 40 controls at 3 T. "
                                 "RESULTS: T1 was higher in HCM (P < 0.001).")
    assert first["authors"] == ["Lena Fischer", "Sean P O'Brien", "CMR Registry Investigators"]
    assert first["published"] == "2026-12-01T00:00:00+00:00"  # the Entrez date, what edat windows on
    assert first["venue"] == "Journal of cardiovascular magnetic resonance"
    assert second["abstract"].startswith("Perfusion CMR") and second["doi"] == "10.1148/radiol.2026261111"


def test_ncbis_errors_are_one_line():
    with pytest.raises(AnswerError, match="NCBI says: Invalid query"):
        parse_search({"esearchresult": {"ERROR": "Invalid query"}}, "esearch")
    with pytest.raises(AnswerError, match="Unable to obtain query #1"):
        parse_articles(b"<eFetchResult><ERROR>Unable to obtain query #1</ERROR></eFetchResult>", "efetch")
    with pytest.raises(AnswerError, match="not complete XML") as cut:
        parse_articles((SAVED / "pubmed-efetch.xml").read_bytes()[:900], "efetch")
    assert not cut.value.complete


def test_corpus_fetch_pubmed_from_a_saved_efetch_answer():
    source = stream_source("pubmed:cardiac MRI")
    report = fetch_stream(source, [str(SAVED / "pubmed-efetch.xml")], now=NOW)
    assert sorted(report.new) == ["pubmed:41234567", "pubmed:41234602"] and report.stats.requests == 0


def test_the_window_is_one_search_then_pages_from_the_history_server(eutils, monkeypatch):
    monkeypatch.setattr(pubmed, "PAGE_SIZE", 4)
    eutils.records = [record(n, (NOW - timedelta(days=n % 6)).date()) for n in range(10)]
    eutils.records.append(record(50, (NOW - timedelta(days=30)).date()))  # before the window
    waits = Waits()
    source = stream_source("pubmed:cardiac MRI")
    source.use_key(None, "me@example.org")
    report = fetch_stream(source, (), FetchSettings(sleep=waits), now=NOW)
    assert len(report.new) == 10 and report.stats.requests == 4
    search, *fetches = eutils.requests
    assert search["path"].endswith("/esearch.fcgi") and search["usehistory"] == "y" and search["datetype"] == "edat"
    assert (search["mindate"], search["maxdate"]) == ("2026/11/28", "2026/12/04") and search["term"] == "cardiac MRI"
    assert [f["retstart"] for f in fetches] == ["0", "4", "8"] and {f["WebEnv"] for f in fetches} == {"MCID_" + "0" * 23 + "1"}
    assert all(r["tool"] == "zotrec" and r["email"] == "me@example.org" for r in eutils.requests)
    assert waits == [0.34] * 3  # three requests a second without a key


def test_with_a_key_ten_a_second_and_the_key_is_never_shown(eutils, monkeypatch, caplog):
    monkeypatch.setenv("NCBI_API_KEY", KEY)
    eutils.records = [record(n, (NOW - timedelta(days=1)).date()) for n in range(3)]
    waits = Waits()
    source = stream_source("pubmed:cardiac MRI")
    fetch_stream(source, (), FetchSettings(sleep=waits), now=NOW)
    assert {r["api_key"] for r in eutils.requests} == {KEY} and waits == [0.1]
    header = read_stored(stored_path(source.name)).header
    assert KEY not in json.dumps(header) and header["pubmed"]["api_key"] is True and KEY not in repr(source)
    assert KEY not in caplog.text


def test_going_over_the_rate_is_a_429_waited_out(eutils, monkeypatch):
    """Real pauses against the double's own clock: at NCBI's pause it never refuses; with none it refuses,
    and the 429 is waited out and asked again."""
    monkeypatch.setattr(pubmed, "PAGE_SIZE", 1)
    eutils.rate_limited = True
    eutils.records = [record(n, (NOW - timedelta(days=1)).date()) for n in range(5)]
    fetch_stream(stream_source("pubmed:cardiac MRI"), (), FetchSettings(sleep=time.sleep), now=NOW)
    assert eutils.refused == 0 and len(eutils.requests) == 6
    monkeypatch.setenv("ZOTREC_PUBMED_PAUSE_S", "0")
    eutils.records.append(record(9, NOW.date()))
    report = fetch_stream(stream_source("pubmed:cardiac MRI"), (), FetchSettings(sleep=time.sleep, backoff=0.2),
                          now=NOW)
    assert eutils.refused >= 1 and report.stats.retries >= 1 and report.new == ["pubmed:41000009"]


def test_the_next_day_stores_only_what_is_new_and_a_quiet_day_writes_nothing(eutils, monkeypatch):
    monkeypatch.setenv("ZOTREC_PUBMED_PAUSE_S", "0")
    eutils.records = [record(n, (NOW - timedelta(days=1)).date()) for n in range(3)]
    source = stream_source("pubmed:cardiac MRI")
    fetch_stream(source, (), now=NOW)
    eutils.records.append(record(5, (NOW + timedelta(days=1)).date()))
    report = fetch_stream(stream_source("pubmed:cardiac MRI"), (), now=NOW + timedelta(days=1))
    assert report.new == ["pubmed:41000005"] and len(stored(source)) == 4
    before = stored_path(source.name).stat().st_mtime_ns
    report = fetch_stream(stream_source("pubmed:cardiac MRI"), (), now=NOW + timedelta(days=1, hours=1))
    assert not report.changed and stored_path(source.name).stat().st_mtime_ns == before


def test_a_lost_history_or_a_too_broad_query_keeps_the_stored_corpus(eutils, monkeypatch):
    monkeypatch.setenv("ZOTREC_PUBMED_PAUSE_S", "0")
    eutils.records = [record(n, (NOW - timedelta(days=1)).date()) for n in range(2)]
    source = stream_source("pubmed:cardiac MRI")
    fetch_stream(source, (), now=NOW)
    eutils.faults = {len(eutils.requests) + 2: ("lost",)}
    with pytest.raises(FetchError, match="Unable to obtain query #1"):
        fetch_stream(stream_source("pubmed:cardiac MRI"), (), now=NOW)
    monkeypatch.setattr(pubmed, "MAX_RECORDS", 1)
    with pytest.raises(FetchError, match="matches 2 records .* narrow the query"):
        fetch_stream(stream_source("pubmed:cardiac MRI"), (), now=NOW)
    assert len(stored(source)) == 2


def test_an_entity_bomb_is_refused_not_expanded():
    bomb = (b'<?xml version="1.0"?><!DOCTYPE PubmedArticleSet [<!ENTITY a "aaaaaaaaaa">'
            + b"".join(b'<!ENTITY %s "%s">' % (chr(98 + n).encode(), (b"&" + chr(97 + n).encode() + b";") * 10)
                       for n in range(8))
            + b"]><PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>&i;"
              b"</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>")
    with pytest.raises(AnswerError, match="amplification") as refused:
        parse_articles(bomb, "efetch")
    assert refused.value.complete  # refused for good, not asked again
