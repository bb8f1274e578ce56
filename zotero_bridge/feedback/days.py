"""The user's calendar day, in one time zone: what "today" means to `daily`, the seen memory and the lists.

A run east of the date line and the next one west of it must agree on what day it is, so the zone is recorded
once (calendar.json in the data folder: the system's zone at the first run, or `ZOTREC_TIMEZONE`, which also
records a new one) and every later run counts days in it, wherever the computer's clock is set to now. The
clock itself is data, not trust: a day recorded after today (a clock once set ahead) is noticed by the caller
(deliver/schedule.DayState), never taken as "already done".
"""

from __future__ import annotations

import json
import logging
import os
import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from pathlib import Path

log = logging.getLogger(__name__)

ZONE_ENV = "ZOTREC_TIMEZONE"
_OFFSET = re.compile(r"^UTC([+-])(\d\d):(\d\d)$")


def utc_now() -> datetime:
    """Now, from the computer's clock (one place, so a simulation can set it)."""
    return datetime.now(UTC)


def today(now: datetime | None = None, *, record: bool = False) -> date:
    """The user's calendar day now, in the recorded zone (`record`: record it if it is not yet, as `daily`
    does; a list only reads it, and needs no data folder)."""
    return (now or utc_now()).astimezone(zone(record=record)).date()


def zone(*, record: bool = False) -> tzinfo:
    """The recorded zone, else the system's; with `record`, the first run (or ZOTREC_TIMEZONE) records it. A
    data folder that cannot be written leaves the system's zone in use, unrecorded."""
    wanted = os.environ.get(ZONE_ENV, "").strip()
    path = _calendar_path()
    recorded = _read(path)
    name = wanted or recorded or system_zone_name()
    found = parse_zone(name)
    if found is None:
        if wanted:
            log.warning("%s=%s is not a time zone (an IANA name such as Europe/Berlin, or UTC+05:30); "
                        "using %s", ZONE_ENV, wanted, recorded or system_zone_name())
        name = recorded if recorded and parse_zone(recorded) else system_zone_name()
        found = parse_zone(name) or UTC
    if record and name != recorded:
        _record(path, name)
    return found


def system_zone_name() -> str:
    """The system's zone as an IANA name (TZ, /etc/localtime), else its present UTC offset."""
    named = os.environ.get("TZ", "").lstrip(":").strip()
    if named and parse_zone(named) is not None and "/" in named:
        return named
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target and not named:
            candidate = target.split("zoneinfo/", 1)[1]
            if parse_zone(candidate) is not None:
                return candidate
    except OSError:
        pass
    offset = datetime.now().astimezone().utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def parse_zone(name: str) -> tzinfo | None:
    """An IANA zone or `UTC±HH:MM`; None for anything else."""
    if not name:
        return None
    if match := _OFFSET.match(name):
        sign, hours, minutes = match.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes))
        return timezone(-delta if sign == "-" else delta) if delta < timedelta(hours=15) else None
    if name in ("UTC", "Etc/UTC"):
        return UTC
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except (ValueError, OSError, LookupError):  # ZoneInfoNotFoundError is a KeyError; a bad key a ValueError
        return None


def _calendar_path() -> Path:
    from recommender.store import data_dir

    return data_dir() / "calendar.json"


def _read(path: Path) -> str:
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("zone", "")
        return value if isinstance(value, str) else ""
    except (OSError, ValueError, AttributeError):
        return ""


def _record(path: Path, name: str) -> None:
    from recommender.store import private_dir, write_bytes

    try:
        private_dir(path.parent)
        write_bytes(path, json.dumps({"zone": name}).encode())
    except OSError as error:
        log.debug("the time zone was not recorded (%s)", error)
