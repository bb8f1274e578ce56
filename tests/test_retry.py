"""The one retry rule (recommender/retry.py): bounded tries, the server's wait obeyed up to a limit, our
growing backoff within the deadline; and both HTTP users (corpus fetch, Zotero Web API) go through it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from recommender.retry import GaveUp, Retry, RetryPolicy, retry_after, with_retries


class FakeTime:
    """A clock that moves only when slept on (or when a try says it took time); remembers every wait."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def failing(answers: list[float | None | str], time: FakeTime | None = None, took: float = 0.0):
    """An attempt that raises Retry with each wait in `answers` in turn ('ok' returns), taking `took` seconds."""
    calls: list[int] = []

    def attempt() -> str:
        calls.append(1)
        if time is not None:
            time.now += took
        answer = answers[len(calls) - 1]
        if answer == "ok":
            return "done"
        raise Retry(f"try {len(calls)}", answer)

    return attempt, calls


def policy(time: FakeTime, **overrides) -> RetryPolicy:
    return RetryPolicy(**{"sleep": time.sleep, "clock": time.clock, "deadline_s": 60.0, **overrides})


def test_the_servers_wait_then_our_growing_backoff_then_success():
    time = FakeTime()
    attempt, calls = failing([7.0, None, None, "ok"])
    seen: list[tuple[str, float, int]] = []
    assert with_retries(attempt, policy(time), lambda *args: seen.append(args)) == "done"
    assert len(calls) == 4
    assert time.waits == [7.0, 4.0, 8.0]  # the server's number, then first_wait_s (2) × 2, × 4
    assert [(reason, tries) for reason, _, tries in seen] == [("try 1", 1), ("try 2", 2), ("try 3", 3)]


def test_tries_are_bounded():
    time = FakeTime()
    attempt, calls = failing([1.0] * 10)
    with pytest.raises(GaveUp) as end:
        with_retries(attempt, policy(time, attempts=3))
    assert (end.value.why, end.value.tries, end.value.reason) == ("tries", 3, "try 3")
    assert len(calls) == 3 and time.waits == [1.0, 1.0]


def test_a_wait_longer_than_the_limit_stops_before_sleeping():
    time = FakeTime()
    attempt, calls = failing([3600.0, "ok"])
    with pytest.raises(GaveUp) as end:
        with_retries(attempt, policy(time, max_wait_s=120))
    assert (end.value.why, end.value.wait) == ("wait", 3600.0)
    assert len(calls) == 1 and time.waits == []


def test_our_backoff_never_starts_past_the_deadline():
    """Tries that take 25 s each: 25 + 2 + 25 + 4 + 25 = 81 s > 60 s, so no third wait is started."""
    time = FakeTime()
    attempt, calls = failing([None] * 5, time, took=25.0)
    with pytest.raises(GaveUp) as end:
        with_retries(attempt, policy(time))
    assert end.value.why == "deadline" and end.value.tries == 3 == len(calls)
    assert time.waits == [2.0, 4.0] and end.value.spent == pytest.approx(81.0)


def test_a_wait_the_server_asks_for_is_not_cut_by_the_deadline():
    """README: a wait the server itself asks for is honoured up to its own limit, not the deadline."""
    time = FakeTime()
    attempt, _ = failing([50.0, 50.0, "ok"])
    assert with_retries(attempt, policy(time, deadline_s=60.0, max_wait_s=120.0)) == "done"
    assert time.waits == [50.0, 50.0]


def test_other_errors_are_not_retried():
    time = FakeTime()

    def attempt() -> None:
        raise KeyError("not a retry")

    with pytest.raises(KeyError):
        with_retries(attempt, policy(time))
    assert time.waits == []


def test_retry_after_reads_seconds_fractions_and_dates():
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= retry_after(later) <= 30
    assert retry_after("12") == 12.0 and retry_after(" 1.5 ") == 1.5 and retry_after("-3") == 0.0
    assert retry_after("soon") is None and retry_after("nan") is None and retry_after("inf") is None
    assert retry_after("") is None and retry_after(None) is None


def test_the_corpus_fetch_obeys_a_fractional_retry_after(tmp_path, monkeypatch):
    from recommender.corpus.fetch import FetchSettings, fetch_corpus
    from tests.fake_openreview import FakeConference, Fault, make_note

    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path))
    with FakeConference([make_note(n) for n in range(5)], challenge=False) as server:
        server.faults.append(Fault("/notes", status=503, headers={"Retry-After": "1.5"}))
        report = fetch_corpus("icml2025", [server.url], FetchSettings(sleep=lambda s: None, backoff=0.01))
    assert report.papers == 5 and report.stats.waits == [1.5]  # the server's number, not our backoff


def test_the_zotero_client_obeys_a_retry_after_date(zotero_server):
    from recommender.retry import RetryPolicy
    from tests.conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
    from zotero_bridge.sources import SourceOptions, read_library

    waits: list[float] = []
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=9), usegmt=True)
    zotero_server.inject(503, times=1, headers={"Retry-After": when})
    options = SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY, endpoint=zotero_server.url,
                            extra={"retry_policy": RetryPolicy(sleep=waits.append)})
    read = read_library(["zotero:web"], options)
    assert len(read.items) == 20
    assert len(waits) == 1 and 6 < waits[0] <= 9  # the date's seconds, not our 2 s backoff
