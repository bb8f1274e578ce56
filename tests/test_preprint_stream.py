"""`biorxiv:SUBJECT` and `medrxiv:SUBJECT` (issue 37): the details API by date interval, 30 records a page by
cursor, a subject's preprints stored one row per DOI with versions forward like arXiv's. Real format: the saved
answer tests/data/web/medrxiv-details.json (README.md there names its source); the live side is the double
tests/fake_biorxiv.py."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from recommender.corpus.biorxiv import parse_details, resolve_subject
from recommender.corpus.http import FetchError, FetchSettings
from recommender.corpus.store import read_stored, stored_path
from recommender.corpus.stream import fetch_stream
from recommender.streams import stream_source
from recommender.errors import InputError
from tests.fake_biorxiv import FakeBiorxiv, Preprint

SAVED = Path(__file__).parent / "data" / "web"
NOW = datetime(2026, 12, 4, 6, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    monkeypatch.delenv("ZOTREC_BIORXIV_PAUSE_S", raising=False)


@pytest.fixture
def server(monkeypatch):
    fake = FakeBiorxiv()
    monkeypatch.setenv("ZOTREC_BIORXIV_API", fake.start())
    yield fake
    fake.stop()


class Waits(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def stored(source) -> dict[str, dict]:
    return {row["id"]: row for row in read_stored(stored_path(source.name)).papers}


def preprint(n: int, posted: date, **fields) -> Preprint:
    return Preprint(doi=f"10.1101/2026.11.{n:02d}.2634{n:04d}", title=f"Imaging study number {n}", posted=posted,
                    **fields)


def test_a_saved_medrxiv_answer_reads_every_field():
    page = parse_details((SAVED / "medrxiv-details.json").read_bytes(), "medrxiv-details.json", "medrxiv")
    assert page.total == 3 and page.start == 0 and not page.skipped
    first, second, _ = page.rows
    assert first["id"] == "medrxiv:10.1101/2026.11.28.26341234" and first["doi"] == "10.1101/2026.11.28.26341234"
    assert first["authors"] == ["C. N. Okafor", "M. Lindqvist", "H. Tanaka"]
    assert first["abstract"].startswith("Background: Lung cancer screening") and first["year"] == 2026
    assert first["published"] == first["updated"] == "2026-12-01T00:00:00+00:00"
    assert first["url"] == "https://www.medrxiv.org/content/10.1101/2026.11.28.26341234v1"
    assert second["title"] == "MRI radiomics of glioblastoma predict MGMT methylation"  # <i> dropped
    assert second["abstract"].endswith("methylation & survival in 310 patients.")
    assert second["version"] == 2 and second["journal_doi"] == "10.1148/radiol.2026260001"


def test_corpus_fetch_medrxiv_radiology_from_the_saved_answer():
    source = stream_source("medrxiv:radiology")
    assert source.subjects == ("radiology and imaging",) and source.name == "medrxiv-radiology_and_imaging"
    report = fetch_stream(source, [str(SAVED / "medrxiv-details.json")], now=NOW)
    assert len(report.new) == 3 and report.stats.requests == 0
    assert stored(source)["medrxiv:10.1101/2026.10.02.26338765"]["version"] == 2


def test_subjects_are_named_whole_or_by_their_first_words():
    assert resolve_subject("medrxiv", "Radiology") == "radiology and imaging"
    assert resolve_subject("biorxiv", "cell-biology") == "cell biology"
    with pytest.raises(InputError, match="could be"):
        resolve_subject("medrxiv", "health")
    with pytest.raises(InputError, match="biorxiv:SUBJECT"):
        stream_source("biorxiv:")


def test_the_window_pages_by_cursor_30_at_a_time_with_a_pause(server):
    server.preprints = [preprint(n, (NOW - timedelta(days=1 + n % 5)).date()) for n in range(65)]
    server.preprints.append(preprint(99, NOW.date(), category="oncology"))  # another subject: never asked for
    waits = Waits()
    source = stream_source("medrxiv:radiology and imaging")
    report = fetch_stream(source, (), FetchSettings(sleep=waits), days=7, now=NOW)
    assert len(report.new) == 65 and report.pages == 3
    cursors = [r["path"].split("/")[5] for r in server.requests]
    assert cursors == ["0", "30", "60"] and {r["category"] for r in server.requests} == {"radiology_and_imaging"}
    assert server.requests[0]["path"].startswith("/details/medrxiv/2026-11-28/2026-12-04/")
    assert waits == [1.0, 1.0]  # the API's guidance: requests spaced out


def test_the_next_day_stores_only_what_is_new_and_a_new_version_replaces_its_paper(server, monkeypatch):
    monkeypatch.setenv("ZOTREC_BIORXIV_PAUSE_S", "0")
    server.preprints = [preprint(n, (NOW - timedelta(days=2)).date()) for n in range(3)]
    source = stream_source("medrxiv:radiology")
    fetch_stream(source, (), FetchSettings(sleep=lambda s: None), now=NOW)
    revised = preprint(1, (NOW + timedelta(days=1)).date(), version=2, abstract="A revised abstract.")
    server.preprints += [revised, preprint(7, (NOW + timedelta(days=1)).date())]
    report = fetch_stream(stream_source("medrxiv:radiology"), (), FetchSettings(sleep=lambda s: None),
                          now=NOW + timedelta(days=1, hours=2))
    assert report.new == [f"medrxiv:{preprint(7, NOW.date()).doi}"]
    assert report.updated == [f"medrxiv:{revised.doi}"] and report.unchanged == 2  # the overlap read again
    row = stored(source)[f"medrxiv:{revised.doi}"]
    assert row["version"] == 2 and row["abstract"] == "A revised abstract." and len(stored(source)) == 4


def test_a_quiet_day_downloads_nothing_new_and_writes_nothing(server, monkeypatch):
    monkeypatch.setenv("ZOTREC_BIORXIV_PAUSE_S", "0")
    server.preprints = [preprint(n, (NOW - timedelta(days=1)).date()) for n in range(2)]
    source = stream_source("medrxiv:radiology")
    fetch_stream(source, (), now=NOW)
    before = stored_path(source.name).stat().st_mtime_ns
    report = fetch_stream(stream_source("medrxiv:radiology"), (), now=NOW + timedelta(hours=3))
    assert not report.changed and report.unchanged == 2
    assert stored_path(source.name).stat().st_mtime_ns == before
    server.preprints = []  # an interval with no posts: "no posts found"
    report = fetch_stream(stream_source("medrxiv:radiology"), (), now=NOW + timedelta(hours=4))
    assert not report.changed and report.papers == 2


def test_a_cut_answer_is_asked_again_and_a_challenge_page_keeps_the_stored_corpus(server, monkeypatch):
    monkeypatch.setenv("ZOTREC_BIORXIV_PAUSE_S", "0")
    server.preprints = [preprint(n, (NOW - timedelta(days=1)).date()) for n in range(2)]
    server.faults = {1: ("cut",), 2: ("503", 3)}
    waits = Waits()
    source = stream_source("medrxiv:radiology")
    report = fetch_stream(source, (), FetchSettings(sleep=waits), now=NOW)
    assert len(report.new) == 2 and report.stats.retries == 2 and 3 in [round(w) for w in waits]
    server.faults = {len(server.requests) + 1: ("html",)}
    with pytest.raises(FetchError, match=r"answered with a web page \('Just a moment\.\.\.'\)"):
        fetch_stream(stream_source("medrxiv:radiology"), (), FetchSettings(sleep=waits, retries=0), now=NOW)
    assert len(stored(source)) == 2


def test_a_saved_answer_of_several_subjects_keeps_only_the_asked_one(tmp_path):
    text = (SAVED / "medrxiv-details.json").read_text().replace('"category":"radiology and imaging","jatsxml"',
                                                               '"category":"oncology","jatsxml"', 1)
    answer = tmp_path / "mixed.json"
    answer.write_text(text)
    report = fetch_stream(stream_source("medrxiv:radiology"), [str(answer)], now=NOW)
    assert len(report.new) == 2 and report.other == 1


def test_a_subject_the_api_does_not_know_is_one_line_not_every_subject(server, monkeypatch, caplog):
    """The live API answers an unknown `category` with every subject (`"category": "all"`); zotrec says so
    instead of storing a day of all of medRxiv."""
    monkeypatch.setenv("ZOTREC_BIORXIV_PAUSE_S", "0")
    server.preprints = [preprint(n, (NOW - timedelta(days=1)).date()) for n in range(2)]
    with pytest.raises(FetchError, match="medRxiv has no subject 'space medicine'.*radiology and imaging"):
        fetch_stream(stream_source("medrxiv:space medicine"), (), now=NOW)
    assert "asking for it as given" in caplog.text and len(server.requests) == 1
