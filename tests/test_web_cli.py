"""Issue 37's "Done when" for the web sources through the command line: `zotrec corpus fetch SOURCE --from
FILE` stores a saved real-format answer (tests/data/web, dates moved to this week: the window counts from
today), the key is read from the config like the Zotero key and never shown, and `zotrec daily --corpus
medrxiv:radiology --corpus feed:URL --atom F` runs a day end to end against the doubles, each paper once, the
same day twice writing nothing."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.corpus.store import read_stored, stored_path
from recommender.streams import stream_source
from tests.fake_biorxiv import FakeBiorxiv, Preprint
from tests.fake_feed import FakeFeed, Item
from tests.fake_openalex import FakeOpenAlex, Work
from zotero_bridge.cli.main import cli

SAVED = Path(__file__).parent / "data" / "web"
LIBRARY = str(Path(__file__).resolve().parents[1] / "examples" / "library.bib")
SAVED_DAYS = (1, 2, 3)  # the saved answers' papers are of 2026-12-01, -02 and -03


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    for name in ("BIORXIV", "PUBMED", "OPENALEX"):
        monkeypatch.setenv(f"ZOTREC_{name}_PAUSE_S", "0")
    for name in ("OPENALEX_API_KEY", "NCBI_API_KEY", "OPENALEX_EMAIL", "NCBI_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "zotrec-data"


def this_week(name: str, folder: Path) -> str:
    """The saved answer `name` with its December 2026 dates moved to the last three days (nothing else)."""
    text = (SAVED / name).read_text(encoding="utf-8")
    for day in SAVED_DAYS:
        new = date.today() - timedelta(days=4 - day)
        text = text.replace(f"2026-12-0{day}", new.isoformat()).replace(f"2026/12/0{day}", f"{new:%Y/%m/%d}")
        text = text.replace(f"0{day} December 2026", f"{new:%d %B %Y}")
        text = text.replace(f"<Year>2026</Year><Month>12</Month><Day>{day}</Day>",
                            f"<Year>{new.year}</Year><Month>{new.month}</Month><Day>{new.day}</Day>")
        text = re.sub(rf"\w{{3}}, 0{day} Dec 2026", new.strftime("%a, %d %b %Y"), text)
        text = text.replace(f"2026-12-0{day}T", f"{new.isoformat()}T")
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result.output


@pytest.mark.parametrize("name, saved, ids", [
    ("medrxiv:radiology", "medrxiv-details.json", 3),
    ("pubmed:cardiac MRI", "pubmed-efetch.xml", 2),
    ("openalex:topic:T10017", "openalex-works.json", 2),
    ("feed:https://feeds.nature.com/nm/rss/current", "nature-rss10.xml", 2),
    ("feed:https://pubmed.ncbi.nlm.nih.gov/rss/search/1aBcD2eFgH/", "pubmed-rss20.xml", 2),
    ("feed:https://journals.plos.org/plosone/feed/atom", "plos-atom.xml", 1),
])
def test_corpus_fetch_from_a_saved_answer_then_again_stores_nothing_new(tmp_path, name, saved, ids):
    path = this_week(saved, tmp_path)
    out = run("corpus", "fetch", name, "--from", path)
    assert f"{ids} new" in out, out
    stored = read_stored(stored_path(stream_source(name).name)).papers
    assert len(stored) == ids and all(row["title"] and row["authors"] and row["published"] for row in stored)
    assert "Nothing new" in run("corpus", "fetch", name, "--from", path)


def test_a_saved_answer_that_is_no_answer_is_one_line(tmp_path):
    bad = tmp_path / "page.json"
    bad.write_text("<html><body>Just a moment...</body></html>")
    result = CliRunner().invoke(cli, ["corpus", "fetch", "medrxiv:radiology", "--from", str(bad)])
    assert result.exit_code == 1 and "page.json" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_the_openalex_key_comes_from_the_config_and_is_never_shown(tmp_path, monkeypatch):
    import os

    import platformdirs

    key = "oaCONFIGkey0123456789"
    fake = FakeOpenAlex(works=[Work(4_410_000_100 + n, f"Work {n}", date.today() - timedelta(days=1))
                               for n in range(3)], keyless_credits=0)
    monkeypatch.setenv("ZOTREC_OPENALEX_API", fake.start())
    try:
        config = Path(platformdirs.user_config_dir("zotrec")) / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        config.write_text(f'[openalex]\napi_key = "{key}"\nemail = "me@example.org"\n')
        os.chmod(config, 0o600)
        out = run("corpus", "fetch", "openalex:topic:T10017")
        assert "3 new" in out and key not in out
        assert {r["api_key"] for r in fake.requests} == {key} and {r["mailto"] for r in fake.requests} == {
            "me@example.org"}
        fake.credits[key] = 0  # the day's credits used up
        result = CliRunner().invoke(cli, ["corpus", "fetch", "openalex:topic:T10017"])
        assert result.exit_code == 1 and "credits a day are used up" in result.output and key not in result.output
    finally:
        fake.stop()


@pytest.fixture
def doubles(monkeypatch):
    now = datetime.now(UTC)
    medrxiv = FakeBiorxiv(preprints=[
        Preprint(f"10.1101/2026.12.0{n}.2634000{n}", title, (now - timedelta(days=n)).date(), abstract=text)
        for n, (title, text) in enumerate([
            ("Transformers for chest radiograph triage", "Transformers for time series forecasting of triage."),
            ("Reward models from radiologists' preferences", "Reward models from human preferences in radiology."),
            ("Normalizing flows for MRI reconstruction", "Normalizing flows as generative models of k-space."),
            ("Graph neural networks for molecules in PET tracers", "Graph neural networks for molecules.")], 1)])
    feed = FakeFeed(items=[
        Item("10.1101/2026.12.01.26340001", "Transformers for chest radiograph triage", now - timedelta(days=1),
             abstract="The journal version of the medRxiv preprint."),  # the same paper: shown once
        Item("10.1038/s41591-026-03100-1", "Normalizing flows as generative models for CT", now - timedelta(days=2),
             abstract="Normalizing flows as generative models of CT images.")])
    monkeypatch.setenv("ZOTREC_BIORXIV_API", medrxiv.start())
    feed.url = feed.start()
    yield medrxiv, feed
    medrxiv.stop()
    feed.stop()


def test_daily_with_medrxiv_and_a_journal_feed_end_to_end(doubles, tmp_path):
    import feedparser

    medrxiv, feed = doubles
    atom = tmp_path / "day.xml"
    args = ["daily", "--library", LIBRARY, "--corpus", "medrxiv:radiology", "--corpus", f"feed:{feed.url}",
            "-n", "10", "--features", "tfidf", "--atom", str(atom)]
    out = run(*args)
    assert "4 new" in out and "2 new" in out
    entries = feedparser.parse(atom.read_bytes()).entries
    titles = [entry.title for entry in entries]
    assert len(titles) == len(set(titles)) == 5  # 4 preprints + 2 feed items, the shared DOI once
    assert "Transformers for chest radiograph triage" in titles
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    asked = (len(medrxiv.requests), len(feed.requests))
    out = run(*args)
    assert "Already done today" in out
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == before
    assert (len(medrxiv.requests), len(feed.requests)) == asked


def test_a_full_disk_or_a_killed_fetch_leaves_the_stored_corpus_whole(tmp_path, small_disk, doubles):
    medrxiv, _ = doubles
    disk, fill = small_disk
    env = {"ZOTREC_DATA_DIR": str(disk)}
    first = CliRunner().invoke(cli, ["corpus", "fetch", "medrxiv:radiology"], env=env)
    assert first.exit_code == 0, first.output
    stored = disk / "corpora" / "medrxiv-radiology_and_imaging.json"
    kept = stored.read_bytes()
    medrxiv.preprints += [Preprint(f"10.1101/2026.12.09.2635{n:04d}", f"Long study {n}", date.today(),
                                   abstract="words " * 300) for n in range(40)]
    fill()
    again = CliRunner().invoke(cli, ["corpus", "fetch", "medrxiv:radiology"], env=env)
    assert again.exit_code == 1 and "No space left" in again.output and "Traceback" not in again.output
    assert stored.read_bytes() == kept and sorted(p.name for p in stored.parent.iterdir()) == [stored.name]


def test_a_fetch_killed_midway_leaves_the_stored_corpus_whole(doubles, data_dir):
    import os
    import signal
    import subprocess
    import sys
    import time

    medrxiv, _ = doubles
    run("corpus", "fetch", "medrxiv:radiology")
    stored = stored_path("medrxiv-radiology_and_imaging")
    kept = stored.read_bytes()
    medrxiv.preprints += [Preprint(f"10.1101/2026.12.09.2636{n:04d}", f"Study {n}", date.today())
                          for n in range(200)]
    env = {**os.environ, "ZOTREC_BIORXIV_PAUSE_S": "0.5", "OPENBLAS_NUM_THREADS": "1"}
    process = subprocess.Popen([sys.executable, "-m", "zotero_bridge", "corpus", "fetch", "medrxiv:radiology"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               cwd=Path(__file__).resolve().parents[1])
    deadline = time.monotonic() + 60
    while len(medrxiv.requests) < 3 and time.monotonic() < deadline:  # paging: the fetch is under way
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert stored.read_bytes() == kept and sorted(p.name for p in stored.parent.iterdir()) == [stored.name]


def test_from_url_asks_another_base_for_the_same_api(doubles, monkeypatch):
    medrxiv, _ = doubles
    import os

    base = os.environ["ZOTREC_BIORXIV_API"]
    monkeypatch.setenv("ZOTREC_BIORXIV_API", "http://127.0.0.1:9/")  # the default would fail: --from wins
    out = run("corpus", "fetch", "medrxiv:radiology", "--from", base)
    assert "4 new" in out and medrxiv.requests[0]["path"].startswith("/details/medrxiv/")


def test_a_quiet_first_day_of_one_stream_leaves_the_daily_run_to_the_others(doubles, tmp_path, monkeypatch):
    """A medRxiv subject with nothing in its window yet (no stored corpus) is a warning; the feed is ranked."""
    medrxiv, feed = doubles
    medrxiv.preprints = []
    atom = tmp_path / "day.xml"
    out = run("daily", "--library", LIBRARY, "--corpus", "medrxiv:radiology", "--corpus", f"feed:{feed.url}",
              "-n", "10", "--features", "tfidf", "--atom", str(atom))
    assert "gave no papers in medRxiv" in out and "the other corpora are ranked" in out, out
    import feedparser

    assert len(feedparser.parse(atom.read_bytes()).entries) == 2  # the feed's two items


def test_from_with_several_streams_is_a_usage_error(doubles, tmp_path):
    _, feed = doubles
    result = CliRunner().invoke(cli, ["daily", "--library", LIBRARY, "--corpus", "medrxiv:radiology", "--corpus",
                                      f"feed:{feed.url}", "--from", str(tmp_path / "x.json"), "--atom",
                                      str(tmp_path / "day.xml")])
    assert result.exit_code == 2 and "--from stands for one source's answer" in result.output
    assert "Traceback" not in result.output
