"""Days of new papers for the daily benchmarks (benchmarks/stream_days.py): the papers and the night between."""

from __future__ import annotations

import sqlite3
from datetime import date, datetime, timedelta
from pathlib import Path


def day_papers(titles: list[str], day: int, count: int, when: datetime) -> list:
    """`count` arXiv versions of day `day`, from titles the library does not hold (it takes the first ones)."""
    from tests.fake_arxiv import Version

    start = 6000 + day * count * 9
    papers = []
    for n in range(count):
        base = start + n * 9
        abstract = ". ".join(titles[(base + k) % len(titles)] for k in range(1, 9)) + "."
        stamp = when - timedelta(minutes=n)
        papers.append(Version(base=f"2503.{day * count + n:05d}", title=titles[base % len(titles)],
                              abstract=abstract, categories=("cs.LG",), published=stamp, updated=stamp))
    return papers


def a_night_passes(data: Path) -> None:
    """The daily state and the seen memory as the next morning finds them."""
    for state in (data / "daily").glob("*.json"):
        text = state.read_text(encoding="utf-8")
        state.write_text(text.replace(date.today().isoformat(), (date.today() - timedelta(days=1)).isoformat()),
                         encoding="utf-8")
    with sqlite3.connect(data / "seen.sqlite") as db:
        db.execute("UPDATE seen SET first_day = date(first_day, '-1 day')")

