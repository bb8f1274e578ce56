"""The ICML 2025 corpus against real material: the PMLR v267 excerpt, the bundled list, and a fake
OpenReview that answers like the recorded api2 (challenge page, login, 400 on limit, rate limits)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.corpus.fetch import FetchError, FetchSettings, OpenReviewLogin, fetch_corpus
from recommender.corpus.readers import load_corpus
from recommender.corpus.store import read_stored, stored_path
from recommender.corpus.venues import BUNDLED_ICML2025, resolve_venue
from recommender.formats.bibtex import parse_bibtex
from recommender.text import clean_text
from tests.fake_openreview import POSITION_ID, FakeConference, make_note
from zotero_bridge.cli.main import cli

SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "pmlr-v267" / "icml25-sample.bib"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "zotrec-data"))
    for name in ("OPENREVIEW_USERNAME", "OPENREVIEW_PASSWORD", "OPENREVIEW_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "zotrec-data"


@pytest.fixture(scope="module")
def sample() -> bytes:
    if not SAMPLE.is_file():
        pytest.skip("../shared/fixtures/pmlr-v267/icml25-sample.bib is not present")
    return SAMPLE.read_bytes()


def sample_entries(sample: bytes) -> list[dict]:
    entries, skipped = parse_bibtex(sample.decode("utf-8"), SAMPLE)
    assert skipped == []
    return [e for e in entries if e["ENTRYTYPE"] == "inproceedings"]


def notes_for(entries: list[dict], *, positions: int = 3) -> list[dict]:
    """OpenReview notes for the sample's papers (same forum ids); the position papers on their track."""
    notes = []
    for number, entry in enumerate(entries, start=1):
        position = entry["title"].startswith("Position:")
        notes.append(make_note(number, note_id=entry["openreview"], title=entry["title"], abstract=None,
                               venue="oral" if number % 7 == 0 else "poster",
                               venue_id=POSITION_ID if position else "ICML.cc/2025/Conference"))
    return notes


def settings(server: FakeConference | None = None, **overrides) -> FetchSettings:
    sleep = server.sleep if server is not None else (lambda seconds: None)
    return FetchSettings(**{"sleep": sleep, "backoff": 0.01, **overrides})


def test_the_real_excerpt_parses_with_its_header_skipped(sample):
    entries, skipped = parse_bibtex(sample.decode("utf-8"), SAMPLE)
    assert skipped == []
    assert entries[0]["ENTRYTYPE"] == "proceedings" and entries[0]["year"] == "2025"
    papers = sample_entries(sample)
    assert len(papers) == 49
    assert all(e["openreview"] and "url" not in e and "pdf" not in e and "year" not in e for e in papers)
    assert papers[0]["ID"] == "amancisidor25" and papers[0]["_line"] == 16


def test_fetch_from_the_real_excerpt_stores_49_clean_papers_with_forum_links(sample, caplog):
    result = CliRunner().invoke(cli, ["corpus", "fetch", "icml2025", "--from", str(SAMPLE)])
    assert result.exit_code == 0, result.output
    assert "Saved 49 papers" in result.output and "49 with abstracts" in result.output
    rows = read_stored(stored_path("icml2025")).papers
    assert len(rows) == 49
    for row in rows:
        assert re.fullmatch(r"https://openreview\.net/forum\?id=[\w-]+", row["url"]), row["url"]
        assert row["id"] == row["openreview_id"] and row["year"] == 2025
        assert not re.search(r"</?(em|b|i)>|\$|\\[a-z]|---", row["abstract"]), row["abstract"][:200]
    by_key = {row["bibtex_key"]: row for row in rows}
    # the submission key is not the published id: the real one comes from the bundled list
    assert by_key["amancisidor25"]["pmlr_id"] == "a-mancisidor25a"
    assert by_key["amancisidor25"]["pmlr_url"] == "https://proceedings.mlr.press/v267/a-mancisidor25a.html"
    assert "consensus of dependent experts (CoDE)" in by_key["amancisidor25"]["abstract"]
    assert by_key["aamand25a"]["abstract"].count("$") == 0
    assert "Warning" not in result.output  # the @Proceedings header is no broken entry


def test_the_real_excerpt_as_a_corpus_file_is_clean_too(sample):
    loaded = load_corpus([SAMPLE])
    assert len(loaded.papers) == 49 and loaded.skipped == []
    assert not any("<em>" in (p.abstract or "") or "<b>" in (p.abstract or "") for p in loaded.papers)


def test_challenge_page_still_stores_the_pmlr_corpus_with_one_line(sample, caplog):
    entries = sample_entries(sample)
    with FakeConference(notes_for(entries), sample) as server:
        result = CliRunner().invoke(cli, ["corpus", "fetch", "icml2025", "--from", f"{server.url}/icml25.bib",
                                          "--from", server.url])
        notes_requests = server.hits("/notes")
    assert result.exit_code == 0, result.output
    assert "Saved 49 papers" in result.output
    lines = [line for line in result.output.splitlines() if "OpenReview" in line]
    assert len(lines) == 1
    assert "Verifying your browser | OpenReview" in lines[0] and "OPENREVIEW_USERNAME" in lines[0]
    assert notes_requests == 1  # a challenge page is a refusal, not something to retry
    rows = read_stored(stored_path("icml2025")).papers
    assert all(row["presentation"] is None for row in rows)
    assert read_stored(stored_path("icml2025")).header["notes"] == [lines[0].removeprefix("Warning: ")]


def test_login_opens_openreview_for_presentation_types_of_both_tracks(sample):
    entries = sample_entries(sample)
    notes = notes_for(entries)
    with FakeConference(notes, sample, accounts={"me@example.org": "secret"}) as server:
        report = fetch_corpus("icml2025", [f"{server.url}/icml25.bib", server.url], settings(server),
                              login=OpenReviewLogin("me@example.org", "secret"))
        listed = [q for p, q, _ in server.requests if p == "/notes"]
        auth = {h.get("Authorization", "")[:7] for p, _, h in server.requests if p == "/notes"}
    assert report.notes == [] and report.papers == 49
    assert {q["content.venueid"] for q in listed} == {"ICML.cc/2025/Conference", POSITION_ID}
    assert all(q["sort"] == "number:asc" for q in listed) and listed[0]["count"] == "true"
    assert auth == {"Bearer "}
    rows = {row["id"]: row for row in read_stored(stored_path("icml2025")).papers}
    position = [n["id"] for n in notes if n["content"]["venueid"]["value"] == POSITION_ID]
    assert position and all(rows[i]["presentation"] == "position" for i in position)
    assert report.counts["with_presentation"] == 49
    assert rows[notes[6]["id"]]["presentation"] == "oral"
    assert rows[notes[0]["id"]]["pdf_url"].startswith("https://raw.githubusercontent.com/mlresearch/v267/")


def test_a_wrong_password_is_one_line_and_the_pmlr_corpus_is_stored(sample):
    with FakeConference(notes_for(sample_entries(sample)), sample, accounts={"me": "right"}) as server:
        report = fetch_corpus("icml2025", [f"{server.url}/icml25.bib", server.url], settings(server),
                              login=OpenReviewLogin("me", "wrong"))
    assert report.papers == 49
    assert len(report.notes) == 1 and "login as me failed" in report.notes[0]
    assert "Invalid username or password" in report.notes[0] and "wrong" not in report.notes[0]


def test_openreview_alone_behind_the_challenge_fails_with_a_clear_error():
    with FakeConference([make_note(1)]) as server:
        with pytest.raises(FetchError, match="HTML page .*Verifying your browser.* instead of JSON"):
            fetch_corpus("openreview:ICML.cc/2025/Conference", [server.url], settings(server))


def test_rate_limit_headers_are_honoured_with_a_bounded_wait():
    notes = [make_note(n) for n in range(30)]
    with FakeConference(notes, challenge=False, rate_limit=2, window=60) as server:
        report = fetch_corpus("openreview:ICML.cc/2025/Conference", [server.url],
                              settings(server, page_size=10))
        statuses = server.hits("/notes")
    assert report.papers == 30
    assert statuses == 3  # no request was spent on a 429: the client waited for the window
    assert report.stats.waits and all(50 <= wait <= 60 for wait in report.stats.waits)
    with FakeConference(notes, challenge=False, rate_limit=1, window=3600) as server:
        with pytest.raises(FetchError, match="rate limit is used up for 3600 s"):
            fetch_corpus("openreview:ICML.cc/2025/Conference", [server.url], settings(server, page_size=10))


def test_a_listing_that_shifts_between_pages_is_read_again():
    notes = [make_note(n) for n in range(1, 9)]
    with FakeConference(notes, challenge=False, max_limit=4, late_notes=[make_note(0)]) as server:
        report = fetch_corpus("openreview:ICML.cc/2025/Conference", [server.url], settings(server, page_size=4))
        offsets = [int(q["offset"]) for p, q, _ in server.requests if p == "/notes"]
    # first pass: note 4 twice and note 8 missing (count 8); second pass: all 9
    assert offsets == [0, 4, 0, 4, 8]
    assert report.papers == 9


def test_a_listing_that_keeps_repeating_a_note_is_refused():
    notes = [make_note(n) for n in range(6)]
    notes.insert(4, make_note(1))
    with FakeConference(notes, challenge=False, max_limit=4) as server:
        with pytest.raises(FetchError, match="6 distinct notes of the 7 .*came twice"):
            fetch_corpus("openreview:ICML.cc/2025/Conference", [server.url], settings(server, page_size=4))


def test_a_pmlr_failure_keeps_the_last_good_corpus(sample, caplog):
    with FakeConference([], sample) as server:
        fetch_corpus("icml2025", [f"{server.url}/icml25.bib"], settings(server))
    good = stored_path("icml2025").read_bytes()
    with FakeConference([], b"") as server:
        server.bibtex = b"<html>not here</html>"
        with pytest.raises(Exception, match="ends in the middle|no @InProceedings"):
            fetch_corpus("icml2025", [f"{server.url}/icml25.bib", server.url], settings(server))
    assert stored_path("icml2025").read_bytes() == good
    assert "Kept the stored corpus 'icml2025' (49 papers" in caplog.text


def test_venues_by_name():
    assert resolve_venue("icml2025").venue_ids == ("ICML.cc/2025/Conference", POSITION_ID)
    pmlr = resolve_venue("pmlr:v235")
    assert pmlr.name == "pmlr-v235"
    assert pmlr.bibtex_url == "https://proceedings.mlr.press/v235/assets/bib/bibliography.bib"
    neurips = resolve_venue("openreview:NeurIPS.cc/2025/Conference")
    assert (neurips.name, neurips.venue_ids, neurips.year) == (
        "neurips.cc-2025-conference", ("NeurIPS.cc/2025/Conference",), 2025)
    assert resolve_venue("neurips1999") is None


def test_a_pmlr_bibliography_key_is_the_published_id():
    from recommender.corpus.records import bibtex_records

    text = ("@InProceedings{pmlr-v235-abad-rocamora24a,\n  title = {A Paper},\n  author = {Abad, A.},\n"
            "  year = {2024},\n  openreview = {abcDEF123}\n}\n")
    record = bibtex_records(text, "bibliography.bib", volume="v235", venue="ICML 2024", year=None).records[0]
    assert record["pmlr_id"] == "abad-rocamora24a"
    assert record["pmlr_url"] == "https://proceedings.mlr.press/v235/abad-rocamora24a.html"
    assert record["pdf_url"] == "https://proceedings.mlr.press/v235/abad-rocamora24a/abad-rocamora24a.pdf"


def test_the_bundled_list_gives_titles_and_links_and_the_seeds_their_titles():
    rows = [json.loads(line) for line in BUNDLED_ICML2025.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3330 and len({r["id"] for r in rows}) == 3330
    assert all(r["url"].startswith(("https://openreview.net/forum?id=", "https://proceedings.mlr.press/v267/"))
               for r in rows)
    from zotero_bridge.cli.corpus_input import default_corpus_paths

    loaded = load_corpus(default_corpus_paths())
    assert loaded.enriched == 31
    assert sum(p.title_derived for p in loaded.papers) == 0
    assert sum(p.abstract is not None for p in loaded.papers) == 31


def test_a_fetched_icml2025_enriches_the_default_instead_of_replacing_it(sample):
    from zotero_bridge.cli.corpus_input import default_corpus_paths

    bundled = default_corpus_paths()
    fetch_corpus("icml2025", [str(SAMPLE)], settings())
    assert default_corpus_paths() == [*bundled, stored_path("icml2025")]


@pytest.mark.parametrize(("raw", "shown"), [
    ("a---b and 1--26", "a—b and 1–26"),
    ("$\\widetilde{O}(n^{1.5})$ regret", "Õ(n^1.5) regret"),
    ("$\\log B$ bits and $O(n \\log n)$", "log B bits and O(n log n)"),
    ("the <em>consensus</em> of <b>dependent</b> experts", "the consensus of dependent experts"),
])
def test_text_fixes(raw, shown):
    assert clean_text(raw) == shown


def test_cli_reads_the_openreview_token_from_the_environment(sample, monkeypatch):
    with FakeConference(notes_for(sample_entries(sample)), sample) as server:
        server.tokens.add("tok123")
        monkeypatch.setenv("OPENREVIEW_TOKEN", "Bearer tok123")
        result = CliRunner().invoke(cli, ["corpus", "fetch", "icml2025", "--from", f"{server.url}/icml25.bib",
                                          "--from", server.url])
        sent = {h.get("Authorization") for p, _, h in server.requests if p == "/notes"}
    assert result.exit_code == 0, result.output
    assert "49 with a presentation type" in result.output and "OpenReview skipped" not in result.output
    assert sent == {"Bearer tok123"} and "tok123" not in result.output


def test_cli_login_never_shows_the_password(sample, monkeypatch):
    with FakeConference(notes_for(sample_entries(sample)), sample, accounts={"me": "hunter2"}) as server:
        monkeypatch.setenv("OPENREVIEW_USERNAME", "me")
        monkeypatch.setenv("OPENREVIEW_PASSWORD", "wrong-hunter3")
        result = CliRunner().invoke(cli, ["-v", "corpus", "fetch", "icml2025", "--from",
                                          f"{server.url}/icml25.bib", "--from", server.url])
    assert result.exit_code == 0, result.output
    assert "OpenReview login as me failed" in result.output and "hunter" not in result.output
