"""`zotrec corpus fetch arxiv:…` against the arXiv API's real format (the manual's answers) and a local double
that pages, pauses, refuses and shifts like the live service (tests/fake_arxiv.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.corpus.stream import AnswerError, fetch_stream
from recommender.streams import stream_source
from recommender.corpus.arxiv_atom import parse_answer
from recommender.corpus.http import FetchError, FetchSettings
from recommender.corpus.store import read_stored, stored_path
from recommender.errors import InputError
from tests.fake_arxiv import paper, private_data
from zotero_bridge.cli.main import cli

MANUAL = Path(__file__).parent / "data" / "arxiv"
NOW = datetime(2025, 1, 20, 6, 0, tzinfo=UTC)
SPEC = stream_source("arxiv:stat.ML,cs.LG")


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    return private_data(tmp_path, monkeypatch, pause="3")


class Waits(list):
    """FetchSettings.sleep that records the waits instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def settings(waits: Waits | None = None, **overrides) -> FetchSettings:
    return FetchSettings(**{"sleep": waits if waits is not None else Waits(), "page_size": 5, **overrides})


def rows() -> dict[str, dict]:
    return {row["id"]: row for row in read_stored(stored_path(SPEC.name)).papers}


def day(n: int) -> datetime:
    return NOW - timedelta(days=n)


def test_the_manuals_typical_answer_reads_as_one_paper():
    page = parse_answer((MANUAL / "manual-response.xml").read_bytes(), "manual")
    assert (page.total, page.start, page.skipped) == (1000, 0, [])
    [row] = page.rows
    assert row["id"] == "arxiv:hep-ex/0307015" and row["version"] == 1  # an old id, no version in <id>
    assert row["title"] == "Multi-Electron Production at High Transverse Momenta in ep Collisions at HERA"
    assert row["abstract"].startswith("Multi-electron production is studied at high electron transverse momentum in "
                                      "positron- and electron-proton")
    assert row["authors"] == ["H1 Collaboration"]
    assert row["primary_category"] == "hep-ex" and row["categories"] == ["hep-ex"]
    assert row["url"] == "https://arxiv.org/abs/hep-ex/0307015"
    assert row["pdf_url"] == "https://arxiv.org/pdf/hep-ex/0307015v1"
    assert row["published"] == "2003-07-07T17:46:39+00:00"  # -04:00 in the answer, kept in UTC
    assert row["year"] == 2003 and row["comment"] == "23 pages, 8 figures and 4 tables"


def test_the_manuals_error_answer_is_its_message():
    with pytest.raises(AnswerError, match="arXiv says: incorrect id format for 1234.12345"):
        parse_answer((MANUAL / "manual-error.xml").read_bytes(), "manual")


def test_the_double_answers_in_the_manuals_shape(arxiv):
    """The double's answer reads like the manual's: every field the reader uses is where the manual puts it."""
    arxiv.add(paper(1, day(1), categories=("stat.ML", "cs.LG")))
    import httpx2

    body = httpx2.get(arxiv.url, params={"search_query": "cat:cs.LG", "max_results": 10}).content
    manual, double = parse_answer((MANUAL / "manual-response.xml").read_bytes(), "m"), parse_answer(body, "d")
    assert set(manual.rows[0]) == set(double.rows[0])
    assert double.rows[0]["primary_category"] == "stat.ML" and double.total == 1


def test_day_one_pages_the_window_and_pauses_three_seconds(arxiv):
    arxiv.add(*[paper(n, day(n % 14), categories=("cs.LG",) if n % 2 else ("stat.ML",)) for n in range(1, 31)])
    waits = Waits()
    report = fetch_stream(SPEC, [arxiv.url], settings(waits), days=7, now=NOW)
    in_window = {f"arxiv:2501.{n:05d}" for n in range(1, 31) if n % 14 < 8}  # day 7, noon: inside (from 06:00)
    assert set(rows()) == in_window and sorted(report.new) == sorted(in_window)
    first = arxiv.requests[0]
    assert first["search_query"] == "cat:cs.LG OR cat:stat.ML"
    assert (first["sortBy"], first["sortOrder"], first["start"], first["max_results"]) == (
        "lastUpdatedDate", "descending", "0", "5")
    assert [int(r["start"]) for r in arxiv.requests] == list(range(0, 5 * len(arxiv.requests), 5))
    assert len(in_window) == 18 and len(arxiv.requests) == 4  # stopped at the window's start, not at 30 results
    assert waits == [3.0] * (len(arxiv.requests) - 1)  # 3 s before every request after the first
    assert rows()["arxiv:2501.00001"]["abstract"] == "We study problem 1 of learning and solve it with method 1."


def test_day_two_adds_only_new_ids_replaces_a_new_version_and_keeps_a_cross_list_once(arxiv):
    arxiv.add(*[paper(n, day(2)) for n in range(1, 6)])
    fetch_stream(SPEC, [arxiv.url], settings(), now=NOW - timedelta(days=1))
    arxiv.add(paper(6, day(0)), paper(7, day(0), categories=("stat.ML", "cs.LG")))
    arxiv.revise("2501.00002", day(0), "A second version with a new abstract.")
    report = fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    assert sorted(report.new) == ["arxiv:2501.00006", "arxiv:2501.00007"]
    assert report.updated == ["arxiv:2501.00002"]
    assert report.cross_listed == 1 and report.unchanged == 4  # 1, 3, 4, 5 kept as stored
    stored = rows()
    assert len(stored) == 7 and stored["arxiv:2501.00002"]["abstract"] == "A second version with a new abstract."
    assert stored["arxiv:2501.00002"]["version"] == 2
    assert stored["arxiv:2501.00007"]["categories"] == ["stat.ML", "cs.LG"]


def test_a_day_with_nothing_new_does_not_rewrite_the_corpus(arxiv):
    arxiv.add(*[paper(n, day(1)) for n in range(1, 4)])
    fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    before = stored_path(SPEC.name).stat().st_mtime_ns
    report = fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    assert not report.changed and report.new == [] and report.unchanged == 3
    assert stored_path(SPEC.name).stat().st_mtime_ns == before


def test_papers_older_than_the_window_leave(arxiv):
    arxiv.add(paper(1, day(5)), paper(2, day(1)))
    fetch_stream(SPEC, [arxiv.url], settings(), days=7, now=NOW)
    report = fetch_stream(SPEC, [arxiv.url], settings(), days=7, now=NOW + timedelta(days=3))
    assert report.expired == 1 and set(rows()) == {"arxiv:2501.00002"}


def test_a_503_with_retry_after_is_waited_out(arxiv):
    arxiv.add(*[paper(n, day(1)) for n in range(1, 4)])
    arxiv.faults[1] = ("503", 7)
    waits = Waits()
    report = fetch_stream(SPEC, [arxiv.url], settings(waits), now=NOW)
    assert len(report.new) == 3 and waits[0] == 7 and report.stats.retries == 1


def test_an_empty_page_inside_the_result_set_is_asked_again(arxiv):
    arxiv.add(*[paper(n, day(1)) for n in range(1, 9)])
    arxiv.faults[2] = ("empty",)
    report = fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    assert len(report.new) == 8 and [r["start"] for r in arxiv.requests] == ["0", "5", "5"]


def test_empty_pages_every_time_fail_and_keep_the_stored_corpus(arxiv):
    arxiv.add(*[paper(n, day(1)) for n in range(1, 9)])
    fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    arxiv.add(paper(9, day(0)))
    arxiv.faults.update({len(arxiv.requests) + k: ("empty",) for k in range(1, 4)})
    with pytest.raises(FetchError, match="empty page 3 times"):
        fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    assert len(rows()) == 8


def test_a_body_cut_short_is_retried_and_an_error_feed_is_one_line(arxiv):
    arxiv.add(*[paper(n, day(1)) for n in range(1, 4)])
    arxiv.faults[1] = ("cut",)
    report = fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    assert len(report.new) == 3 and report.stats.retries == 1
    arxiv.faults[len(arxiv.requests) + 1] = ("error", "start must be an integer")
    with pytest.raises(FetchError, match="arXiv says: start must be an integer"):
        fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    fetch_stream(SPEC, [arxiv.url], settings(page_size=40_000), now=NOW)
    assert arxiv.requests[-1]["max_results"] == "2000"  # arXiv's largest slice, never a 400


def test_entries_that_shift_between_pages_are_kept_once(arxiv):
    arxiv.add(*[paper(n, day(1), hour=n) for n in range(1, 9)])
    arxiv.late = [paper(20, day(0))]  # appears before the second page: the first entry of page 1 repeats
    report = fetch_stream(SPEC, [arxiv.url], settings(), now=NOW)
    assert report.repeated == 1 and len(rows()) == 8  # the late one is read on the next day's fetch
    assert len(set(rows())) == len(rows())


def test_from_a_saved_answer_and_the_cli(tmp_path, arxiv, monkeypatch):
    monkeypatch.setenv("ZOTREC_ARXIV_PAUSE_S", "0")
    saved = tmp_path / "answer.xml"
    now = datetime.now(UTC)
    arxiv.add(paper(1, now - timedelta(days=1)), paper(2, now - timedelta(days=2), categories=("stat.ML",)))
    import httpx2

    saved.write_bytes(httpx2.get(arxiv.url, params={"search_query": "cat:cs.LG OR cat:stat.ML",
                                                    "max_results": 50}).content)
    result = CliRunner().invoke(cli, ["corpus", "fetch", "arxiv:cs.LG,stat.ML", "--from", str(saved)])
    assert result.exit_code == 0, result.output
    assert "Saved 2 papers of arXiv cs.LG, stat.ML" in result.output and "2 new" in result.output
    result = CliRunner().invoke(cli, ["corpus", "fetch", "arxiv:stat.ML,cs.LG", "--from", arxiv.url])
    assert result.exit_code == 0, result.output
    assert "Nothing new in arXiv cs.LG, stat.ML" in result.output
    bad = tmp_path / "page.xml"
    bad.write_bytes(b"<html><body>not a feed")
    result = CliRunner().invoke(cli, ["corpus", "fetch", "arxiv:cs.LG", "--from", str(bad)])
    assert result.exit_code == 1 and "page.xml" in result.output and "Traceback" not in result.output


def test_category_names_are_checked():
    assert stream_source("arxiv:stat.ML,cs.LG").name == "arxiv-cs.lg_stat.ml"
    assert stream_source("icml2025") is None
    for bad in ("arxiv:", "arxiv:cs.LG;rm", "arxiv:../x"):
        with pytest.raises(InputError, match="arXiv categories look like"):
            stream_source(bad)


def test_a_retry_waits_at_least_the_pause_and_a_body_over_the_cap_is_refused(arxiv):
    from recommender.corpus.http import FetchStats, Http

    arxiv.add(*[paper(n, day(1)) for n in range(1, 4)])
    arxiv.faults[1] = ("cut",)
    waits = Waits()
    fetch_stream(SPEC, [arxiv.url], settings(waits, backoff=0.01), now=NOW)
    assert waits and min(waits) >= 3.0  # arXiv's 3 s between requests holds for a retry too
    with Http(settings(), FetchStats()) as http:
        with pytest.raises(FetchError, match="over 1,000 bytes; refused"):
            http.get_bytes(arxiv.url, {"search_query": "cat:cs.LG", "max_results": 10}, max_bytes=1000)
