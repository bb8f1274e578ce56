"""The last fetch's parsed pages (recommender/corpus/stream_pages.py): an answer whose bytes are a kept page's is
not parsed again, and the fetch's rows, counts and lines are those of a parse (issue 38)."""

from __future__ import annotations

import math
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import pytest

from recommender.corpus import arxiv as arxiv_module
from recommender.corpus.http import FetchSettings
from recommender.corpus.store import stored_path
from recommender.corpus.stream import StreamPage, fetch_stream, left_out_lines, summary
from recommender.corpus.stream_pages import KeptPages
from recommender.items import Skipped
from recommender.store.paths import cache_dir
from recommender.streams import stream_source
from tests.fake_arxiv import Version, paper, private_data

NOW = datetime(2025, 1, 20, 6, 0, tzinfo=UTC)
SPEC = stream_source("arxiv:stat.ML,cs.LG")


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    return private_data(tmp_path, monkeypatch, pause="0")


@pytest.fixture
def parses(monkeypatch):
    """The arXiv answers parse_answer read (their `where`), counted as the fetch calls it."""
    calls: list[str] = []
    real = arxiv_module.parse_answer

    def counted(body: bytes, where: str):
        calls.append(where)
        return real(body, where)

    monkeypatch.setattr(arxiv_module, "parse_answer", counted)
    return calls


def settings() -> FetchSettings:
    return FetchSettings(sleep=lambda seconds: None, page_size=4)


def day(n: float) -> datetime:
    return NOW - timedelta(days=n)


def kept_file():
    return cache_dir() / "streams" / f"{SPEC.name}.json"


def said(report) -> tuple:
    """Everything a fetch reports and says but the seconds it took."""
    counts = {key: value for key, value in asdict(report).items() if key not in ("seconds", "stats")}
    report.seconds = 0.0
    return counts, summary(report), left_out_lines(report)


def quiet_library(arxiv) -> None:
    """A window with what every count sees: a cross-list, an entry with no title (skipped), a paper from
    the future (clamped) and papers older than the window (left out), over several pages."""
    arxiv.add(*[paper(n, day(n % 5)) for n in range(1, 9)], paper(9, day(1), categories=("stat.ML", "cs.LG")),
              paper(10, day(9)), paper(11, day(10)), paper(12, NOW + timedelta(days=3)))
    arxiv.add(Version("2501.00013", " ", "No title here.", ("cs.LG",), day(2), day(2)))


def test_a_second_fetch_of_the_same_answers_parses_nothing_and_says_the_same(arxiv, parses):
    quiet_library(arxiv)
    fetch_stream(SPEC, [arxiv.url], settings(), now=day(1))
    assert parses and kept_file().is_file()
    parses.clear()
    stored = stored_path(SPEC.name).read_bytes()
    kept = fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    assert parses == [] and kept.pages >= 2 and kept.skipped and kept.too_old and kept.notes.clamped
    kept_file().unlink()  # the same day again from the same stored corpus, every answer parsed
    stored_path(SPEC.name).write_bytes(stored)
    parsed = fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    assert len(parses) == parsed.pages == kept.pages
    assert said(kept) == said(parsed)


def test_a_changed_answer_is_parsed(arxiv, parses):
    arxiv.add(*[paper(n, day(1)) for n in range(1, 4)])
    fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    parses.clear()
    arxiv.add(paper(4, day(0)))
    report = fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    assert len(parses) == report.pages and report.new == ["arxiv:2501.00004"]
    parses.clear()
    assert fetch_stream(SPEC, [arxiv.url], settings(), now=NOW).new == [] and parses == []


def test_a_damaged_or_foreign_kept_file_is_parsed_afresh(arxiv, parses):
    arxiv.add(*[paper(n, day(1)) for n in range(1, 4)])
    fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    kept_file().write_text('{"x": "not a page"', encoding="utf-8")
    parses.clear()
    assert fetch_stream(SPEC, [arxiv.url], settings(), now=NOW).unchanged == 3 and parses
    parses.clear()
    kept_file().chmod(0o666)  # others may write it: never trusted
    assert fetch_stream(SPEC, [arxiv.url], settings(), now=NOW).unchanged == 3 and parses


def test_arxivs_feed_date_is_left_out_of_the_key_and_nothing_else():
    body = (b'<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
            b'  <id>http://arxiv.org/api/x</id>\n  <updated>2025-01-20T00:00:00-05:00</updated>\n'
            b'  <entry>\n    <id>http://arxiv.org/abs/2501.00001v1</id>\n'
            b'    <updated>2025-01-19T12:00:00Z</updated>\n    <title>A</title>\n  </entry>\n</feed>\n')
    next_day = body.replace(b"2025-01-20T00:00:00-05:00", b"2025-01-21T00:00:00-05:00")
    entry_changed = body.replace(b"2025-01-19T12:00:00Z", b"2025-01-19T13:00:00Z")
    assert SPEC.answer_key(body) == SPEC.answer_key(next_day) != SPEC.answer_key(entry_changed)
    assert SPEC.parse(body, "w") == SPEC.parse(next_day, "w")
    assert SPEC.answer_key(b"<feed><entry><updated>x</updated></entry></feed>") == \
        b"<feed><entry><updated>x</updated></entry></feed>"  # an entry's own date is never left out


def test_a_page_json_cannot_give_back_is_not_kept():
    pages = KeptPages("arxiv-test", lambda body: body, StreamPage)
    odd = StreamPage(rows=[{"id": "arxiv:1", "score": math.nan}], skipped=[Skipped("w entry 1", "why")])
    tuple_row = StreamPage(rows=[{"id": "arxiv:2", "categories": ("cs.LG",)}])
    plain = StreamPage(rows=[{"id": "arxiv:3", "categories": ["cs.LG"]}], total=1, start=0,
                       skipped=[Skipped("w entry 2", "no title", True)])
    for body, page in ((b"1", odd), (b"2", tuple_row), (b"3", plain)):
        assert pages.parse(body, "w", lambda *_, page=page: page) is page
    pages.save()
    again = KeptPages("arxiv-test", lambda body: body, StreamPage)
    assert list(again.kept) == [again.key(b"3", "w")]
    assert again.parse(b"3", "w", lambda *_: pytest.fail("parsed")) == plain
    assert again.parse(b"3", "other where", lambda *_: odd) is odd  # the request is in the key
