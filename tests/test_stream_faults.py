"""Issue 42's arXiv and fetch faults, and issue 38's saved answers counted, each against the arXiv double on
127.0.0.1 (tests/fake_arxiv.py: real HTTP, hostile modes) or a hostile saved answer, through `zotrec corpus
fetch` as a user runs it. Each failed on the code before the stream design (recommender/corpus/stream.py) and
passes with it; the rules are generic, so they are tested once, here, on arXiv."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from tests.fake_arxiv import Version, atom_entry, paper, private_data
from zotero_bridge.cli.main import cli

NAME = "arxiv:cs.LG"
FEED_HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
             '  <title>ArXiv Query: search_query=cat:cs.LG</title>\n  <id>http://arxiv.org/api/x</id>\n'
             '  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{total}'
             '</opensearch:totalResults>\n')


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    return private_data(tmp_path, monkeypatch, pause="0")


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def fetch(*args: str):
    result = CliRunner().invoke(cli, ["corpus", "fetch", NAME, *args])
    assert "Traceback" not in result.output and "hit a bug" not in result.output, result.output
    return result


def stored(data_dir) -> dict[str, dict]:
    document = json.loads((data_dir / "corpora" / "arxiv-cs.lg.json").read_text())
    return {row["id"]: row for row in document["papers"]}


def version(number: int, when: datetime, v: int = 1, categories=("cs.LG",), **text) -> Version:
    made = paper(number, when, categories=categories, **text)
    made.published = made.updated = when
    made.version = v
    return made


def saved(tmp_path, entries: list[str], name: str = "answer.xml") -> str:
    """A saved answer in the API's shape (the feed head of the manual's examples) holding `entries`."""
    path = tmp_path / name
    path.write_text(FEED_HEAD.format(total=len(entries)) + "".join(entries) + "</feed>\n", encoding="utf-8")
    return str(path)


def number(row: dict) -> int:
    """A stored row's version (`arxiv_version` before the stream design)."""
    return row.get("version", row.get("arxiv_version"))


def raw_entry(number: int, updated: str) -> str:
    return (f"  <entry>\n    <id>http://arxiv.org/abs/2501.{number:05d}v1</id>\n    <updated>{updated}</updated>\n"
            f"    <title>Paper {number}</title>\n    <summary>About paper {number}.</summary>\n"
            f'    <category term="cs.LG"/>\n  </entry>\n')


# ---- A stored corpus lost to one entry --------------------------------------------------------------------

def test_one_future_entry_in_a_saved_answer_drops_nothing_stored(arxiv, tmp_path, data_dir):
    arxiv.add(*[version(n, now() - timedelta(days=n % 6, hours=1)) for n in range(1, 30)])
    assert fetch("--from", arxiv.url).exit_code == 0 and len(stored(data_dir)) == 29
    future = saved(tmp_path, [atom_entry(version(99, datetime(2099, 1, 1, tzinfo=UTC)))])
    result = fetch("--from", future)
    assert result.exit_code == 0, result.output
    rows = stored(data_dir)
    assert len(rows) == 30  # the 29 stay: the window counts from today, not from 2099
    assert datetime.fromisoformat(rows["arxiv:2501.00099"]["updated"]) <= now() + timedelta(days=1)
    assert "1 entry dated wrong; first: arxiv:2501.00099: dated 2099-01-01, in the future" in result.output


def test_a_future_entry_does_not_stop_the_next_days_paging(arxiv, data_dir):
    arxiv.slice = 5  # five entries a page, as a server may serve
    arxiv.add(version(1, datetime(2099, 1, 1, tzinfo=UTC)), *[version(n, now() - timedelta(days=2, hours=n))
                                                             for n in range(2, 6)])
    assert fetch("--from", arxiv.url).exit_code == 0
    arxiv.add(*[version(n, now() - timedelta(hours=1, minutes=n)) for n in range(10, 40)])
    result = fetch("--from", arxiv.url)
    assert result.exit_code == 0, result.output
    assert "30 new" in result.output and len(stored(data_dir)) == 35  # every page of the 30, not the first


def test_a_stray_old_entry_inside_a_page_does_not_end_the_paging(arxiv, data_dir):
    arxiv.slice = 5
    arxiv.add(*[version(n, now() - timedelta(hours=n)) for n in range(1, 15)])
    stray = version(90, now() - timedelta(days=20))
    stray.listed = now() - timedelta(minutes=90)  # listed second, dated before the window
    arxiv.add(stray)
    result = fetch("--from", arxiv.url)
    assert result.exit_code == 0, result.output
    assert len(stored(data_dir)) == 14 and len(arxiv.requests) == 3  # every page, to the result set's end


# ---- Versions going backwards ------------------------------------------------------------------------------

def test_versions_only_go_forward_whatever_the_order(tmp_path, data_dir):
    when = now() - timedelta(hours=5)
    assert fetch("--from", saved(tmp_path, [atom_entry(version(1, when, 3))], "v3.xml")).exit_code == 0
    mixed = saved(tmp_path, [atom_entry(version(1, when + timedelta(hours=1), 2)),
                             atom_entry(version(1, when + timedelta(hours=2), 5))], "v2v5.xml")
    assert fetch("--from", mixed).exit_code == 0
    assert number(stored(data_dir)["arxiv:2501.00001"]) == 5
    assert fetch("--from", saved(tmp_path, [atom_entry(version(1, when + timedelta(hours=3), 4))], "v4.xml")).exit_code == 0
    assert number(stored(data_dir)["arxiv:2501.00001"]) == 5  # a lower version never replaces a higher one


# ---- The pause arXiv asks for ------------------------------------------------------------------------------

def test_retry_after_zero_does_not_shorten_the_pause(arxiv, monkeypatch):
    monkeypatch.setenv("ZOTREC_ARXIV_PAUSE_S", "0.3")
    arxiv.add(*[version(n, now() - timedelta(hours=n)) for n in range(1, 4)])
    arxiv.faults.update({1: ("503", 0), 2: ("503", 0), 3: ("503", 0)})
    assert fetch("--from", arxiv.url).exit_code == 0
    times = [request["at"] for request in arxiv.requests]
    assert len(times) == 4 and min(b - a for a, b in zip(times, times[1:])) >= 0.3


# ---- A false "JSON too deep" -------------------------------------------------------------------------------

def test_brackets_in_abstracts_are_not_json_nesting(arxiv, data_dir):
    arxiv.add(*[version(n, now() - timedelta(hours=n), abstract=f"On [0, 1) and [0, 1), case {n}.")
                for n in range(1, 61)],
              version(61, now(), abstract="Nested lists " + "[" * 101 + " of depth 101."))
    result = fetch("--from", arxiv.url)
    assert result.exit_code == 0, result.output
    assert len(stored(data_dir)) == 61


# ---- Tracebacks: dates beyond a datetime -------------------------------------------------------------------

def test_dates_beyond_what_a_datetime_holds_are_clamped_not_a_traceback(tmp_path, data_dir):
    today = now().strftime("%Y-%m-%dT%H:%M:%SZ")
    answer = saved(tmp_path, [raw_entry(1, "9999-12-31T23:00:00-05:00"), raw_entry(2, "0001-01-01T00:30:00+01:00"),
                              raw_entry(3, "3000-01-01T00:00:00Z"), raw_entry(4, today)])
    result = fetch("--from", answer)
    assert result.exit_code == 0, result.output
    rows = stored(data_dir)
    assert set(rows) == {"arxiv:2501.00001", "arxiv:2501.00003", "arxiv:2501.00004"}  # year 0: before the window
    assert all(datetime.fromisoformat(row["updated"]) <= now() + timedelta(days=1) for row in rows.values())
    assert "3 entries dated wrong; first: arxiv:2501.00001: dated after the year 9999, in the future" in result.output
    assert "1 entry older than the 7-day window" in result.output


# ---- Bounded work -----------------------------------------------------------------------------------------

def test_a_lying_server_is_stopped_by_the_page_guard(arxiv, data_dir):
    arxiv.lying = 200  # totalResults 10⁹, one entry a page; past 200 requests the double gives up
    result = fetch("--from", arxiv.url)
    assert result.exit_code == 1 and "kept sending pages past 65" in result.output, result.output
    assert len(arxiv.requests) == 65  # 30,000 records in pages of 500, and five more; never 30,000 requests
    assert not (data_dir / "corpora" / "arxiv-cs.lg.json").exists()


def test_titles_abstracts_and_author_lists_are_cut_with_a_warning(arxiv, data_dir):
    huge = version(1, now() - timedelta(hours=1), title="word " * 60_000, abstract="text " * 200_000)
    huge.authors = tuple(f"Author {n}" for n in range(6_000))
    arxiv.add(huge, version(2, now() - timedelta(hours=2)))
    result = fetch("--from", arxiv.url)
    assert result.exit_code == 0, result.output
    row = stored(data_dir)["arxiv:2501.00001"]
    assert len(row["title"]) <= 1_001 and len(row["abstract"]) <= 20_001 and len(row["authors"]) == 5_000
    assert "1 entry cut to length; first: arxiv:2501.00001: a title of 299,999 characters cut to 1,000" in result.output


def test_an_answer_of_empty_tags_is_refused_before_it_is_parsed(arxiv, tmp_path, data_dir):
    arxiv.add(version(1, now() - timedelta(hours=1)))
    assert fetch("--from", arxiv.url).exit_code == 0
    bomb = tmp_path / "bomb.xml"
    bomb.write_text(FEED_HEAD.format(total=1) + raw_entry(2, "2025-01-01T00:00:00Z").replace(
        "<summary>", "<summary>" + "<a/>" * 450_000) + "</feed>\n")
    result = fetch("--from", str(bomb))
    assert result.exit_code == 1 and "bomb.xml" in result.output and "450," in result.output and "tags" in result.output
    assert set(stored(data_dir)) == {"arxiv:2501.00001"}  # the stored corpus is whole


def test_a_redirect_to_another_host_is_refused_and_one_on_the_same_host_followed(arxiv, data_dir):
    arxiv.add(version(1, now() - timedelta(hours=1)))
    arxiv.faults[1] = ("moved", arxiv.url.replace("127.0.0.1", "localhost"))
    result = fetch("--from", arxiv.url)
    assert result.exit_code == 1 and "redirected to localhost, another site" in result.output, result.output
    arxiv.faults[len(arxiv.requests) + 1] = ("moved", arxiv.url + "?search_query=cat:cs.LG&max_results=10")
    assert fetch("--from", arxiv.url).exit_code == 0 and len(stored(data_dir)) == 1


def test_a_request_with_a_key_is_not_redirected_to_another_site(arxiv):
    """The desktop's local API key (pyzotero sends Zotero-API-Key) never follows a redirect to another host."""
    from recommender.bounded_http import bounded_client
    from recommender.errors import ServerLimitError

    arxiv.faults[1] = ("moved", arxiv.url.replace("127.0.0.1", "localhost"))
    with bounded_client(headers={"Zotero-API-Key": "secret"}) as client, pytest.raises(ServerLimitError,
                                                                                       match="carry a key"):
        client.get(arxiv.url, params={"search_query": "cat:cs.LG"})
    arxiv.faults[2] = ("moved", arxiv.url.replace("127.0.0.1", "localhost") + "?search_query=cat:cs.LG")
    with bounded_client() as client:  # nothing to carry: followed, and bounded like any answer
        assert client.get(arxiv.url, params={"search_query": "cat:cs.LG"}).status_code == 200
    assert len(arxiv.requests) == 3


def test_the_site_of_a_host_is_its_parent_domain():
    """Why redirects may stay on a site: export.arxiv.org may move to arxiv.org, never to another domain."""
    from recommender.bounded_http import same_site

    assert same_site("export.arxiv.org", "arxiv.org") and same_site("export.arxiv.org", "www.arxiv.org")
    assert not same_site("export.arxiv.org", "evil.org") and not same_site("export.arxiv.org", "arxiv.org.evil.org")
    assert not same_site("127.0.0.1", "127.0.0.2")


# ---- Saved answers counted (issue 38) ----------------------------------------------------------------------

def test_a_saved_answer_says_what_it_left_out(tmp_path, data_dir):
    old = [atom_entry(version(n, now() - timedelta(days=30, hours=n))) for n in range(1, 38)]
    recent = [atom_entry(version(n, now() - timedelta(hours=n))) for n in range(40, 43)]
    other = [atom_entry(version(n, now() - timedelta(hours=n), categories=("math.CO",))) for n in range(50, 55)]
    result = fetch("--from", saved(tmp_path, recent + other + old))
    assert result.exit_code == 0, result.output
    assert set(stored(data_dir)) == {f"arxiv:2501.{n:05d}" for n in range(40, 43)}
    assert ("37 entries older than the 7-day window (counted from today) were left out (--days 32 keeps them)"
            in result.output)
    assert "5 entries of other subjects than arXiv cs.LG were left out" in result.output


def test_a_months_old_saved_answer_counts_from_today_and_says_so(tmp_path, data_dir):
    months = [atom_entry(version(n, now() - timedelta(days=210, hours=n))) for n in range(1, 21)]
    result = fetch("--from", saved(tmp_path, months))
    assert result.exit_code == 1
    assert "no papers in arXiv cs.LG for the last 7 days" in result.output
    assert "20 entries older than the 7-day window (counted from today) were left out (a window is at most 90 days)" \
        in result.output


# ---- Stored corpora of the code before ---------------------------------------------------------------------

def test_a_corpus_stored_before_the_stream_design_reads_and_heals(tmp_path, data_dir):
    when = now() - timedelta(hours=3)
    rows = [{"id": "arxiv:2501.00001", "title": "Old one", "arxiv_version": 2, "updated": when.isoformat()},
            {"id": "arxiv:2501.00002", "title": "From the future", "arxiv_version": 1,
             "updated": "2099-01-01T00:00:00+00:00"}]
    folder = data_dir / "corpora"
    folder.mkdir(parents=True)
    (folder / "arxiv-cs.lg.json").write_text(json.dumps({"format": "zotrec-corpus", "format_version": 1,
                                                          "name": "arxiv-cs.lg", "papers": rows}))
    result = fetch("--from", saved(tmp_path, [atom_entry(version(1, when, 1)), atom_entry(version(3, when, 1))]))
    assert result.exit_code == 0, result.output
    healed = stored(data_dir)
    assert healed["arxiv:2501.00001"]["title"] == "Old one" and healed["arxiv:2501.00001"]["version"] == 2
    assert "arxiv_version" not in healed["arxiv:2501.00001"] and "arxiv:2501.00003" in healed
    assert datetime.fromisoformat(healed["arxiv:2501.00002"]["updated"]) <= now() + timedelta(days=1)


# ---- A fetch never loses what is stored --------------------------------------------------------------------

def test_a_stream_fetch_onto_a_full_disk_keeps_the_stored_corpus_whole(arxiv, monkeypatch, small_disk):
    disk, fill = small_disk
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(disk))
    arxiv.add(*[version(n, now() - timedelta(hours=n)) for n in range(1, 6)])
    assert fetch("--from", arxiv.url).exit_code == 0
    arxiv.add(*[version(n, now() - timedelta(minutes=n), abstract="words " * 300) for n in range(10, 60)])
    fill()
    result = fetch("--from", arxiv.url)
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 1 and len(error) == 1, result.output
    assert "No space left" in error[0] and "kept the stored corpus 'arxiv-cs.lg' as it was (5 papers)" in error[0]
    assert len(stored(disk)) == 5 and sorted(p.name for p in (disk / "corpora").iterdir()) == ["arxiv-cs.lg.json"]


def test_a_clock_a_year_ahead_keeps_the_stored_corpus(arxiv, data_dir, caplog):
    """Every stored paper leaving at once while the service gives none in the window is the clock, not the news:
    the stored corpus stays whole and the user is told (a daily run a year ahead used to empty it)."""
    from recommender.corpus.http import FetchSettings
    from recommender.corpus.stream import fetch_stream
    from recommender.streams import stream_source

    arxiv.add(*[version(n, now() - timedelta(days=n % 6, hours=1)) for n in range(1, 11)])
    assert fetch("--from", arxiv.url).exit_code == 0 and len(stored(data_dir)) == 10
    kept = (data_dir / "corpora" / "arxiv-cs.lg.json").read_bytes()
    ahead = now() + timedelta(days=365)
    report = fetch_stream(stream_source(NAME), [arxiv.url], FetchSettings(sleep=lambda s: None), days=7, now=ahead)
    assert report.papers == 10 and report.expired == 0 and not report.changed
    assert (data_dir / "corpora" / "arxiv-cs.lg.json").read_bytes() == kept
    assert "every stored one is older" in caplog.text and "the stored corpus is kept" in caplog.text
    assert fetch("--from", arxiv.url).exit_code == 0 and len(stored(data_dir)) == 10  # the clock back: all there


def test_an_answer_declaring_an_encoding_no_codec_has_is_one_line(tmp_path):
    """feedparser raises on an encoding name it cannot look up; the fetch says so in a line (the web fuzz found it)."""
    path = tmp_path / "odd.xml"
    path.write_bytes(b'<?xml version="1.0" encoding="UTF\x00-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom"></feed>')
    result = CliRunner().invoke(cli, ["corpus", "fetch", NAME, "--from", str(path)])
    assert result.exit_code == 1 and "not an arXiv API Atom answer" in result.output, result.output
    assert "Traceback" not in result.output and "hit a bug" not in result.output
