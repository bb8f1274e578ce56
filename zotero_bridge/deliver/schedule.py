"""What makes `zotrec daily` safe on a schedule: one run at a time (a lock) and each day done once (a state file).

The lock is an advisory `flock` on a private file in the data folder, held for the whole run: a second run
started meanwhile (cron and a manual run, a timer that fires twice) says so in one line and does nothing. The
state remembers, per job (library, corpus and deliveries), the last day done; a run on a day already done
writes nothing, and a run after missed days delivers each missed day's N papers too (`catch_up`), as far as
the window still holds them.
Both files are written 0600, never through a link.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from recommender.words import plural
from zotero_bridge.errors import BridgeError


class AlreadyRunning(BridgeError):
    """Another `zotrec daily` holds the lock."""


def daily_dir() -> Path:
    from recommender.store import data_dir, private_dir

    return private_dir(data_dir() / "daily")


def job_key(*parts: object) -> str:
    """One job's name: a digest of what it ranks and where it delivers (the same command line, the same job)."""
    import hashlib

    return hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:16]


class DayLock:
    """`with DayLock(): …` — the one lock of every daily run on this computer."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or daily_dir() / "daily.lock"
        self.handle: int | None = None

    def __enter__(self) -> DayLock:
        try:
            self.handle = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError as error:
            raise BridgeError(f"{self.path}: cannot open the daily lock ({error.strerror})") from None
        os.fchmod(self.handle, 0o600)
        try:
            import fcntl

            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.handle)
            self.handle = None
            raise AlreadyRunning(f"another `zotrec daily` is running (lock {self.path}); nothing was done") from None
        except ImportError:  # no flock on this system: the lock file's own existence stands in for it
            pass
        return self

    def __exit__(self, *_: object) -> None:
        if self.handle is not None:
            os.close(self.handle)  # closing releases the flock
            self.handle = None


@dataclass(frozen=True)
class DayState:
    """A job's last day done (None: never) and where it is kept. Days are the user's calendar days
    (feedback/days.py); a last day after today is a clock that was ahead: noticed, said, and counted on from the
    day done before it (kept beside it), so the day the wrong clock did is caught up; without one, afresh."""

    path: Path
    last_day: date | None
    ahead: date | None = None  # a last day found after today (then last_day is None)

    @classmethod
    def load(cls, key: str, today: date | None = None) -> DayState:
        path = daily_dir() / f"{key}.json"
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
            last, before = (date.fromisoformat(kept[k]) if kept.get(k) else None for k in ("last_day", "before"))
        except FileNotFoundError:
            return cls(path, None)
        except (OSError, ValueError, AttributeError, TypeError):
            return cls(path, None)  # a damaged state: the day is done again (the seen memory keeps it tidy)
        if last is not None and today is not None and last > today:
            return cls(path, before if before is not None and before <= today else None, ahead=last)
        return cls(path, last)

    def notice(self) -> str:
        """The line a run says about its state, when there is one to say."""
        if self.ahead is not None:
            since = f"going on from {self.last_day.isoformat()}" if self.last_day else "starting from today"
            return f"The last run is dated {self.ahead.isoformat()}, after today (the clock was ahead then); {since}."
        return ""

    def done_today(self, today: date) -> bool:
        return self.last_day is not None and self.last_day >= today

    def missed_days(self, today: date) -> int:
        """Days between the last run and today that no run did (0 before the first run)."""
        if self.last_day is None:
            return 0
        return max(0, (today - self.last_day).days - 1)

    def mark_done(self, today: date, summary: dict) -> None:
        from recommender.store import write_bytes

        before = self.last_day.isoformat() if self.last_day else None  # what a clock found ahead goes back to
        write_bytes(self.path, json.dumps({"last_day": today.isoformat(), "before": before, **summary},
                                          ensure_ascii=False).encode())


def catch_up(missed: int, window: int, top_n: int) -> tuple[int, str]:
    """(how many papers this run delivers, the line that says so): N for today and N for each missed day the
    window still holds; missed days older than the window are named as lost, never silently."""
    if not missed:
        return top_n, ""
    held = min(missed, window - 1) if window > 1 else 0
    line = f"Catching up {plural(missed, 'missed day')}: up to {plural(top_n * (held + 1), 'paper')} ({top_n} a day)"
    if held < missed:
        lost = missed - held
        gone = "the oldest is" if lost == 1 else f"the {lost} oldest are"
        line += (f"; {gone} older than the {window}-day window, whose papers have left it "
                 f"(--days {min(90, window + lost)} keeps more)")
    return top_n * (held + 1), line + "."
