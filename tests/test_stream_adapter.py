"""The stream interface as another adapter sees it (docs/streams.md): a minimal source registered in STREAMS,
with cursor paging, a from-date, and a conditional GET whose validator the generic fetch keeps between runs,
against a stateful server on 127.0.0.1. arXiv's faults are in test_stream_faults.py; this is the contract a new
adapter (feed, bioRxiv, PubMed, OpenAlex) builds on."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlparse

import pytest

from recommender import streams
from recommender.corpus.http import FetchError, FetchSettings
from recommender.corpus.stream import AnswerError, StreamPage, StreamSource, fetch_stream
from tests.loopback import QuietDispatcher, serve, shutdown


@dataclass(frozen=True)
class DemoStream(StreamSource):
    """`demo:TOPIC`: a JSON API that pages by cursor, filters by a from-date and answers If-None-Match."""

    topic: str

    prefix = "demo"
    service = "Demo"
    api = "https://demo.invalid/api"
    pause_s = 0.0
    page_size = 2
    max_records = 20
    newest_first = False  # it filters by date itself

    @classmethod
    def from_name(cls, name: str) -> DemoStream:
        return cls(name.partition(":")[2])

    @property
    def name(self) -> str:
        return f"demo-{self.topic}"

    @property
    def label(self) -> str:
        return f"Demo {self.topic}"

    def parse(self, body: bytes, where: str) -> StreamPage:
        try:
            answer = json.loads(body)
        except ValueError:
            raise AnswerError(f"{where}: not a Demo answer", complete=False) from None
        rows = [{"id": f"demo:{r['key']}", "title": r["title"], "updated": r["date"], "version": r.get("v", 1)}
                for r in answer["records"]]
        return StreamPage(rows=rows, total=answer["total"], cursor=answer.get("next"))

    def listing(self, lister, url, since):
        cursor, validator = "*", lister.memory.get(url)
        while cursor:
            headers = {"If-None-Match": validator} if validator and cursor == "*" else None
            page = lister.get(url, {"from": since.date().isoformat(), "cursor": cursor}, headers=headers, is_json=True)
            if cursor == "*" and lister.response_headers.get("etag"):
                lister.memory[url] = lister.response_headers["etag"]
            yield page
            cursor = page.cursor


class DemoServer:
    def __init__(self) -> None:
        self.records: list[dict] = []
        self.requests: list[dict] = []
        self.nested = False  # answer JSON nested 1,000 deep

    def answer(self, query: dict, etag: str | None) -> tuple[int, dict, bytes]:
        params = {k: v[-1] for k, v in query.items()}
        self.requests.append(params)
        tag = f'"{len(self.records)}"'
        if etag == tag:
            return 304, {"ETag": tag}, b""
        if self.nested:
            return 200, {"Content-Type": "application/json"}, b"[" * 1000 + b"]" * 1000
        wanted = [r for r in self.records if r["date"] >= params["from"]]
        at = 0 if params["cursor"] == "*" else int(params["cursor"])
        body = {"total": len(wanted), "records": wanted[at:at + 2],
                "next": str(at + 2) if at + 2 < len(wanted) else None}
        return 200, {"ETag": tag, "Content-Type": "application/json"}, json.dumps(body).encode()


class _Handler(QuietDispatcher):
    def _dispatch(self, method: str) -> None:
        status, headers, body = self.fake.answer(parse_qs(urlparse(self.path).query), self.headers.get("If-None-Match"))
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setitem(streams.STREAMS, "demo", "tests.test_stream_adapter:DemoStream")
    fake = DemoServer()
    httpd = serve(fake, _Handler)
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}/api"
    yield fake
    shutdown(httpd)


def test_a_json_page_is_depth_checked(server):
    server.records = [{"key": "deep", "title": "[" * 200, "date": datetime.now(UTC).isoformat()}]
    report = fetch_stream(streams.stream_source("demo:deep"), [server.url], FetchSettings(sleep=lambda s: None))
    assert report.new == ["demo:deep"]  # brackets inside a JSON string are no nesting
    server.nested = True
    with pytest.raises(FetchError, match="nested more than 100 deep"):
        fetch_stream(streams.stream_source("demo:deeper"), [server.url], FetchSettings(sleep=lambda s: None))


def test_a_new_adapter_works_through_the_registry_with_cursor_paging_and_a_conditional_get(server):
    now = datetime.now(UTC)
    day = lambda n: (now - timedelta(days=n)).isoformat(timespec="seconds")  # noqa: E731
    server.records = [{"key": f"r{n}", "title": f"Record {n}", "date": day(n)} for n in range(1, 6)]
    source = streams.stream_source("demo:cells")
    assert source.name == "demo-cells" and streams.is_stream_id("demo:r1") and not streams.is_stream_id("icml:1")
    report = fetch_stream(source, [server.url], FetchSettings(sleep=lambda s: None), days=7)
    assert sorted(report.new) == [f"demo:r{n}" for n in range(1, 6)] and len(server.requests) == 3  # 2 + 2 + 1
    assert server.requests[0]["from"] == (now - timedelta(days=7)).date().isoformat()
    again = fetch_stream(source, [server.url], FetchSettings(sleep=lambda s: None), days=7)
    assert not again.changed and len(server.requests) == 4  # one request, answered 304: nothing new, nothing written
    server.records.append({"key": "r1", "title": "Record 1, revised", "date": day(0), "v": 2})
    third = fetch_stream(source, [server.url], FetchSettings(sleep=lambda s: None), days=7)
    assert third.updated == ["demo:r1"] and third.papers == 5
