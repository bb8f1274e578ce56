"""`zotrec daily` and the calendar (issues 38 and 42): the day is the user's in one recorded zone, a state dated
in the future is noticed, delivery comes before memory, a quiet day sends no mail, the feed keeps the week.
Against the arXiv double, a feed file and a real SMTP server (aiosmtpd) on 127.0.0.1."""

from __future__ import annotations

import email
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from email import policy

import pytest
from click.testing import CliRunner

from tests.test_daily import LIBRARY, arxiv, data_dir  # noqa: F401 - the fixtures
from tests.test_delivery import smtp  # noqa: F401 - the SMTP server fixture
from zotero_bridge.cli.main import cli
from zotero_bridge.feedback import days


def daily(arxiv, tmp_path, *extra, code=0):  # noqa: F811
    args = ["daily", "--library", LIBRARY, "--corpus", "arxiv:cs.LG", "--from", arxiv.url, "-n", "3",
            "--features", "tfidf", "--atom", str(tmp_path / "feed.xml"), *extra]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == code, result.output
    return result.output


def seen_rows(data_dir):  # noqa: F811
    if not (data_dir / "seen.sqlite").exists():
        return []
    with sqlite3.connect(data_dir / "seen.sqlite") as db:
        return sorted(db.execute("SELECT corpus_id, first_day FROM seen"))


def at(monkeypatch, when: datetime) -> None:
    monkeypatch.setattr(days, "utc_now", lambda: when)


def test_east_then_west_is_the_next_day_in_the_recorded_zone(arxiv, tmp_path, data_dir, monkeypatch):  # noqa: F811
    import feedparser

    noon = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14: noon UTC is 02:00 the next day
    at(monkeypatch, noon)
    daily(arxiv, tmp_path)
    first = {e.id for e in feedparser.parse((tmp_path / "feed.xml").read_bytes()).entries}
    assert json.loads((data_dir / "calendar.json").read_text())["zone"] == "Pacific/Kiritimati"
    monkeypatch.setenv("TZ", "Pacific/Pago_Pago")  # a day later, UTC-11: the same date there as the first run's
    at(monkeypatch, noon + timedelta(days=1))
    out = daily(arxiv, tmp_path)
    assert "Already done today" not in out and "Wrote 3 papers" in out
    entries = feedparser.parse((tmp_path / "feed.xml").read_bytes()).entries
    assert not {e.id for e in entries[:3]} & first  # yesterday's papers are not shown again
    listed = CliRunner().invoke(cli, ["reading-list", "--library", LIBRARY, "--corpus", "arxiv:cs.LG", "-n", "3",
                                      "--features", "tfidf", "--format", "json"])
    assert listed.exit_code == 0, listed.output
    shown = {"urn:zotrec:paper:" + row["id"] for row in json.loads(listed.stdout)}
    assert shown == {e.id for e in entries[:3]}  # today's, never yesterday's again


def test_a_state_dated_in_the_future_is_noticed_and_repaired(arxiv, tmp_path, data_dir):  # noqa: F811
    daily(arxiv, tmp_path)
    state = next((data_dir / "daily").glob("*.json"))
    state.write_text(json.dumps({"last_day": "2030-01-05"}))
    with sqlite3.connect(data_dir / "seen.sqlite") as db:  # papers shown while the clock was ahead
        db.execute("UPDATE seen SET first_day = '2030-01-05'")
    out = daily(arxiv, tmp_path)
    assert "The last run is dated 2030-01-05, after today" in out and "starting from today" in out
    assert "Wrote 3 papers" in out
    assert json.loads(state.read_text())["last_day"] == days.today().isoformat()
    rows = dict(seen_rows(data_dir))
    assert sum(day == days.today().isoformat() for day in rows.values()) == 3  # three new ones, not the 2030 ones
    assert "Already done today" in daily(arxiv, tmp_path)


def test_a_whole_morning_with_the_clock_ahead_is_caught_up_the_next_day(arxiv, tmp_path, data_dir):  # noqa: F811
    """Issue 42's month: a morning run a year ahead did that day (and found nothing in its window); the next
    real morning goes on from the day done before it, so the wrong clock's day is a missed day, not a lost one."""
    daily(arxiv, tmp_path)
    state = next((data_dir / "daily").glob("*.json"))
    two_ago = (days.today() - timedelta(days=2)).isoformat()
    state.write_text(json.dumps({"last_day": "2030-01-05", "before": two_ago}))
    out = daily(arxiv, tmp_path)
    assert f"The last run is dated 2030-01-05, after today (the clock was ahead then); going on from {two_ago}" in out
    assert "Catching up 1 missed day: up to 6 papers (3 a day)" in out
    assert json.loads(state.read_text())["before"] == two_ago  # the day before this one, for the next clock
    state.write_text(json.dumps({"last_day": "2030-01-05", "before": "2029-12-31"}))  # ahead too: afresh
    assert "starting from today" in daily(arxiv, tmp_path)


def test_a_refused_mail_marks_nothing_seen_and_leaves_the_day_to_do(arxiv, tmp_path, data_dir, smtp):  # noqa: F811
    async def refuse(server, session, envelope):
        return "554 5.7.1 not today"

    accept = smtp.handle_DATA
    smtp.handle_DATA = refuse
    out = daily(arxiv, tmp_path, "--mail-to", "me@example.org", code=1)
    assert "nothing was sent" in out or "554" in out
    assert seen_rows(data_dir) == [] and not list((data_dir / "daily").glob("*.json"))
    smtp.handle_DATA = accept
    out = daily(arxiv, tmp_path, "--mail-to", "me@example.org")
    assert "Sent 3 papers" in out and len(smtp.messages) == 1 and len(seen_rows(data_dir)) == 3


def test_a_feed_that_does_not_parse_marks_nothing_seen(arxiv, tmp_path, data_dir, monkeypatch):  # noqa: F811
    from zotero_bridge.render import atom

    real = atom.render_atom
    monkeypatch.setattr(atom, "render_atom", lambda *a, **k: real(*a, **k).replace("</feed>", "\ufffe</feed>"))
    out = daily(arxiv, tmp_path, code=1)
    assert "the feed does not check out" in out and "no paper was marked seen" in out
    assert seen_rows(data_dir) == [] and not list((data_dir / "daily").glob("*.json"))


def test_a_quiet_day_sends_no_mail_unless_asked(arxiv, tmp_path, data_dir, smtp):  # noqa: F811
    import feedparser

    daily(arxiv, tmp_path, "-n", "20", "--mail-to", "me@example.org")  # every paper shown on day one
    assert len(smtp.messages) == 1

    def a_day_passes():
        state = next((data_dir / "daily").glob("*.json"))
        value = json.loads(state.read_text())
        value["last_day"] = (datetime.fromisoformat(value["last_day"]) - timedelta(days=1)).date().isoformat()
        state.write_text(json.dumps(value))
        with sqlite3.connect(data_dir / "seen.sqlite") as db:
            db.execute("UPDATE seen SET first_day = date(first_day, '-1 day')")

    a_day_passes()
    out = daily(arxiv, tmp_path, "-n", "20", "--mail-to", "me@example.org")
    assert "Nothing new today: no mail was sent (--mail-empty sends one anyway)" in out and len(smtp.messages) == 1
    assert len(feedparser.parse((tmp_path / "feed.xml").read_bytes()).entries) == 12  # the feed keeps the week
    a_day_passes()
    daily(arxiv, tmp_path, "-n", "20", "--mail-to", "me@example.org", "--mail-empty")
    assert len(smtp.messages) == 2
    text = email.message_from_bytes(smtp.messages[1].content, policy=policy.default).get_body(("plain",))
    assert "No new papers today." in text.get_content()


def test_the_digest_numbers_one_to_n_and_names_the_library_not_its_path(arxiv, tmp_path, data_dir, smtp):  # noqa: F811
    daily(arxiv, tmp_path, "--mail-to", "me@example.org")
    message = email.message_from_bytes(smtp.messages[0].content, policy=policy.default)
    text, html = message.get_body(("plain",)).get_content(), message.get_body(("html",)).get_content()
    numbers = [line.split(".")[0] for line in text.splitlines() if line[:1].isdigit()]
    assert numbers == ["1", "2", "3"]
    folder = LIBRARY.rsplit("/", 1)[0]
    for body in (text, html, (tmp_path / "feed.xml").read_text()):
        assert folder not in body
    assert "Library: library.bib" in text and "library.bib" in html
    assert "--include-seen" not in text + html
    assert "<style" not in html and "<ol" not in html and "<table" not in html  # inline styles, numbers in text
    assert html.index("1. ") < html.index("Where this comes from")  # the papers first, the provenance below


def test_later_puts_a_paper_off_until_the_user_s_tomorrow_not_utc_s(data_dir, monkeypatch):  # noqa: F811
    from zotero_bridge.feedback.ratings import LATER, Rating, later_today

    monkeypatch.setenv("ZOTREC_TIMEZONE", "Asia/Tokyo")  # UTC+9
    put_off = {"x": Rating("x", "X", LATER, "2026-12-03T16:30:00Z")}  # 01:30 on 4 December in Tokyo
    assert later_today(put_off, datetime(2026, 12, 4, 14, 0, tzinfo=UTC)) == {"x"}  # 23:00 in Tokyo: same day
    assert later_today(put_off, datetime(2026, 12, 4, 15, 30, tzinfo=UTC)) == frozenset()  # 00:30 on the 5th
    damaged = {"y": Rating("y", "Y", LATER, "yesterday")}
    assert later_today(damaged, datetime(2026, 12, 4, 14, 0, tzinfo=UTC)) == frozenset()
