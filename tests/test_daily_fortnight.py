"""Simulated weeks of `zotrec daily` (issues 38 and 42's "Done when"): each day a real `zotrec daily` process
under libfaketime (Debian's `faketime`, the clock starting at that morning and running), against the arXiv double
(its answers checked against the manual's real one), the fake Zotero Web API and a real SMTP server (aiosmtpd)
on 127.0.0.1. Weekdays bring four new papers, weekends none; some days are missed; runs are made across the
date line (UTC+14, then UTC-11, and in the month back again) and with the clock a year ahead (a Saturday
afternoon; in the month also a whole weekday morning, put right the next day). It shows: every mail numbers
1..N, every paper is mailed once and enters the feed once, quiet days send nothing, missed days are caught up
(N a day), each calendar day is done once (the state's day; a second run that morning does nothing), the
stored corpus holds every paper of the window counted from the real day (read from its JSON), the collection
is the window's best N with the kept paper added (`sync --dry-run` wants no change), the feed holds the week.
`ZOTREC_FORTNIGHT_REPORT=FILE` / `ZOTREC_MONTH_REPORT=FILE` write the day-by-day table (docs/daily.md has them)."""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
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
TOP_N = 4
WINDOW = 7  # the stream's default window, in days
NAME = "Recommended · arXiv cs.LG"
EAST, WEST = "Pacific/Kiritimati", "Pacific/Pago_Pago"  # UTC+14 and UTC-11: either side of the date line


@dataclass(frozen=True)
class Plan:
    """One simulation: how many days, which are missed, where the computer is, when its clock is a year ahead."""

    days: int
    missed: frozenset[int]  # the computer was off
    travel: dict[int, str]  # day → the zone the computer is set to (else UTC, the recorded one)
    afternoon_jump: int  # that afternoon a second run has the clock a year ahead
    morning_jumps: frozenset[int] = frozenset()  # that morning's run itself has the clock a year ahead
    twice: frozenset[int] = frozenset()  # a second run that morning (cron and a manual one)
    report: str = field(default="ZOTREC_FORTNIGHT_REPORT")


FORTNIGHT = Plan(14, frozenset({8, 9}), {3: EAST, 4: WEST}, afternoon_jump=5)
MONTH = Plan(30, frozenset({8, 9, 23}), {3: EAST, 4: WEST, 17: WEST, 18: EAST}, afternoon_jump=5,
             morning_jumps=frozenset({15}), twice=frozenset({1, 16, 18}), report="ZOTREC_MONTH_REPORT")


def announced(day: int) -> list:
    """The papers arXiv announces the evening before `day` (none before a Saturday or a Sunday)."""
    when = START + timedelta(days=day)
    if when.weekday() >= 5:
        return []
    evening = when - timedelta(hours=11)
    return [paper(100 * day + n, evening, hour=20, title=f"{TOPICS[(n + day) % 5].title()}: study {day}.{n}",
                  abstract=f"{TOPICS[(n + day) % 5]} {TOPICS[(n + 2 * day) % 5]} we show {day} {n}")
            for n in range(4)]


def zotrec(env: dict, when: datetime, *args: str) -> subprocess.CompletedProcess:
    from zoneinfo import ZoneInfo

    stamp = when.astimezone(ZoneInfo(env["TZ"])).strftime("@%Y-%m-%d %H:%M:%S")  # faketime reads local time
    return subprocess.run(["faketime", "-f", stamp, sys.executable, "-m", "zotero_bridge", *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=REPO)


def mailed_titles(envelope) -> list[str]:
    text = email.message_from_bytes(envelope.content, policy=policy.default).get_body(("plain",))
    numbered = [line for line in text.get_content().splitlines() if line[:1].isdigit()]
    assert [int(line.split(".")[0]) for line in numbered] == list(range(1, len(numbered) + 1))
    return [line.split(". ", 1)[1] for line in numbered]


def said(run: subprocess.CompletedProcess) -> str:
    """What a run said about its days and its corpus (the table's last column), shortened."""
    keys = ("after today", "kept as it is", "Catching up", "Already done", "no papers")
    return " / ".join(line.split(";")[0].split(" (")[0] for line in run.stderr.splitlines()
                      if any(key in line for key in keys))


def state_day(data: Path) -> str:
    """The one job's last day done, as its state file in the data folder says."""
    [state] = (data / "daily").glob("*.json")
    return json.loads(state.read_text(encoding="utf-8"))["last_day"]


def stored_ids(data: Path) -> set[str]:
    """The arXiv ids the stored corpus holds, read from its JSON directly."""
    stored = json.loads((data / "corpora" / "arxiv-cs.lg.json").read_text(encoding="utf-8"))
    return {str(row["id"]).removeprefix("arxiv:").split("v")[0] for row in stored["papers"]}


def in_window(day: int) -> set[str]:
    """The ids of the window counted from the real morning of `day` (papers announced the evening before)."""
    now = START + timedelta(days=day)
    return {v.base for d in range(day + 1) for v in announced(d) if v.updated >= now - timedelta(days=WINDOW)}


@pytest.mark.parametrize("plan", [FORTNIGHT, MONTH], ids=["fortnight", "month"])
def test_simulated_days(plan, zotero_server, smtp, tmp_path, monkeypatch):  # noqa: F811
    if shutil.which("faketime") is None:
        pytest.skip("Debian's faketime (libfaketime) is not installed")
    import feedparser

    arxiv = FakeArxiv()
    url = arxiv.start()
    data = tmp_path / "data"
    env = {**os.environ, "PYTHONPATH": str(REPO), "ZOTREC_DATA_DIR": str(data),
           "ZOTREC_CACHE_DIR": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "ZOTREC_ARXIV_PAUSE_S": "0", "TZ": "UTC", "FAKETIME_DONT_FAKE_MONOTONIC": "1",
           "ZOTERO_LIBRARY_ID": str(ZOTERO_USER_ID), "ZOTERO_API_KEY": ZOTERO_WRITE_KEY,
           "ZOTERO_API_ENDPOINT": zotero_server.url, "OPENBLAS_NUM_THREADS": "1"}
    feed = tmp_path / "arxiv.xml"
    daily = ["daily", "--library", "zotero:web", "--corpus", "arxiv:cs.LG", "--from", url, "-n", str(TOP_N),
             "--features", "tfidf", "--atom", str(feed), "--feed-url", "https://example.org/arxiv.xml",
             "--mail-to", "me@example.org", "--sync"]
    shown: dict[str, int] = {}  # paper → the day it was mailed
    in_feed: set[str] = set()  # every paper the feed ever held
    left: set[str] = set()  # every paper that has left the feed
    rows, kept_key, ahead = [], None, None  # ahead: the date a clock set ahead left in the state
    last_real = -1  # the last day a run had the right clock: today, each missed day and one done ahead
    try:
        for day in range(plan.days):
            arxiv.add(*announced(day))
            if day in plan.missed:
                rows.append((day, "missed", "", "", "", "", "", ""))
                continue
            real = START + timedelta(days=day)
            jumped = day in plan.morning_jumps
            when = real.replace(year=real.year + 1) if jumped else real
            mails = len(smtp.messages)
            before = stored_ids(data) if day else set()
            run = zotrec({**env, "TZ": plan.travel.get(day, "UTC")}, when, *daily)
            assert run.returncode == 0, run.stdout + run.stderr
            if ahead is not None and not jumped:  # the morning after a clock set ahead: the state is noticed
                assert f"The last run is dated {ahead}, after today" in run.stderr, run.stderr
                ahead = None
            done = state_day(data)
            assert done == when.date().isoformat(), (day, run.stderr)  # this day done, and only it
            held, last_real = day - last_real, (last_real if jumped else day)  # N papers for each day since
            if jumped:  # the clock is wrong, the corpus is not: nothing stored is dropped
                assert before <= stored_ids(data), (day, sorted(before - stored_ids(data)))
                ahead = when.date().isoformat()
            else:  # every paper of the real window is stored
                assert in_window(day) <= stored_ids(data), (day, sorted(in_window(day) - stored_ids(data)))
            notes = [said(run)] if said(run) else []
            ids = []
            if len(smtp.messages) > mails:
                [envelope] = smtp.messages[mails:]
                ids = mailed_titles(envelope)
            waiting = [title for title in (p.title for d in range(day + 1) for p in announced(d))
                       if title not in shown]
            if not waiting:
                assert not ids, f"day {day}: a quiet day sent a mail"
            elif jumped:  # a year ahead, the window holds nothing: nothing is sent, the next day catches up
                assert not ids, (day, ids)
            else:
                assert len(ids) == min(len(waiting), TOP_N * held), (day, len(ids), len(waiting), run.stderr)
            for title in ids:
                assert title not in shown, f"{title} shown on day {shown.get(title)} and again on day {day}"
                shown[title] = day
            held_now = [e.title for e in feedparser.parse(feed.read_bytes()).entries] if feed.exists() else []
            assert len(held_now) == len(set(held_now)), f"day {day}: a paper twice in the feed"
            assert set(held_now) - in_feed == set(ids), f"day {day}: the feed's new entries are not the mail's"
            assert not left & set(held_now), f"day {day}: a paper back in the feed after leaving it"
            left |= in_feed - set(held_now)
            in_feed |= set(held_now)
            if day in plan.twice:  # a second run that morning: the day is done, nothing more is sent
                again = zotrec({**env, "TZ": plan.travel.get(day, "UTC")}, when + timedelta(minutes=2), *daily)
                assert again.returncode == 0 and "Already done today" in again.stderr, again.stderr
                assert len(smtp.messages) == mails + bool(ids) and state_day(data) == when.date().isoformat()
            plan_run = zotrec(env, when + timedelta(minutes=5), "sync", "--corpus", "arxiv:cs.LG", "-n",
                              str(TOP_N), "--features", "tfidf", "--dry-run", "--format", "json")
            assert plan_run.returncode == 0, plan_run.stdout + plan_run.stderr
            counts = json.loads(plan_run.stdout)["counts"]
            assert counts["add"] == counts["link"] == counts["remove"] == counts["trash"] == 0, (day, counts)
            library = zotero_server.library("user", ZOTERO_USER_ID)
            members = [d for d in library.items.values() if d.get("itemType") == "preprint"
                       and not d.get("deleted") and any(library.collections[c]["name"] == NAME
                                                        for c in d.get("collections", []))]
            if day == 2:  # the user keeps one of the picks (a tag of their own): it stays, whatever comes
                kept_key = members[0]["key"]
                zotero_server.edit_item(library, kept_key, tags=[*members[0]["tags"], {"tag": "to-read"}])
            if day == plan.afternoon_jump:  # that afternoon the clock says a year later; put right by morning
                before = len(smtp.messages)
                late = zotrec(env, real.replace(year=real.year + 1, hour=13), *daily)
                assert late.returncode in (0, 1) and "bug in zotrec" not in late.stderr, late.stderr
                assert len(smtp.messages) == before  # nothing unseen on a Saturday, whatever the clock says
                if late.returncode == 0:
                    ahead = real.replace(year=real.year + 1).date().isoformat()
                notes.append(f"13:00 with the clock a year ahead: exit {late.returncode}, {said(late)}")
            rows.append((day, when.strftime("%a %d %Y" if jumped else "%a %d"), plan.travel.get(day, "UTC"),
                         done, len(ids), len(members),
                         ", ".join(sorted((m["title"].split(": study ")[1] for m in members),
                                     key=lambda pick: tuple(map(int, pick.split("."))))), "; ".join(notes)))
        every = {p.title for d in range(plan.days) for p in announced(d)}
        assert set(shown) == every, sorted(every - set(shown))  # every paper mailed (once: checked each day)
        assert in_feed == every
        entries = feedparser.parse(feed.read_bytes()).entries
        last = START + timedelta(days=plan.days - 1)
        week = {t for t, d in shown.items() if START + timedelta(days=d) > last - timedelta(days=7)}
        assert {e.title for e in entries} == week  # the feed holds the week, newest first
        assert [e.published for e in entries] == sorted((e.published for e in entries), reverse=True)
        library = zotero_server.library("user", ZOTERO_USER_ID)
        assert not library.items[kept_key].get("deleted") and library.items[kept_key]["collections"]
    finally:
        arxiv.stop()
    report = os.environ.get(plan.report)
    if report:
        lines = ["| day | date | zone | state's day | mailed | in the collection | which (day.paper) | said |",
                 "|---|---|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
        Path(report).write_text("\n".join(lines) + "\n", encoding="utf-8")
