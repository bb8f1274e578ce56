"""No traceback on any HTTP answer: the Web API, the local API, OpenReview and the PMLR bib download get
arbitrary status codes, headers and bodies (bytes, arbitrary JSON, Zotero-shaped JSON of the wrong types)
from a real local HTTP server, and the hostile ones of issue 32 in small: JSON nested up to 200,000 deep,
gzip and deflate bodies (whole or broken), redirects to the same URL or to file:, a `Link: rel="next"`
back to the same page with a huge Total-Results, Retry-After/Backoff as nan, inf or an HTTP date. Results, or one of zotrec's one-line errors; nothing else.
50 cases per reader in the default suite (each is several real requests); `pytest -m slow` runs 10,000."""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recommender.errors import RecommenderError
from tests.test_fuzz_readers import DEFAULT_CASES, SLOW_CASES, json_values, records

HTTP_CASES = max(1, DEFAULT_CASES // 2)  # each case is a few real HTTP requests
# `pytest -m slow`: 10,000 a reader (~0.2-0.5 s a case on 2 shared cores: hours); ZOTREC_FUZZ_SLOW_CASES lowers it
SLOW_HTTP_CASES = int(os.environ.get("ZOTREC_FUZZ_SLOW_CASES", SLOW_CASES))

pytest.importorskip("pytest_httpserver")
from werkzeug import Response

zotero_objects = st.lists(st.fixed_dictionaries(
    {"key": st.text(max_size=8), "data": records | json_values}, optional={"version": json_values}), max_size=3)
plain_bodies = st.one_of(st.binary(max_size=300), json_values.map(lambda v: json.dumps(v).encode()),
                         zotero_objects.map(lambda v: json.dumps(v).encode()),
                         st.just(b"<!doctype html><html><body>Sign in to the proxy</body></html>"),
                         st.integers(1, 200_000).map(lambda n: b"[" * n + b"]" * n),
                         st.integers(1, 2_000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n))


def _encode(body: bytes, coding: str, broken: bool) -> tuple[bytes, dict[str, str]]:
    """(body, extra headers): `body` as sent, gzip or deflate encoded; `broken` cuts the stream short."""
    if not coding:
        return body, {}
    sent = gzip.compress(body) if coding == "gzip" else zlib.compress(body)
    return (sent[:12] if broken else sent), {"Content-Encoding": coding}


encoded = st.tuples(plain_bodies, st.sampled_from(["", "gzip", "deflate"]), st.booleans()).map(lambda t: _encode(*t))
hostile_values = {"Retry-After": ["nan", "inf", "-1", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT",
                                  "Fri, 31 Dec 9999 23:59:59 GMT"],
                  "Backoff": ["nan", "Wed, 21 Oct 2015 07:28:00 GMT", "0.5"],
                  "Location": ["{self}", "file:///etc/passwd", "/", "ftp://127.0.0.1/x"],
                  "Link": ['<{self}>; rel="next"', '<{self}>; rel="next", <{self}>; rel="last"'],
                  "Total-Results": ["1000000000000", "-5", "1"]}
headers = st.dictionaries(st.sampled_from(["Last-Modified-Version", "Total-Results", "Link", "Retry-After",
                                           "Backoff", "Content-Type", "Location"]),
                          st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30), max_size=4)
hostile_headers = st.dictionaries(st.sampled_from(sorted(hostile_values)), st.integers(0, 5), max_size=3).map(
    lambda picks: {name: hostile_values[name][i % len(hostile_values[name])] for name, i in picks.items()})
answers = st.tuples(st.sampled_from([200, 200, 200, 301, 302, 304, 400, 403, 404, 412, 429, 500, 503]),
                    headers, hostile_headers, encoded).map(
    lambda t: (t[0], {**t[1], **t[2], **t[3][1]}, t[3][0]))


class Answering:
    """Whatever the current example says, for every request."""

    def __init__(self) -> None:
        self.answer = (200, {}, b"[]")

    def __call__(self, request):
        status, extra, body = self.answer
        here = request.url
        return Response(body, status=status, headers={k: v.replace("{self}", here) for k, v in extra.items()})


@pytest.fixture
def answering(httpserver):
    handler = Answering()
    httpserver.expect_request(re.compile(".*")).respond_with_handler(handler)
    return handler


def _tolerated(call):
    try:
        call()
    except RecommenderError as error:
        assert "\n" not in str(error).strip()


def _fuzz(cases):
    return lambda test: settings(max_examples=cases, deadline=None, database=None,
                                 suppress_health_check=list(HealthCheck))(given(answers)(test))


def _web(httpserver, answering, tmp_path, cases):
    from recommender.retry import RetryPolicy
    from zotero_bridge.sources import SourceOptions, read_library

    options = SourceOptions(library_id="475425", api_key="zFUZZkey0000000000000000", endpoint=httpserver.url_for(""),
                            cache_dir=tmp_path, extra={"retry_policy": RetryPolicy(
                                attempts=2, sleep=lambda s: None, max_wait_s=5, deadline_s=10)})

    @_fuzz(cases)
    def run(answer):
        answering.answer = answer
        _tolerated(lambda: read_library(["zotero:web"], options))
    run()


def test_web_api_answers_never_crash(httpserver, answering, tmp_path):
    _web(httpserver, answering, tmp_path, HTTP_CASES)


@pytest.mark.slow
def test_web_api_answers_never_crash_slow(httpserver, answering, tmp_path):
    _web(httpserver, answering, tmp_path, SLOW_HTTP_CASES)


def _local(httpserver, answering, cases):
    from zotero_bridge.sources import SourceOptions
    from zotero_bridge.sources.local import read_local_library

    @_fuzz(cases)
    def run(answer):
        answering.answer = answer
        _tolerated(lambda: read_local_library(httpserver.url_for("/api"), SourceOptions()))
    run()


def test_local_api_answers_never_crash(httpserver, answering):
    _local(httpserver, answering, HTTP_CASES)


@pytest.mark.slow
def test_local_api_answers_never_crash_slow(httpserver, answering):
    _local(httpserver, answering, SLOW_HTTP_CASES)


def _fetch(httpserver, answering, tmp_path, monkeypatch, cases, path):
    from recommender.corpus.fetch import FetchSettings, fetch_corpus

    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path))
    fast = FetchSettings(sleep=lambda s: None, backoff=0.0, retries=1, max_wait=1, timeout=5)

    @_fuzz(cases)
    def run(answer):
        answering.answer = answer
        _tolerated(lambda: fetch_corpus("icml2025", [httpserver.url_for(path)], fast, force=True))
    run()


@pytest.mark.parametrize("path", ["/", "/v267/icml25.bib"], ids=["openreview", "bib-download"])
def test_corpus_fetch_answers_never_crash(httpserver, answering, tmp_path, monkeypatch, path):
    _fetch(httpserver, answering, tmp_path, monkeypatch, HTTP_CASES, path)


@pytest.mark.slow
@pytest.mark.parametrize("path", ["/", "/v267/icml25.bib"], ids=["openreview", "bib-download"])
def test_corpus_fetch_answers_never_crash_slow(httpserver, answering, tmp_path, monkeypatch, path):
    _fetch(httpserver, answering, tmp_path, monkeypatch, SLOW_HTTP_CASES, path)


def test_a_web_api_endpoint_answering_html_is_one_line(httpserver, answering, tmp_path):
    from zotero_bridge.errors import SourceError
    from zotero_bridge.sources import SourceOptions, read_library

    answering.answer = (200, {"Content-Type": "text/html"}, b"<!doctype html><title>Login</title>")
    options = SourceOptions(library_id="1", api_key="zFUZZkey0000000000000000", endpoint=httpserver.url_for(""),
                            cache_dir=tmp_path)
    with pytest.raises(RecommenderError, match="not Zotero API data|not with Zotero API data"):
        read_library(["zotero:web"], options)
    answering.answer = (200, {"Content-Type": "application/json"}, b'"just a string"')
    from zotero_bridge.sources.local import read_local_library
    with pytest.raises(SourceError, match="not with Zotero API data"):
        read_local_library(httpserver.url_for("/api"), SourceOptions())
