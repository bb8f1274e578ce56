"""`zotrec serve` over real HTTP (no browser: tests/test_serve_browser.py drives Chromium): the guard (Host,
token, CSRF, headers), the clicks recorded in the memory and their effect on the next list, against the fake
Zotero Web API (tests/zotero_server.py) with real pyzotero, and every corpus text escaped."""

from __future__ import annotations

import http.client
import json
import re
import threading
from urllib.parse import urlencode

import numpy as np
import pytest

from recommender.pipeline.build import Built
from recommender.retry import RetryPolicy
from recommender.scoring.ranking import Recommender
from zotero_bridge.feedback.memory import Memory
from zotero_bridge.feedback.ratings import read_ratings
from zotero_bridge.serve.app import TriageServer
from zotero_bridge.serve.guard import CSP, Guard
from zotero_bridge.serve.session import ServeSetup, TriageSession
from zotero_bridge.sources import SourceOptions, read_library
from zotero_bridge.sync.save import SaveTarget

from .conftest import REPO, ZOTERO_USER_ID, ZOTERO_WRITE_KEY
from .test_sync import NAME, corpus_file, papers  # noqa: F401 (fixtures)


def web_options(server) -> SourceOptions:
    return SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY, endpoint=server.url,
                         extra={"retry_policy": RetryPolicy(sleep=lambda seconds: None)})


def session_for(server, papers, top_n: int = 10) -> TriageSession:
    """The session `zotrec serve --library zotero:web` makes, on the test corpus (tf-idf)."""
    options = web_options(server)
    items = read_library(["zotero:web"], options).items
    setup = ServeSetup(Built(Recommender(papers)), ["zotero:web"], items, options, top_n=top_n,
                       save_target=SaveTarget(options, NAME))
    return TriageSession(setup)


class Running:
    """A TriageServer on 127.0.0.1 in a thread, and a client that speaks to it as a browser would."""

    def __init__(self, session: TriageSession) -> None:
        self.server = TriageServer(session, "zotero:web", "test corpus")
        self.guard: Guard = self.server.guard
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.server.session.close()

    def request(self, method: str, path: str, body: str | None = None, headers: dict | None = None):
        connection = http.client.HTTPConnection("127.0.0.1", self.guard.port, timeout=30)
        sent = {"Host": f"127.0.0.1:{self.guard.port}", "Cookie": f"zotrec_serve={self.guard.token}"}
        if body is not None:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        sent.update(headers or {})
        connection.request(method, path, body=body, headers={k: v for k, v in sent.items() if v is not None})
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read().decode()

    def act(self, corpus_id: str, action: str, csrf: str | None = None, **headers):
        form = urlencode({"csrf": self.guard.csrf if csrf is None else csrf, "id": corpus_id, "action": action})
        return self.request("POST", "/act", form, {"Accept": "application/json", **headers})


@pytest.fixture
def running(zotero_server, papers):
    served = Running(session_for(zotero_server, papers))
    yield served
    served.stop()


def ids_on(page: str) -> list[str]:
    return re.findall(r'<li class="paper" data-id="([^"]+)"', page)


def ratings() -> dict:
    with Memory() as memory:
        return {cid: r.rating for library in ("user:%d" % ZOTERO_USER_ID,)
                for cid, r in read_ratings(memory, library).items()}


def test_the_page_lists_what_reading_list_ranks(running, zotero_server, papers):
    from recommender.pipeline import RankOptions, rank
    from zotero_bridge.feedback.reading import library_input

    status, headers, page = running.request("GET", "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    options = web_options(zotero_server)
    items = read_library(["zotero:web"], options).items
    expected = rank(Recommender(papers), library_input(["zotero:web"], items, papers, None, options),
                    RankOptions(top_n=10))
    assert ids_on(page) == [rec.paper.id for rec in expected]
    assert "<script>" not in page and 'src="/static/triage.js"' in page and "style=" not in page


def test_every_answer_carries_the_security_headers_and_no_cors(running):
    for path in ("/", "/static/triage.js", "/static/triage.css", "/nowhere"):
        status, headers, _ = running.request("GET", path, headers={"Origin": "http://evil.example"})
        assert headers["Content-Security-Policy"] == CSP, path
        assert "default-src 'none'" in CSP and "script-src 'self'" in CSP and "unsafe-inline" not in CSP
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["X-Frame-Options"] == "DENY"
        assert not any(name.lower().startswith("access-control-") for name in headers), path
    status, headers, _ = running.request("OPTIONS", "/act", headers={"Origin": "http://evil.example",
                                                                    "Access-Control-Request-Method": "POST"})
    assert status == 405 and not any(name.lower().startswith("access-control-") for name in headers)
    assert running.server.server_address[0] == "127.0.0.1"


def test_the_token_moves_from_the_address_to_an_httponly_cookie(running):
    status, headers, _ = running.request("GET", f"/?token={running.guard.token}", headers={"Cookie": None})
    assert status == 303 and headers["Location"] == "/"
    assert headers["Set-Cookie"] == f"zotrec_serve={running.guard.token}; HttpOnly; SameSite=Strict; Path=/"
    assert running.request("GET", "/", headers={"Cookie": None})[0] == 403
    assert running.request("GET", "/?token=guessed", headers={"Cookie": None})[0] == 403
    assert running.request("GET", "/", headers={"Cookie": "zotrec_serve=guessed"})[0] == 403
    assert running.request("GET", "/static/triage.js", headers={"Cookie": None})[0] == 403


@pytest.mark.parametrize("change", [
    {"headers": {"Host": "evil.example:{port}"}},  # DNS rebinding: the attacker's name, our address
    {"headers": {"Host": "127.0.0.1:1"}},
    {"headers": {"Cookie": "zotrec_serve=guessed"}},
    {"headers": {"Cookie": None}},
    {"csrf": "guessed"},
    {"csrf": ""},
    {"headers": {"Origin": "http://evil.example"}},
])
def test_a_request_failing_a_check_changes_nothing(running, zotero_server, change):
    _, _, page = running.request("GET", "/")
    first = ids_on(page)[0]
    writes = len(zotero_server.writes())
    headers = {key: value.format(port=running.guard.port) if value else value
               for key, value in change.get("headers", {}).items()}
    for action in ("save", "not", "more"):
        status, answer_headers, body = running.act(first, action, change.get("csrf"), **headers)
        assert status == 403 and "said" not in body
    assert ratings() == {} and len(zotero_server.writes()) == writes
    assert ids_on(running.request("GET", "/")[2])[0] == first


def test_not_for_me_removes_the_paper_and_records_a_dismissal(running):
    first = ids_on(running.request("GET", "/")[2])
    status, _, body = running.act(first[0], "not")
    answer = json.loads(body)
    assert status == 200 and "not for you" in answer["said"]
    refilled = ids_on(answer["list"])
    assert first[0] not in refilled and len(refilled) == len(first) == 10  # refilled (and re-ranked: it leans away)
    assert first[0] not in ids_on(running.request("GET", "/")[2])
    assert ratings() == {first[0]: "not"}


def test_later_puts_a_paper_off_without_a_verdict(running):
    first = ids_on(running.request("GET", "/")[2])
    running.act(first[1], "later")
    after = ids_on(running.request("GET", "/")[2])
    assert first[1] not in after and after[:1] == first[:1]
    assert ratings() == {first[1]: "later"}


def test_more_like_this_moves_similar_papers_up(running, papers):
    before = ids_on(running.request("GET", "/?" + urlencode({}))[2])
    whole_before = [rec.paper.id for rec in running.server.session.ranked()]
    liked = before[3]
    recommender = running.server.session.setup.built.recommender
    index = {paper.id: i for i, paper in enumerate(recommender.corpus)}
    rows = recommender.corpus_rows
    similarity = np.asarray((rows @ rows[index[liked]].T).todense()).ravel()
    nearest = [recommender.corpus[i].id for i in np.argsort(-similarity) if recommender.corpus[i].id != liked][:5]
    nearest = [cid for cid in nearest if cid in whole_before]
    running.act(liked, "more")
    whole_after = [rec.paper.id for rec in running.server.session.ranked()]
    assert liked not in whole_after and ratings() == {liked: "more"}
    moved = [whole_before.index(cid) - whole_after.index(cid) for cid in nearest]
    assert sum(moved) > len(nearest)  # up, beyond the one place the liked paper's leaving gives each
    top = running.server.session.page()[0]
    assert any("which you asked more of" in line for rec in top for line in rec.feedback)


def test_save_writes_one_item_once_and_the_paper_leaves_the_list(running, zotero_server):
    first = ids_on(running.request("GET", "/")[2])[0]
    library = zotero_server.library("user", ZOTERO_USER_ID)
    for _ in range(2):  # a double click: the second finds it saved
        status, _, body = running.act(first, "save")
        assert status == 200 and "Saved" in json.loads(body)["said"]
    made = [d for d in library.items.values() if f"zotrec: {first} " in (d.get("extra") or "")]
    assert len(made) == 1 and made[0]["collections"]
    assert len([d for d in library.items.values() if d.get("parentItem") == made[0]["key"]]) == 1  # its note
    assert first not in ids_on(running.request("GET", "/")[2]) and ratings() == {first: "saved"}


def test_corpus_text_is_escaped_and_unsafe_links_dropped(zotero_server, papers):
    from dataclasses import replace

    hostile = replace(papers[0], title='<img src=x onerror=alert(1)> "quoted"', url="javascript:alert(1)",
                      abstract="</details><script>alert(2)</script>", authors=("<b>Mallory</b>",))
    session = session_for(zotero_server, [hostile, *papers[1:]], top_n=0)
    served = Running(session)
    try:
        page = served.request("GET", "/")[2]
    finally:
        served.stop()
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt; &quot;quoted&quot;" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(2)" in page and "javascript:" not in page
    assert "<b>Mallory" not in page


def test_ratings_reach_reading_list_and_zotero_verdicts_stand_over_them(tmp_path):
    from zotero_bridge.feedback.learn import feedback_for
    from zotero_bridge.feedback.memory import Remembered
    from zotero_bridge.feedback.ratings import NOT_FOR_ME, Rating

    rated = {cid: Rating(cid, cid.upper(), rating, "2026-01-01T00:00:00Z")
             for cid, rating in (("a", "more"), ("b", "not"), ("c", "saved"), ("d", "later"), ("e", "more"))}
    trashed = {"e": Remembered("e", "E", "KEY", "COLL", "", fate="dismissed", why="you moved it to the trash")}
    feedback = feedback_for(trashed, ratings=rated)
    assert feedback.liked == {"a"} and feedback.kept == {"c"}
    assert feedback.dismissed == {"b": NOT_FOR_ME, "e": "trashed"}  # the trash in Zotero wins over the rating
    assert feedback.titles["a"] == "A" and "d" not in feedback.liked | feedback.kept | set(feedback.dismissed)


def test_serve_stops_on_ctrl_c_and_reading_list_leaves_out_what_was_dismissed(tmp_path, corpus_file):
    import os
    import signal
    import subprocess
    import sys

    from .test_sync import corpus_rows

    env = {**os.environ, "ZOTREC_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "zotero_bridge", "serve", "--library", str(REPO / "examples" / "library.bib"),
               "--corpus", str(corpus_file), "--features", "tfidf", "--model", "none", "-n", "5"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", server.stdout.readline())
        assert url, server.stderr.read()
        port, token = int(url[1]), url[2]
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("GET", "/", headers={"Cookie": f"zotrec_serve={token}"})
        page = connection.getresponse().read().decode()
        csrf = re.search(r'<meta name="csrf" content="([^"]+)">', page)[1]
        dismissed = ids_on(page)[0]
        connection.request("POST", "/act", body=urlencode({"csrf": csrf, "id": dismissed, "action": "not"}),
                           headers={"Cookie": f"zotrec_serve={token}",
                                    "Content-Type": "application/x-www-form-urlencoded"})
        answer = connection.getresponse()
        assert answer.status == 303 and answer.getheader("Location") == "/"  # without the script: back to the page
        answer.read()
        server.send_signal(signal.SIGINT)
        assert server.wait(30) == 0
        assert "Traceback" not in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
    listed = subprocess.run([sys.executable, "-m", "zotero_bridge", "reading-list", "--library",
                             str(REPO / "examples" / "library.bib"), "--corpus", str(corpus_file), "--features",
                             "tfidf", "--model", "none", "-n", "5", "--format", "json"],
                            env=env, capture_output=True, text=True, check=True)
    ids = [row["id"] for row in json.loads(listed.stdout)]
    assert dismissed not in ids and len(ids) == 5 and len(corpus_rows()) > 5


def test_sync_leaves_out_a_paper_marked_not_for_me_and_writes_one_asked_more_of_never(zotero_server, papers):
    from zotero_bridge.feedback.ratings import record_rating

    from .test_sync import sync

    first = sync(zotero_server, papers, top_n=5, dry_run=True).recommendations
    with Memory() as memory:
        record_rating(memory, f"user:{ZOTERO_USER_ID}", first[0].paper.id, first[0].paper.title, "not")
        record_rating(memory, f"user:{ZOTERO_USER_ID}", first[1].paper.id, first[1].paper.title, "more")
    report = sync(zotero_server, papers, top_n=5)
    written = {entry.corpus_id for entry in report.plan.entries if entry.action == "add"}
    assert len(written) == 5 and first[0].paper.id not in written and first[1].paper.id not in written


def test_the_source_and_interest_filters(zotero_server, papers):
    from dataclasses import replace

    mixed = [replace(paper, venue="arXiv cs.LG") if number % 2 else paper for number, paper in enumerate(papers)]
    served = Running(session_for(zotero_server, mixed))
    try:
        page = served.request("GET", "/")[2]
        assert '<option value="arXiv cs.LG">' in page and '<option value="ICML 2025">' in page
        only = ids_on(served.request("GET", "/?" + urlencode({"source": "arXiv cs.LG"}))[2])
        venues = {paper.id: paper.venue for paper in mixed}
        assert len(only) == 10 and {venues[cid] for cid in only} == {"arXiv cs.LG"}
        interests = re.findall(r'<select name="interest">(.*?)</select>', page)[0]
        names = re.findall(r'<option value="([^"]+)"', interests)
        assert names  # the library's interests (recommender/scoring/interests.py) the list covers
        chosen = ids_on(served.request("GET", "/?" + urlencode({"interest": names[0]}))[2])
        by_interest = {rec.paper.id: rec.interest for rec in served.server.session.ranked()}
        assert chosen and {by_interest[cid] for cid in chosen} == {names[0]}
    finally:
        served.stop()


def test_save_goes_to_the_zotero_source_or_save_to_and_nowhere_else():
    from zotero_bridge.cli.serve import save_target
    from zotero_bridge.errors import BridgeError
    from zotero_bridge.sync.run import WEB_API

    options = SourceOptions()
    web = save_target(["examples/library.bib", "zotero:web"], None, options, "Reading")
    assert web.transport is WEB_API and web.collection_name == "Reading"
    local = save_target(["examples/library.bib"], "zotero:local:http://127.0.0.1:23119/api", options, "Reading")
    assert local.transport is not WEB_API
    assert save_target(["examples/library.bib"], None, options, "Reading") is None  # Save then says why not
    with pytest.raises(BridgeError, match="saves to zotero:web or zotero:local"):
        save_target(["examples/library.bib"], "examples/library.bib", options, "Reading")


def test_save_without_a_zotero_to_write_to_says_why_and_records_nothing(zotero_server, papers):
    from dataclasses import replace

    session = session_for(zotero_server, papers)
    session.setup = replace(session.setup, save_target=None)
    served = Running(session)
    try:
        first = ids_on(served.request("GET", "/")[2])[0]
        status, _, body = served.act(first, "save")
        assert status == 409 and "--save-to" in json.loads(body)["said"]
        assert ratings() == {} and first in ids_on(json.loads(body)["list"])
    finally:
        served.stop()


def test_daily_papers_the_page_shows_are_not_shown_again_on_another_day(zotero_server, papers):
    from dataclasses import replace
    from datetime import date, timedelta

    from zotero_bridge.feedback.seen import SeenFilter

    daily = [replace(paper, id="arxiv:2512." + paper.id[-3:].rjust(5, "0")) for paper in papers]
    session = session_for(zotero_server, daily)
    shown, _, _ = session.page()
    try:
        tomorrow = SeenFilter.for_run(["zotero:web"], session.setup.settings, day=date.today() + timedelta(days=1),
                                      corpus=daily)
        assert {rec.paper.id for rec in shown} <= tomorrow.hidden and len(shown) == 10
    finally:
        session.close()


def test_the_token_never_reaches_the_log(running, caplog):
    import logging

    with caplog.at_level(logging.DEBUG, logger="zotero_bridge.serve"):
        running.request("GET", f"/?token={running.guard.token}", headers={"Cookie": None})
        running.request("GET", "/?token=guessed", headers={"Cookie": None})
    assert "serve: " in caplog.text and running.guard.token not in caplog.text and "guessed" not in caplog.text


def test_history_shows_the_page_ratings_and_forgets_them(tmp_path):
    from click.testing import CliRunner

    from zotero_bridge.cli.main import cli
    from zotero_bridge.feedback.ratings import files_identity, record_rating

    library = files_identity([str(tmp_path / "library.bib")])
    with Memory() as memory:
        record_rating(memory, library, "icml2025/001", "A liked paper", "more")
        record_rating(memory, library, "icml2025/002", "A <b>dull</b> paper", "not")
    text = CliRunner().invoke(cli, ["history"]).output
    assert "rated on the page: 2 papers" in text and "more like this" in text and "not for me" in text
    shown = json.loads(CliRunner().invoke(cli, ["history", "--format", "json"]).stdout)
    assert {(r["corpus_id"], r["rating"]) for r in shown["ratings"]} == {("icml2025/001", "more"),
                                                                          ("icml2025/002", "not")}
    assert CliRunner().invoke(cli, ["history", "--forget", library]).exit_code == 0
    assert ratings_of(library) == {}


def ratings_of(library: str) -> dict:
    with Memory() as memory:
        return read_ratings(memory, library)


def test_reading_a_file_library_never_writes_the_history_and_a_damaged_one_is_a_warning(tmp_path, caplog):
    from zotero_bridge.feedback.memory import memory_path
    from zotero_bridge.feedback.ratings import ratings_if_any

    assert ratings_if_any("files:/x.bib") == {} and not memory_path().exists()  # none created
    memory_path().parent.mkdir(parents=True, exist_ok=True)
    memory_path().write_bytes(b"not a database at all" * 100)
    assert ratings_if_any("files:/x.bib") == {}
    assert "ratings cannot be read" in caplog.text
