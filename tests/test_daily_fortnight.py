"""A simulated fortnight of `zotrec daily` (issue 38's "Done when"): each day a real `zotrec daily` process under
libfaketime (Debian's `faketime`, the clock starting at that morning and running), against the arXiv double
(its answers checked against the manual's real one), the fake Zotero Web API and a real SMTP server (aiosmtpd)
on 127.0.0.1. Weekdays bring four new papers, weekends none; two days are missed; two runs are made across the
date line (UTC+14, then UTC-11) and one with the clock a year ahead. It shows: every mail numbers
1..N, every paper is shown once, quiet days send nothing, missed days are caught up (N a day), the collection
is the window's best N with the kept paper added (`sync --dry-run` wants no change), the feed holds the week.
`ZOTREC_FORTNIGHT_REPORT=FILE` writes the day-by-day table (docs/daily.md has one)."""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from email import policy
from pathlib import Path

import pytest

from tests.conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from tests.fake_arxiv import FakeArxiv, paper
from tests.test_arxiv_rolling import TOPICS
from tests.test_delivery import smtp  # noqa: F401 - the SMTP server fixture

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
START = datetime(2027, 3, 1, 7, 15, tzinfo=UTC)  # a Monday
DAYS = 14
MISSED = {8, 9}  # Tuesday and Wednesday of the second week: the computer was off
TRAVEL = {3: "Pacific/Kiritimati", 4: "Pacific/Pago_Pago"}  # UTC+14, then UTC-11: across the date line
JUMP = 5  # Saturday afternoon the clock says a year later
TOP_N = 4
NAME = "Recommended · arXiv cs.LG"


def announced(day: int) -> list:
    """The papers arXiv announces the evening before `day` (none before a Saturday or a Sunday)."""
    when = START + timedelta(days=day)
    if when.weekday() >= 5:
        return []
    evening = when - timedelta(hours=11)
    return [paper(100 * day + n, evening, hour=20, title=f"{TOPICS[(n + day) % 5].title()}: study {day}.{n}",
                  abstract=f"{TOPICS[(n + day) % 5]} {TOPICS[(n + 2 * day) % 5]} we show {day} {n}")
            for n in range(4)]


def missed_before(day: int) -> int:
    count = 0
    while day - count - 1 in MISSED:
        count += 1
    return count


def zotrec(env: dict, when: datetime, *args: str) -> subprocess.CompletedProcess:
    from zoneinfo import ZoneInfo

    stamp = when.astimezone(ZoneInfo(env["TZ"])).strftime("@%Y-%m-%d %H:%M:%S")  # faketime reads local time
    return subprocess.run(["faketime", "-f", stamp, sys.executable, "-m", "zotero_bridge", *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=REPO)


def test_a_fortnight(zotero_server, smtp, tmp_path, monkeypatch):  # noqa: F811
    if shutil.which("faketime") is None:
        pytest.skip("Debian's faketime (libfaketime) is not installed")
    arxiv = FakeArxiv()
    url = arxiv.start()
    env = {**os.environ, "PYTHONPATH": str(REPO), "ZOTREC_DATA_DIR": str(tmp_path / "data"),
           "ZOTREC_CACHE_DIR": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "ZOTREC_ARXIV_PAUSE_S": "0", "TZ": "UTC", "FAKETIME_DONT_FAKE_MONOTONIC": "1",
           "ZOTERO_LIBRARY_ID": str(ZOTERO_USER_ID), "ZOTERO_API_KEY": ZOTERO_WRITE_KEY,
           "ZOTERO_API_ENDPOINT": zotero_server.url, "OPENBLAS_NUM_THREADS": "1"}
    feed = tmp_path / "arxiv.xml"
    daily = ["daily", "--library", "zotero:web", "--corpus", "arxiv:cs.LG", "--from", url, "-n", str(TOP_N),
             "--features", "tfidf", "--atom", str(feed), "--feed-url", "https://example.org/arxiv.xml",
             "--mail-to", "me@example.org", "--sync"]
    shown: dict[str, int] = {}  # paper → the day it was mailed
    rows, kept_key, jumped = [], None, None
    try:
        for day in range(DAYS):
            arxiv.add(*announced(day))
            if day in MISSED:
                rows.append((day, "missed", "", "", ""))
                continue
            when = START + timedelta(days=day)
            mails = len(smtp.messages)
            run = zotrec({**env, "TZ": TRAVEL.get(day, "UTC")}, when, *daily)
            assert run.returncode == 0, run.stdout + run.stderr
            if day == JUMP + 1 and jumped.returncode == 0:  # the morning after: the state is noticed
                assert "The last run is dated 2028-03-06, after today" in run.stderr, run.stderr
            ids = []
            if len(smtp.messages) > mails:
                [envelope] = smtp.messages[mails:]
                text = email.message_from_bytes(envelope.content, policy=policy.default).get_body(("plain",))
                numbered = [line for line in text.get_content().splitlines() if line[:1].isdigit()]
                assert [int(line.split(".")[0]) for line in numbered] == list(range(1, len(numbered) + 1))
                ids = [line.split(". ", 1)[1] for line in numbered]
            waiting = [title for title in (p.title for d in range(day + 1) for p in announced(d))
                       if title not in shown]
            if not waiting:
                assert not ids, f"day {day}: a quiet day sent a mail"
            else:
                held = 1 + missed_before(day)  # today and each missed day just before it: N papers each
                assert len(ids) == min(len(waiting), TOP_N * held), (day, len(ids), len(waiting), run.stderr)
            for title in ids:
                assert title not in shown, f"{title} shown on day {shown.get(title)} and again on day {day}"
                shown[title] = day
            plan = zotrec(env, when + timedelta(minutes=5), "sync", "--corpus", "arxiv:cs.LG", "-n", str(TOP_N),
                          "--features", "tfidf", "--dry-run", "--format", "json")
            assert plan.returncode == 0, plan.stdout + plan.stderr
            counts = json.loads(plan.stdout)["counts"]
            assert counts["add"] == counts["link"] == counts["remove"] == counts["trash"] == 0, (day, counts)
            library = zotero_server.library("user", ZOTERO_USER_ID)
            members = [d for d in library.items.values() if d.get("itemType") == "preprint"
                       and not d.get("deleted") and any(library.collections[c]["name"] == NAME
                                                        for c in d.get("collections", []))]
            if day == 2:  # the user keeps one of the picks (a tag of their own): it stays, whatever comes
                kept_key = members[0]["key"]
                zotero_server.edit_item(library, kept_key, tags=[*members[0]["tags"], {"tag": "to-read"}])
            if day == JUMP:  # that afternoon the clock says a year later; it is put right by the next morning
                before = len(smtp.messages)
                jumped = zotrec(env, when.replace(year=when.year + 1, hour=13), *daily)
                assert jumped.returncode in (0, 1) and "bug in zotrec" not in jumped.stderr, jumped.stderr
                assert len(smtp.messages) == before  # nothing unseen on a Saturday, whatever the clock says
            rows.append((day, when.strftime("%a %d"), len(ids), len(members),
                         ", ".join(sorted((m["title"].split(": study ")[1] for m in members),
                                     key=lambda pick: tuple(map(int, pick.split(".")))))))
        import feedparser

        entries = feedparser.parse(feed.read_bytes()).entries
        last = START + timedelta(days=DAYS - 1)
        week = {t for t, d in shown.items() if START + timedelta(days=d) > last - timedelta(days=7)}
        assert {e.title for e in entries} == week  # the feed holds the week, newest first
        assert [e.published for e in entries] == sorted((e.published for e in entries), reverse=True)
        library = zotero_server.library("user", ZOTERO_USER_ID)
        assert not library.items[kept_key].get("deleted") and library.items[kept_key]["collections"]
    finally:
        arxiv.stop()
    report = os.environ.get("ZOTREC_FORTNIGHT_REPORT")
    if report:
        lines = ["| day | date | mailed | in the collection | which (day.paper) |", "|---|---|---|---|---|"]
        lines += [f"| {d} | {w} | {m} | {n} | {which} |" for d, w, m, n, which in rows]
        Path(report).write_text("\n".join(lines) + "\n", encoding="utf-8")
