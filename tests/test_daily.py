"""`zotrec daily`: a day end to end against the arXiv double, a feed file and a real SMTP server; run twice the
same day, the second run writes nothing; a run while another holds the lock does nothing."""

from __future__ import annotations

import email
import os
from datetime import UTC, date, datetime, timedelta
from email import policy
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fake_arxiv import FakeArxiv, paper
from tests.test_delivery import smtp  # noqa: F401 - the SMTP server fixture
from zotero_bridge.cli.main import cli

LIBRARY = str(Path(__file__).resolve().parents[1] / "examples" / "library.bib")
TOPICS = ["Transformers for time series forecasting", "Reward models from human preferences",
          "Normalizing flows as generative models", "Graph neural networks for molecules"]


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    monkeypatch.setenv("ZOTREC_ARXIV_PAUSE_S", "0")
    return tmp_path / "zotrec-data"


@pytest.fixture
def arxiv():
    fake = FakeArxiv()
    fake.url = fake.start()
    now = datetime.now(UTC)
    fake.add(*[paper(n, now - timedelta(hours=2 + n), title=f"{TOPICS[n % 4]}, study {n}",
                     abstract=f"{TOPICS[n % 4]}: method {n}.") for n in range(1, 13)])
    yield fake
    fake.stop()


def daily(arxiv, tmp_path, *extra):
    args = ["daily", "--library", LIBRARY, "--corpus", "arxiv:cs.LG", "--from", arxiv.url, "-n", "3",
            "--features", "tfidf", "--atom", str(tmp_path / "feed.xml"), *extra]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.output


def fingerprint(folder: Path) -> dict:
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_day_end_to_end_then_a_second_run_writes_nothing(arxiv, tmp_path, data_dir, smtp):  # noqa: F811
    import feedparser

    out = daily(arxiv, tmp_path, "--mail-to", "me@example.org")
    assert "12 new" in out and "Wrote 3 papers" in out and "Sent 3 papers to me@example.org" in out
    feed = feedparser.parse((tmp_path / "feed.xml").read_bytes())
    assert len(feed.entries) == 3 and not feed.bozo
    [envelope] = smtp.messages
    text = email.message_from_bytes(envelope.content, policy=policy.default).get_body(("plain",)).get_content()
    for entry in feed.entries:
        assert entry.title in text
    assert text.count("Because you saved:") == 3
    before, requests = fingerprint(tmp_path), len(arxiv.requests)
    out = daily(arxiv, tmp_path, "--mail-to", "me@example.org")
    assert "Already done today" in out and "nothing was fetched, written or sent" in out
    assert fingerprint(tmp_path) == before  # the feed, the corpus, the seen memory, the state: untouched
    assert len(arxiv.requests) == requests and len(smtp.messages) == 1


def test_the_next_day_catches_up_and_shows_only_unseen_papers(arxiv, tmp_path, data_dir):
    import feedparser
    import sqlite3

    daily(arxiv, tmp_path)
    first = {e.id for e in feedparser.parse((tmp_path / "feed.xml").read_bytes()).entries}
    state = next((data_dir / "daily").glob("*.json"))
    three_days_ago = (date.today() - timedelta(days=3)).isoformat()
    state.write_text(state.read_text().replace(date.today().isoformat(), three_days_ago))
    with sqlite3.connect(data_dir / "seen.sqlite") as db:
        db.execute("UPDATE seen SET first_day = ?", (three_days_ago,))
    out = daily(arxiv, tmp_path)
    assert "Catching up 2 missed days: up to 9 papers (3 a day)" in out
    entries = feedparser.parse((tmp_path / "feed.xml").read_bytes()).entries
    today = [e.id for e in entries[:9]]
    assert len(set(today)) == 9 and not first & set(today)  # 3 a day for today and the 2 missed days, all unseen
    assert {e.id for e in entries[9:]} == first  # the feed keeps the week: the earlier picks below today's


def test_a_run_while_another_holds_the_lock_does_nothing(arxiv, tmp_path):
    from zotero_bridge.deliver.schedule import DayLock

    with DayLock():
        result = CliRunner().invoke(cli, ["daily", "--library", LIBRARY, "--corpus", "arxiv:cs.LG", "--from",
                                          arxiv.url, "--atom", str(tmp_path / "feed.xml"), "--features", "tfidf"])
    assert result.exit_code == 1 and "another `zotrec daily` is running" in result.output
    assert not (tmp_path / "feed.xml").exists() and arxiv.requests == []


def test_daily_needs_a_delivery():
    result = CliRunner().invoke(cli, ["daily", "--library", LIBRARY, "--corpus", "arxiv:cs.LG"])
    assert result.exit_code == 2 and "--atom FILE, --mail-to ADDRESS and/or --sync" in result.output
