"""Issue 25's reasons (the interest a paper serves, its authors in the library, the --prefer texts it matches) and
the list's steering header in every output: reading-list formats, import files, score files and the Zotero note.
Every text in them is untrusted (a library's author names, a corpus, what the user typed): escaped in HTML and
Markdown, neutralised in CSV, stripped of control characters on a terminal. A list without them renders as before."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from rich.cells import cell_len

from recommender.batch.output import COLUMNS, render_user_block
from recommender.items import AuthorReason, Paper, Reason, Recommendation, SteerReason
from zotero_bridge.render.export import render_export
from zotero_bridge.render.html_page import ListContext
from zotero_bridge.render.reading_list import READING_LIST_FORMATS, render_recommendations
from zotero_bridge.zotero_api.writeback import reasons_note

HOSTILE = "<img src=x onerror=alert(1)> *x* [a](javascript:1)"
INTEREST = f"normalizing flows {HOSTILE}"
AUTHOR = "Jane <b>Doe</b>"
STEER = '=HYPERLINK("http://evil") | # sparse "attention"'
CONTEXT = ListContext(library="my.bib", prefer=(STEER, "graph networks"), avoid=(f"reinforcement {HOSTILE}",),
                      recency_half_life=180.0, interests=(INTEREST, "time series"))


def recs(with_reasons: bool = True) -> list[Recommendation]:
    extra = {"interest": INTEREST, "author_reasons": (AuthorReason(AUTHOR, 4), AuthorReason("Li Wei", 1)),
             "steer_reasons": (SteerReason(STEER, 0.6234),)} if with_reasons else {}
    first = Recommendation(Paper(id="p1", title="Flows for density estimation", authors=("Jane Doe", "Li Wei"),
                                 url="https://openreview.net/forum?id=GUDnecJdJU"), 0.9,
                           (Reason("K1", "Variational inference with normalizing flows", 0.71),), 1, match=86, **extra)
    second = Recommendation(Paper(id="p2", title="Another paper"), 0.5, (Reason("K2", "Other item", 0.3),), 2,
                            match=23)
    return [first, second]


def test_json_rows_gain_the_keys_only_where_present():
    for fmt in ("json", "jsonl"):
        text = render_recommendations(recs(), fmt, context=CONTEXT)
        rows = json.loads(text) if fmt == "json" else [json.loads(line) for line in text.splitlines()]
        assert rows[0]["interest"] == INTEREST
        assert rows[0]["author_reasons"] == [{"name": AUTHOR, "library_items": 4}, {"name": "Li Wei", "library_items": 1}]
        assert rows[0]["steer_reasons"] == [{"text": STEER, "similarity": 0.6234}]
        assert list(rows[0])[-3:] == ["interest", "author_reasons", "steer_reasons"]  # added after the old keys
        assert not {"interest", "author_reasons", "steer_reasons"} & set(rows[1])
    old = json.loads(render_recommendations(recs(with_reasons=False), "json", context=CONTEXT))
    assert [list(row) for row in old] == [["rank", "id", "title", "score", "match", "authors", "year", "venue", "url",
                                           "doi", "abstract", "title_derived", "reasons"]] * 2


def test_csv_appends_neutralised_columns_only_when_some_paper_has_them():
    rows = list(csv.reader(io.StringIO(render_recommendations(recs(), "csv"))))
    assert rows[0][-3:] == ["interest", "author_reasons", "steer_reasons"] and len(rows[0]) == 12
    interest, authors, steer = rows[1][-3:]
    assert interest == INTEREST
    assert authors == "by Jane <b>Doe</b> — 4 papers in your library; by Li Wei — 1 paper in your library"
    assert steer == f'matches your preference "{STEER}" (0.62)'
    assert rows[2][-3:] == ["", "", ""]
    only_interest = [Recommendation(Paper(id="p", title="t"), 0.1, (), 1, interest="=1+1")]
    table = list(csv.reader(io.StringIO(render_recommendations(only_interest, "csv"))))
    assert table[0][-1] == "interest" and table[1][-1] == "'=1+1"  # a formula never runs in a spreadsheet
    header = next(csv.reader(io.StringIO(render_recommendations(recs(with_reasons=False), "csv"))))
    assert header == ["rank", "id", "title", "score", "match", "authors", "year", "url", "reasons"]


def test_markdown_shows_reasons_and_steering_escaped():
    text = render_recommendations(recs(), "markdown", context=CONTEXT)
    lines = text.splitlines()
    assert lines[:2] == ["# Reading list", ""]
    header = lines[2:7]
    assert [line.split(":")[0] for line in header] == ["- Prefer", "- Avoid", "- Recency", "- Interests", ""]
    assert header[0] == r'- Prefer: "=HYPERLINK("http://evil") \| \# sparse "attention""; "graph networks"'
    assert header[1] == r'- Avoid: "reinforcement \<img src=x onerror=alert(1)\> \*x\* \[a\](javascript:1)"'
    assert header[2] == "- Recency: a library item counts half after 180 days"
    body = "\n".join(lines[7:])
    assert "   For your interest: normalizing flows \\<img" in body
    assert r"   By Jane \<b\>Doe\</b\> — 4 papers in your library" in body
    assert "   By Li Wei — 1 paper in your library" in body
    assert '   Matches your preference "=HYPERLINK("http://evil") \\|' in body and "(0.62)" in body
    assert not re.search(r"(?<!\\)<(img|b)", text) and not re.search(r"(?<!\\)\]\(javascript", text)


def test_html_shows_reasons_and_steering_escaped():
    page = render_recommendations(recs(), "html", context=CONTEXT)
    assert "<img" not in page and "javascript:1" not in re.findall(r'href="([^"]*)"', page)
    assert page.count('<p class="meta steer">') == 1
    steer = re.search(r'<p class="meta steer">(.*?)</p>', page).group(1)
    assert "Prefer: <b>&quot;=HYPERLINK(&quot;http://evil&quot;) | # sparse &quot;attention&quot;&quot;" in steer
    assert "Recency: <b>a library item counts half after 180 days</b>" in steer
    assert "Interests: <b>normalizing flows &lt;img src=x onerror=alert(1)&gt;" in steer
    also = re.findall(r'<ul class="also">(.*?)</ul>', page)
    assert len(also) == 1  # the second paper has none
    assert also[0].startswith("<li>For your interest: normalizing flows &lt;img")
    assert ("<li>By Jane &lt;b&gt;Doe&lt;/b&gt; — 4 papers in your library</li>"
            "<li>By Li Wei — 1 paper in your library</li>") in also[0]
    assert "<li>Matches your preference &quot;=HYPERLINK" in also[0]


def test_the_table_shows_reasons_and_steering_and_still_fits():
    escaped = recs()
    escaped[1] = Recommendation(escaped[1].paper, 0.5, (), 2, interest="time\x1b[2J series\u202e",
                                author_reasons=(AuthorReason("Li\x07 Wei", 2),))
    for width in (80, 120):
        text = render_recommendations(escaped, "table", context=CONTEXT, width=width)
        assert max(cell_len(line) for line in text.splitlines()) <= width
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e]", text)  # no escape reaches the terminal
        flat = " ".join(re.sub(r"[│┃]", " ", text).split())
        assert "for your interest: time [2J series" in flat and "by Li Wei — 2 papers in your library" in flat
        for phrase in ("for your interest: normalizing flows <img", "by Jane <b>Doe</b> — 4 papers in your library",
                       "by Li Wei — 1 paper in your library", 'matches your preference "=HYPERLINK',
                       "Recency: a library item counts half after 180 days", 'Prefer: "=HYPERLINK'):
            assert phrase in flat, (width, phrase)
    assert text.splitlines()[0].strip() == "Reading list"


def test_without_them_every_format_renders_as_before():
    """A list without issue 25's reasons and a header without steering: every format as with no context at all."""
    bare = ListContext(library="my.bib")
    for fmt in READING_LIST_FORMATS:
        text = render_recommendations(recs(with_reasons=False), fmt, context=bare, width=120)
        for word in ("interest", "papers in your library", "preference", "Prefer:", "Recency:", 'class="meta steer"',
                     'class="also"', "Also:"):
            assert word not in text, (fmt, word)
        if fmt != "html":  # the page's header names the library; the others never had a header beyond the title
            assert text == render_recommendations(recs(with_reasons=False), fmt, width=120), fmt


@pytest.mark.parametrize("fmt", ["bibtex", "ris", "csljson"])
def test_import_files_carry_the_reasons_where_the_others_are(fmt, tmp_path):
    from tests.test_export import read_back

    text = render_export(recs(), fmt)
    assert "\x1b" not in text
    items = read_back(text, fmt, tmp_path)
    note = items[0].extra
    if fmt == "bibtex":  # our importer keeps a note's TeX escapes (Zotero's decodes them): the file is right
        note = note.replace(r"\%", "%").replace(r"\#", "#")
    assert "Because you saved: Variational inference with normalizing flows (0.71). For your interest: " \
           f"normalizing flows {HOSTILE}. By Jane <b>Doe</b> — 4 papers in your library. By Li Wei — 1 paper in your " \
           f"library. Matches your preference \"{STEER}\" (0.62)." in note
    assert "interest" not in items[1].extra and items[1].extra.endswith("match. Because you saved: Other item (0.30)")


def test_score_files_carry_the_reasons():
    rows = [json.loads(line) for line in render_user_block("u", recs(), "jsonl").splitlines()]
    assert rows[0]["interest"] == INTEREST and rows[0]["author_reasons"][1] == {"name": "Li Wei", "library_items": 1}
    assert rows[0]["steer_reasons"] == [{"text": STEER, "similarity": 0.6234}] and rows[0]["match"] == 86
    assert not {"interest", "author_reasons", "steer_reasons"} & set(rows[1])
    table = list(csv.DictReader(io.StringIO(",".join(COLUMNS) + "\n" + render_user_block("=u", recs(), "csv"))))
    assert table[0]["user"] == "'=u" and table[0]["match"] == "86" and table[0]["interest"] == INTEREST
    assert table[0]["author_reasons"].startswith("by Jane <b>Doe</b> — 4 papers")
    assert table[0]["steer_reasons"].startswith("matches your preference")
    assert table[1]["interest"] == table[1]["author_reasons"] == table[1]["steer_reasons"] == ""


def test_the_zotero_note_carries_the_reasons_escaped():
    body = reasons_note(recs()[0], "PARENT", "NOTE")["note"]
    assert "<img" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body
    assert "<p>Also:</p><ul><li>For your interest: normalizing flows &lt;img" in body
    assert "<li>By Li Wei — 1 paper in your library</li>" in body
    assert "<li>Matches your preference &quot;=HYPERLINK(&quot;http://evil&quot;)" in body
    assert "86% match." in body
    plain = reasons_note(recs(with_reasons=False)[0], "PARENT", "NOTE")["note"]
    assert "Also:" not in plain and "interest" not in plain


def test_sync_notes_carry_the_reasons_and_a_later_run_never_rewrites_a_note(zotero_server, tmp_path):
    """New papers' notes carry issue 25's reasons, escaped. A note is written once, with its paper: a note the user
    edited keeps the user's words, and a run whose reasons changed leaves the notes written before as they were."""
    import dataclasses

    from recommender.corpus.readers import load_corpus
    from recommender.retry import RetryPolicy
    from recommender.scoring.ranking import Recommender
    from tests.conftest import ZOTERO_USER_ID, ZOTERO_WRITE_KEY
    from tests.test_sync import NAME, corpus_rows
    from zotero_bridge.sources import SourceOptions
    from zotero_bridge.sync.run import SyncRequest, run_sync

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in corpus_rows()), encoding="utf-8")
    papers = load_corpus([corpus]).papers
    recommender = Recommender(papers, representation="tfidf")
    plain, interest = recommender.recommend, {"now": "first <b>interest</b>"}

    def recommend(*args, **kwargs):  # issue 25's producers are other modules: the reasons are filled here
        return [dataclasses.replace(rec, interest=interest["now"], author_reasons=(AuthorReason("Ada <i>L</i>", 2),),
                                    steer_reasons=(SteerReason("sparse & fast", 0.5),))
                for rec in plain(*args, **kwargs)]

    recommender.recommend = recommend
    source = SourceOptions(library_id=str(ZOTERO_USER_ID), api_key=ZOTERO_WRITE_KEY, endpoint=zotero_server.url,
                           extra={"retry_policy": RetryPolicy(sleep=lambda seconds: None)})
    library = zotero_server.library("user", ZOTERO_USER_ID)

    def notes() -> dict[str, dict]:
        return {key: dict(data) for key, data in library.items.items()
                if data["itemType"] == "note" and data.get("parentItem")}

    run_sync(SyncRequest(recommender, source, NAME, top_n=8))
    first = notes()
    assert len(first) == 8
    for note in first.values():
        assert "<li>For your interest: first &lt;b&gt;interest&lt;/b&gt;</li>" in note["note"]
        assert "<li>By Ada &lt;i&gt;L&lt;/i&gt; — 2 papers in your library</li>" in note["note"]
        assert "<li>Matches your preference &quot;sparse &amp; fast&quot; (0.50)</li>" in note["note"]
    edited = min(first)
    zotero_server.edit_item(library, edited, note="<p>My own words about this paper.</p>")
    interest["now"] = "second"
    run_sync(SyncRequest(recommender, source, NAME, top_n=12))
    after = notes()
    assert after[edited]["note"] == "<p>My own words about this paper.</p>"  # the user's edit wins
    for key, note in first.items():
        if key != edited:
            assert after[key] == note  # not rewritten: same body, same version
    new = [note for key, note in after.items() if key not in first]
    assert len(new) >= 4 and all("<li>For your interest: second</li>" in note["note"] for note in new)


def test_the_sync_report_shows_the_reasons_and_no_escape_reaches_the_terminal(zotero_server, tmp_path):
    from click.testing import CliRunner

    from tests.conftest import ZOTERO_READ_KEY, ZOTERO_USER_ID
    from tests.test_sync import corpus_rows
    from zotero_bridge.cli.main import cli
    from zotero_bridge.sync.run import why_lines

    assert why_lines(recs()[0])[1:] == ["for your interest: " + INTEREST, "by Jane <b>Doe</b> — 4 papers in your library",
                                        "by Li Wei — 1 paper in your library", f'matches your preference "{STEER}" (0.62)']
    saved = "because you saved: 'Variational inference with normalizing flows' (0.71)"
    assert why_lines(recs(with_reasons=False)[0]) == [saved]
    rows = corpus_rows(10)
    rows[0]["title"] = "Sherlock \x1b]8;;https://evil\x1b\\holmes\x1b[2J detective crime fiction \u202eevil"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    for fmt in ("table", "json"):
        args = ["sync", "--library-id", str(ZOTERO_USER_ID), "--endpoint", zotero_server.url, "--corpus", str(corpus),
                "--dry-run", "-n", "10", "--features", "tfidf", "--format", fmt]
        result = CliRunner().invoke(cli, args, env={"ZOTERO_API_KEY": ZOTERO_READ_KEY})
        assert result.exit_code == 0, result.output
        assert "Sherlock" in result.stdout and not re.search("[\x1b\x07\u202e]", result.stdout), fmt
