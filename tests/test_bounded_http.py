"""Servers cannot make zotrec hang or blow up (issue 32): every answer from every server — the corpus fetch
(OpenReview JSON, the PMLR BibTeX download), the Zotero Web API through pyzotero, the desktop's local API —
is read through recommender/bounded_http.py. Real HTTP to tests/hostile_http.py on 127.0.0.1: a gzip bomb,
an endless body, a drip, redirect loops, JSON 100,000 deep and listings that never end each stop at their
limit with one line naming the server and the limit; a partial download is removed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from recommender.errors import RecommenderError
from recommender.retry import RetryPolicy
from tests.hostile_http import HostileServer

WEB_KEY = "zHOSTILEkey0000000000000"


def _one_line(error: BaseException, *words: str) -> str:
    text = str(error)
    assert "\n" not in text.strip() and "Traceback" not in text, text
    assert "127.0.0.1" in text, f"the server is named: {text}"
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"
    return text


def _settings(**kwargs):
    from recommender.corpus.fetch import FetchSettings

    return FetchSettings(**{"sleep": lambda s: None, "backoff": 0.0, "retries": 1, "max_wait": 1, "timeout": 5,
                            **kwargs})


def _fetch(server, tmp_path, monkeypatch, path="", **settings):
    from recommender.corpus.fetch import fetch_corpus

    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path))
    fetch_corpus("icml2025", [server.url + path], _settings(**settings), force=True)


def _web(server, tmp_path, **policy):
    from zotero_bridge.sources import SourceOptions, read_library

    policy = RetryPolicy(**{"attempts": 2, "sleep": lambda s: None, "max_wait_s": 5, **policy})
    read_library(["zotero:web"], SourceOptions(library_id="1", api_key=WEB_KEY, endpoint=server.url,
                                               cache_dir=tmp_path, extra={"retry_policy": policy}))


def _local(server):
    from zotero_bridge.sources import SourceOptions
    from zotero_bridge.sources.local import read_local_library

    read_local_library(server.url + "/api", SourceOptions())


def _partial_files(tmp_path):
    return sorted(p.name for p in (tmp_path / "partial").rglob("*") if p.is_file())


# ---- bytes ------------------------------------------------------------------------------------------------
def test_a_gzip_bomb_stops_at_the_decoded_cap(tmp_path, monkeypatch):
    """~1 MB of gzip inflating to 1 GiB: stopped at 64 MB decoded, on the corpus fetch and on the Web API."""
    with HostileServer("gzip-bomb") as server:
        with pytest.raises(RecommenderError) as fetched:
            _fetch(server, tmp_path, monkeypatch)
        _one_line(fetched.value, "more than 64 MB")
        with pytest.raises(RecommenderError) as read:
            _web(server, tmp_path)
        _one_line(read.value, "more than 64 MB")
        assert len(server.requests) == 2, "a limit hit is not retried"


def test_an_endless_body_stops_at_the_cap_and_leaves_no_partial_download(tmp_path, monkeypatch):
    with HostileServer("endless", content_type="text/plain") as server:
        with pytest.raises(RecommenderError) as local:
            _local(server)
        _one_line(local.value, "more than 64 MB")
        from recommender.bounded_http import Limits

        with pytest.raises(RecommenderError) as fetched:
            _fetch(server, tmp_path, monkeypatch, "/v267/icml25.bib",
                   bounds=Limits(download_bytes=8 * 2**20))
        _one_line(fetched.value, "more than 8 MB")
        assert _partial_files(tmp_path) == []


# ---- time -------------------------------------------------------------------------------------------------
def test_a_drip_stops_at_the_deadline_while_the_body_streams(tmp_path, monkeypatch):
    """One byte every 0.2 s never trips a read timeout; the deadline (2 s here) stops it as it streams."""
    with HostileServer("drip", content_type="text/plain", drip_s=0.2) as server:
        with pytest.raises(RecommenderError) as fetched:
            _fetch(server, tmp_path, monkeypatch, "/v267/icml25.bib", deadline=2.0)
        _one_line(fetched.value, "deadline", "ZOTREC_DEADLINE_S")
        assert _partial_files(tmp_path) == []
        with pytest.raises(RecommenderError) as read:
            _web(server, tmp_path, deadline_s=2.0)
        _one_line(read.value, "deadline")


def test_the_deadline_comes_from_the_environment(tmp_path, monkeypatch):
    from recommender.corpus.fetch import FetchSettings

    monkeypatch.setenv("ZOTREC_DEADLINE_S", "1.5")
    with HostileServer("drip", drip_s=0.2) as server:
        with pytest.raises(RecommenderError) as local:
            _local(server)
        _one_line(local.value, "deadline")
    assert FetchSettings().deadline == 1.5


# ---- redirects --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("answer,words", [("self-redirect", "redirected more than 5 times"),
                                          ("file-redirect", "http and https only")])
def test_redirects_are_limited_and_kept_to_http(tmp_path, monkeypatch, answer, words):
    with HostileServer(answer) as server:
        for read in (lambda: _fetch(server, tmp_path, monkeypatch), lambda: _web(server, tmp_path),
                     lambda: _local(server)):
            with pytest.raises(RecommenderError) as stopped:
                read()
            _one_line(stopped.value, words)


# ---- JSON depth -------------------------------------------------------------------------------------------
def test_json_nested_100000_deep_is_one_line_on_every_server(tmp_path, monkeypatch):
    with HostileServer("deep-json") as server:
        for read in (lambda: _fetch(server, tmp_path, monkeypatch), lambda: _web(server, tmp_path),
                     lambda: _local(server)):
            with pytest.raises(RecommenderError) as stopped:
                read()
            _one_line(stopped.value, "nested more than 100 deep")


def test_the_cli_says_it_in_one_line(tmp_path, monkeypatch):
    from zotero_bridge.cli.main import cli

    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path))
    with HostileServer("deep-json") as server:
        result = CliRunner().invoke(cli, ["corpus", "fetch", "icml2025", "--from", server.url])
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "nested more than 100 deep" in errors[0], result.output


# ---- paging -----------------------------------------------------------------------------------------------
def test_a_listing_claiming_10_12_notes_stops_at_the_repeated_page(tmp_path, monkeypatch):
    with HostileServer("endless-notes") as server:
        with pytest.raises(RecommenderError) as stopped:
            _fetch(server, tmp_path, monkeypatch)
        _one_line(stopped.value, "same page again")
        assert len(server.requests) <= 4, "two pages a try at most"


def test_a_zotero_next_link_back_to_the_same_page_stops_on_both_apis(tmp_path):
    from zotero_bridge.local_api.transport import open_local, read_snapshot
    from zotero_bridge.sources import SourceOptions

    with HostileServer("zotero-loop") as server:
        with pytest.raises(RecommenderError) as web:
            _web(server, tmp_path)
        _one_line(web.value, "next-page link back to a page already read")
        with pytest.raises(RecommenderError) as local:
            _local(server)
        _one_line(local.value, "next-page link back")
        session, cache = open_local(server.url + "/api", SourceOptions(cache_dir=tmp_path))
        try:
            with pytest.raises(RecommenderError) as synced:
                read_snapshot(session, cache)
            _one_line(synced.value, "next-page link back")
        finally:
            session.close()
            cache.close()
        assert len(server.requests) < 30


def test_total_results_ends_the_listing(tmp_path):
    """Zotero says there is one item and still links 'next' to the same page: one page read, no error."""
    from zotero_bridge.sources import SourceOptions
    from zotero_bridge.sources.local import read_local_library

    with HostileServer("zotero-loop") as server:
        server.total = "1"
        read = read_local_library(server.url + "/api", SourceOptions())
        assert [item.title for item in read.items] == ["Looping paper"]
        assert sum("/items/top" in path for path in server.requests) == 1


def test_the_page_cap_ends_a_listing_of_ever_new_pages():
    from recommender.bounded_http import Limits, PageGuard

    guard = PageGuard("http://127.0.0.1:1", "reading items", None, Limits(pages=3))
    for number in range(3):
        guard.page((f"K{number}",), f"/items?start={number}")
    with pytest.raises(RecommenderError, match="past 3 pages"):
        guard.page(("K3",), "/items?start=3")


def _depth(value) -> int:
    if isinstance(value, dict | list):
        return 1 + max(map(_depth, value.values() if isinstance(value, dict) else value), default=0)
    return 0


def test_the_depth_check_counts_only_brackets_outside_strings_in_any_pieces():
    """Brackets, quotes and backslashes inside strings, the text cut anywhere: raised exactly when deeper."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from recommender.bounded_http import JsonDepth

    tricky = st.text(alphabet='[]{}"\\a\n', max_size=6)
    values = st.recursive(tricky, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky, inner,
                                                                                             max_size=3), max_leaves=30)

    @settings(max_examples=300, deadline=None, database=None)
    @given(values, st.integers(0, 8), st.lists(st.integers(0, 400), max_size=5), st.booleans())
    def check(value, limit, cuts, ascii_only):
        text = json.dumps(value, ensure_ascii=ascii_only).encode()
        cuts = sorted({min(c, len(text)) for c in cuts})
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        scan = JsonDepth(limit, "http://127.0.0.1:1")
        try:
            for piece in pieces:
                scan.feed(piece)
        except RecommenderError:
            assert _depth(value) > limit
        else:
            assert _depth(value) <= limit
    check()
