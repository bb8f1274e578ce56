"""`zotrec corpus fetch` against a local OpenReview/PMLR stand-in: paging, politeness, bad answers."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from recommender.corpus.fetch import FetchError, FetchSettings, fetch_corpus
from recommender.corpus.readers import load_corpus
from recommender.corpus.records import SourceShapeError
from recommender.corpus.store import CorpusStoreError, read_stored, stored_path
from recommender.errors import InputError
from tests.fake_openreview import FakeConference, Fault, make_bibtex, make_note
from zotero_bridge.cli.main import cli


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    return tmp_path / "zotrec-data"


def settings(**overrides) -> FetchSettings:
    """Fast settings: waits are recorded in `stats.waits`, never slept."""
    return FetchSettings(**{"sleep": lambda seconds: None, "backoff": 0.01, **overrides})


def stored_rows(name: str = "icml2025") -> list[dict]:
    return read_stored(stored_path(name)).papers


def test_pages_through_every_note_with_a_server_capped_limit():
    notes = [make_note(n, venue="oral" if n % 10 == 0 else "poster") for n in range(2345)]
    with FakeConference(notes, max_limit=500, challenge=False) as server:
        report = fetch_corpus("icml2025", [server.url], settings(page_size=1000))
        asked = [(int(q["offset"]), int(q["limit"])) for p, q, _ in server.requests
                 if p == "/notes" and q["content.venueid"] == "ICML.cc/2025/Conference"]
    assert report.papers == 2345
    # 1,000 a page is refused with the API's 400 "limit must be <= 500", then pages of 500
    assert asked == [(0, 1000), (0, 500), (500, 500), (1000, 500), (1500, 500), (2000, 500)]
    assert report.stats.requests == 7  # and one page for the (empty) position-paper track
    rows = {row["id"]: row for row in stored_rows()}
    assert rows["note000010"]["presentation"] == "oral"
    assert rows["note000011"]["presentation"] == "poster"
    assert rows["note000011"]["pdf_url"].startswith("https://openreview.net/pdf/")
    assert rows["note000011"]["openreview_url"] == "https://openreview.net/forum?id=note000011"


def test_openreview_and_pmlr_merge_by_id_then_title():
    notes = [make_note(1, abstract=None), make_note(2), make_note(3, title="Only On OpenReview")]
    bib = make_bibtex([
        {"key": "first25a", "title": "Paper 1: Learning Things Number 1", "openreview": "note000001",
         "url": "https://proceedings.mlr.press/v267/first25a.html",
         "author": "Rodr\\'{\\i}guez, \\'{A}lvaro and Second, B.", "abstract": "The <em>PMLR</em> abstract."},
        {"key": "second25a", "title": "Paper 2: Learning {T}hings Number 2", "author": "Two, A."},
        {"key": "third25a", "title": "Only In The Proceedings", "author": "Three, C."},
    ])
    with FakeConference(notes, bib, challenge=False) as server:
        report = fetch_corpus("icml2025", [f"{server.url}/icml25.bib", server.url], settings())
    rows = {row["title"]: row for row in stored_rows()}
    assert report.papers == 4
    first = rows["Paper 1: Learning Things Number 1"]
    assert first["id"] == "note000001"
    assert first["url"] == "https://openreview.net/forum?id=note000001"  # the forum is the paper's link
    assert first["pmlr_url"] == "https://proceedings.mlr.press/v267/first25a.html"  # as given in the entry
    assert first["abstract"] == "The PMLR abstract."  # HTML tags gone; OpenReview had none
    second = next(r for r in rows.values() if r["bibtex_key"] == "second25a")
    assert second["id"] == "note000002"  # no openreview field: merged by normalised title
    assert second["pmlr_id"] is None and second["pmlr_url"] is None  # a submission key makes no link
    assert rows["Only In The Proceedings"]["id"] == "pmlr-v267-third25a"
    assert rows["Only On OpenReview"]["url"] == "https://openreview.net/forum?id=note000003"
    papers = {p.id: p for p in load_corpus(["icml2025"]).papers}
    assert papers["note000001"].authors == ("Álvaro Rodríguez", "B. Second")


def test_retry_after_is_honoured_on_429():
    notes = [make_note(n) for n in range(30)]
    with FakeConference(notes, max_limit=10, challenge=False) as server:
        server.faults.append(Fault("/notes", offset=10, status=429, headers={"Retry-After": "7"}, body=b"slow"))
        server.faults.append(Fault("/notes", offset=20, status=503))
        report = fetch_corpus("icml2025", [server.url], settings(page_size=10))
    assert report.papers == 30
    assert report.stats.retries == 2
    assert 7.0 in report.stats.waits  # the server's number, not our backoff
    assert report.stats.requests == 6  # pages 0, 10, 20 (a page of 10 ends at 30) and two retries


def test_retry_after_too_long_fails_and_keeps_nothing(data_dir):
    with FakeConference([make_note(n) for n in range(3)], challenge=False) as server:
        server.faults.append(Fault("/notes", status=429, headers={"Retry-After": "3600"}))
        with pytest.raises(FetchError, match="wait 3600 s"):
            fetch_corpus("icml2025", [server.url], settings())
    assert not stored_path("icml2025").exists()


def test_truncated_bibtex_download_resumes_with_range():
    entries = [{"key": f"p{n}25a", "title": f"Proceedings Paper {n}", "author": "A, B",
                "abstract": "Some words. " * 50, "openreview": f"id{n}"} for n in range(40)]
    with FakeConference([], make_bibtex(entries)) as server:
        server.faults.append(Fault("/icml25.bib", cut_at=0.5))
        report = fetch_corpus("icml2025", [f"{server.url}/icml25.bib"], settings())
        ranges = [h.get("Range") for p, _, h in server.requests if p == "/icml25.bib"]
    assert report.papers == 40
    assert ranges[0] is None and ranges[1].startswith("bytes=") and ranges[1] != "bytes=0-"


def test_truncated_listing_keeps_the_last_good_corpus(caplog):
    with FakeConference([make_note(n) for n in range(25)], max_limit=10, challenge=False) as server:
        fetch_corpus("icml2025", [server.url], settings(page_size=10))
    good = stored_path("icml2025").read_bytes()
    with FakeConference([make_note(n) for n in range(25)], max_limit=10, count=40, challenge=False) as server:
        with pytest.raises(FetchError, match="25 distinct notes of the 40"):
            fetch_corpus("icml2025", [server.url], settings(page_size=10))
    assert stored_path("icml2025").read_bytes() == good
    assert "Kept the stored corpus 'icml2025' (25 papers" in caplog.text


def test_a_stored_corpus_from_a_newer_zotrec_is_neither_read_nor_overwritten():
    with FakeConference([make_note(n) for n in range(5)], challenge=False) as server:
        fetch_corpus("icml2025", [server.url], settings())
        document = json.loads(stored_path("icml2025").read_text())
        document["format_version"] += 1
        stored_path("icml2025").write_text(json.dumps(document))
        with pytest.raises(InputError, match="upgrade zotrec"):
            load_corpus(["icml2025"])
        with pytest.raises(CorpusStoreError, match="not replaced .*--force"):
            fetch_corpus("icml2025", [server.url], settings())
        assert fetch_corpus("icml2025", [server.url], settings(), force=True).papers == 5


def test_bibtex_cut_mid_entry_is_refused():
    text = make_bibtex([{"key": "a25a", "title": "A Paper", "author": "A, B"}])
    with FakeConference([], text[:-10]) as server:
        with pytest.raises(SourceShapeError, match="middle of an entry"):
            fetch_corpus("icml2025", [f"{server.url}/icml25.bib"], settings())


@pytest.mark.parametrize(("body", "message"), [
    ({"data": [], "total": 3}, "no 'notes' list"),
    ({"notes": [{"id": f"x{n}", "content": {"name": {"value": "?"}}} for n in range(5)], "count": 5},
     "content.title.value"),
])
def test_changed_response_shape_names_what_is_missing_and_keeps_the_corpus(body, message):
    with FakeConference([make_note(n) for n in range(5)], challenge=False) as server:
        fetch_corpus("icml2025", [server.url], settings())
        server.faults.append(Fault("/notes", body=json.dumps(body).encode()))
        with pytest.raises(SourceShapeError, match=message):
            fetch_corpus("icml2025", [server.url], settings())
    assert len(stored_rows()) == 5


def test_duplicate_ids_are_dropped_and_counted_and_empty_abstracts_are_none():
    notes = [make_note(n) for n in range(6)]
    notes[2] = make_note(2, abstract="   ")
    notes.insert(4, make_note(1))  # the same note twice in the listing itself (the count says 6)
    with FakeConference(notes, count=6, max_limit=4, challenge=False) as server:
        report = fetch_corpus("openreview:ICML.cc/2025/Conference", [server.url], settings(page_size=4))
    assert report.papers == 6
    assert report.counts["duplicates_dropped"] == 1
    assert report.counts["with_abstracts"] == 5
    assert report.path.name == "icml.cc-2025-conference.json"
    assert next(r for r in stored_rows(report.path.stem) if r["id"] == "note000002")["abstract"] is None


def test_interrupted_fetch_resumes_without_asking_again():
    notes = [make_note(n) for n in range(30)]
    with FakeConference(notes, max_limit=10, challenge=False) as server:
        server.faults.append(Fault("/notes", offset=20, status=500, times=10))
        with pytest.raises(FetchError, match="HTTP 500 after 2 tries"):
            fetch_corpus("icml2025", [server.url], settings(page_size=10, retries=1, concurrency=1))
        server.faults.clear()
        server.requests.clear()
        report = fetch_corpus("icml2025", [server.url], settings(page_size=10))
        offsets = [int(q["offset"]) for p, q, _ in server.requests
                   if p == "/notes" and q["content.venueid"] == "ICML.cc/2025/Conference"]
    assert report.papers == 30
    assert offsets == [0, 20]  # page 10 was kept from the first run


def test_a_much_smaller_fetch_does_not_replace_the_stored_corpus_without_force():
    with FakeConference([make_note(n) for n in range(20)], challenge=False) as server:
        fetch_corpus("icml2025", [server.url], settings())
    with FakeConference([make_note(n) for n in range(5)], challenge=False) as server:
        with pytest.raises(Exception, match="kept the stored one"):
            fetch_corpus("icml2025", [server.url], settings())
        assert fetch_corpus("icml2025", [server.url], settings(), force=True).papers == 5


def test_cli_fetch_list_info_and_reading_list_by_name(tmp_path):
    notes = [make_note(n, title=f"Graph Neural Networks for Molecules {n}") for n in range(12)]
    library = tmp_path / "library.bib"
    library.write_text("@article{a, title={Graph neural networks for molecule property prediction}}\n")
    runner = CliRunner()
    with FakeConference(notes, challenge=False) as server:
        fetched = runner.invoke(cli, ["corpus", "fetch", "icml2025", "--from", server.url])
    assert fetched.exit_code == 0, fetched.output
    assert "Saved 12 papers" in fetched.output and "12 with a presentation type" in fetched.output
    listed = runner.invoke(cli, ["corpus", "list", "--format", "json"])
    assert json.loads(listed.output)[0]["papers"] == 12
    info = runner.invoke(cli, ["corpus", "info", "icml2025"])
    assert "with abstracts: 12" in info.output and "source: http://127.0.0.1" in info.output
    # the name ranks the default: the bundled list with the fetch on it (here 12 papers it does not list: added)
    ranked = runner.invoke(cli, ["reading-list", "--library", str(library), "--corpus", "icml2025",
                                 "--format", "jsonl", "-n", "0", "--features", "tfidf"])
    assert ranked.exit_code == 0, ranked.output
    rows = [json.loads(line) for line in ranked.output.splitlines() if line.startswith("{")]
    assert len(rows) == 3330 + 12
    fetched_rows = [row for row in rows if row["title"].startswith("Graph Neural Networks for Molecules")]
    assert len(fetched_rows) == 12 and all(row["abstract"].startswith("We study problem") for row in fetched_rows)


def test_cli_unknown_name_without_from_is_one_error_line():
    result = CliRunner().invoke(cli, ["corpus", "fetch", "neurips1999"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: unknown corpus 'neurips1999' (known: icml2025, pmlr:vNNN")


def test_local_files_need_no_server(tmp_path):
    answer = tmp_path / "notes.json"
    answer.write_text(json.dumps({"notes": [make_note(1), make_note(2)], "count": 2}), encoding="utf-8")
    bib = tmp_path / "icml25.bib"
    bib.write_bytes(make_bibtex([{"key": "x25a", "title": "Paper 2: Learning Things Number 2",
                                  "author": "Two, A.", "openreview": "https://openreview.net/forum?id=note000002"}]))
    report = fetch_corpus("mine", [str(answer), str(bib)], settings())
    assert report.papers == 2 and report.stats.requests == 0
    row = next(r for r in stored_rows("mine") if r["id"] == "note000002")
    assert row["bibtex_key"] == "x25a" and row["sources"] == ["bibtex", "openreview"]  # PMLR first


def test_retry_after_as_an_http_date():
    from datetime import datetime, timedelta, timezone
    from email.utils import format_datetime

    from recommender.retry import retry_after

    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 <= retry_after(later) <= 30
    assert retry_after("12") == 12.0 and retry_after("soon") is None and retry_after(None) is None


def test_a_server_that_never_answers_costs_the_deadline_not_minutes():
    """It accepts the connection and says nothing: one try of at most the deadline, then one clear error."""
    import socket
    import threading

    from recommender.corpus.http import FetchError, FetchSettings, FetchStats, Http

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
    waits: list[float] = []
    settings = FetchSettings(deadline=0.5, sleep=waits.append)
    try:
        with Http(settings, FetchStats()) as http, pytest.raises(FetchError) as raised:
            http.get_json(f"http://127.0.0.1:{listener.getsockname()[1]}/notes")
    finally:
        listener.close()
        for connection in held:
            connection.close()
    assert "gave up after" in str(raised.value) and "ZOTREC_DEADLINE_S" in str(raised.value)
    assert waits == []  # no backoff wait was started past the deadline


def test_the_deadline_comes_from_the_environment(monkeypatch):
    from recommender.corpus.http import FetchSettings
    from recommender.retry import DEADLINE_S

    monkeypatch.setenv("ZOTREC_DEADLINE_S", "7.5")
    assert FetchSettings().deadline == 7.5
    monkeypatch.setenv("ZOTREC_DEADLINE_S", "soon")
    assert FetchSettings().deadline == DEADLINE_S


def test_a_partial_download_is_private_and_never_written_through_a_link(tmp_path):
    """Under umask 000 the partial BibTeX and its validator are 0600; a link planted at the partial file's
    name is refused (O_NOFOLLOW), and the file it points to is left as it was."""
    import os
    import stat

    from recommender.corpus.fetch import Http
    from recommender.corpus.http import FetchStats

    entries = [{"key": f"p{n}25a", "title": f"Proceedings Paper {n}", "author": "A, B", "openreview": f"id{n}"}
               for n in range(5)]
    part = tmp_path / "partial" / "icml25.bib.part"
    part.parent.mkdir(mode=0o700)
    old = os.umask(0)
    try:
        with FakeConference([], make_bibtex(entries)) as server, Http(settings(), FetchStats()) as http:
            http.download_text(f"{server.url}/icml25.bib", part)
            modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in part.parent.iterdir()}
            part.unlink()
            target = tmp_path / "someone-elses-file"
            target.write_text("keep me")
            part.symlink_to(target)
            with pytest.raises(OSError):
                http.download_text(f"{server.url}/icml25.bib", part)
    finally:
        os.umask(old)
    assert modes and set(modes.values()) == {0o600}, modes
    assert target.read_text() == "keep me"
