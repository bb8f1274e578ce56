"""The feedback lines ("like 'X', which you kept", "saved by 3 members of Lab") in every reading-list format,
with the titles inside them treated as the untrusted text they are: escaped in HTML and Markdown, neutralised
in CSV, stripped of control characters in the terminal; a list without feedback renders as before."""

from __future__ import annotations

import csv
import io
import json

from recommender.items import Paper, Reason, Recommendation
from zotero_bridge.render.reading_list import render_recommendations

HOSTILE = "<img src=x onerror=alert(1)> *bold* [x](javascript:alert(1))"
LINES = (f"like '{HOSTILE}', which you kept", "less like '=HYPERLINK(\"http://evil\")', which you removed (similarity 0.31)",
         "saved by 3 members of Lab\x1b[31m")


def recs(with_feedback: bool = True) -> list[Recommendation]:
    first = Recommendation(Paper(id="p1", title="A paper", authors=("Ann Author",), url="https://example.org/p1"),
                           0.9, (Reason("K1", "My saved item", 0.42),), 1, LINES if with_feedback else ())
    second = Recommendation(Paper(id="p2", title="Another paper"), 0.5, (Reason("K2", "Other item", 0.3),), 2)
    return [first, second]


def test_markdown_shows_the_feedback_escaped():
    text = render_recommendations(recs(), "markdown")
    line = next(row for row in text.splitlines() if row.strip().startswith("Feedback:"))
    assert "which you kept" in line and "saved by 3 members of Lab" in line and "which you removed" in line
    assert "\\<img" in line and line.count("<") == line.count("\\<")  # no raw HTML reaches a Markdown viewer
    assert "\\[x\\](javascript" in line and "\\*bold\\*" in line
    assert text.count("Feedback:") == 1  # the second paper has none


def test_html_shows_the_feedback_escaped():
    page = render_recommendations(recs(), "html")
    assert "Feedback:<ul>" in page and page.count("Feedback:<ul>") == 1
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "saved by 3 members of Lab" in page and "which you removed" in page


def test_csv_adds_a_neutralised_feedback_column():
    rows = list(csv.reader(io.StringIO(render_recommendations(recs(), "csv"))))
    assert rows[0][-1] == "feedback" and len(rows[0]) == 9
    cell = rows[1][-1]
    assert "which you kept" in cell and "saved by 3 members" in cell
    assert rows[2][-1] == ""  # a paper without feedback: an empty cell
    single = list(csv.reader(io.StringIO(render_recommendations(
        [Recommendation(Paper(id="p", title="t"), 0.1, (), 1, ("=cmd|' /C calc'!A0",))], "csv"))))
    assert not single[1][-1].startswith(("=", "+", "-", "@"))  # a formula would run in a spreadsheet


def test_csv_without_feedback_keeps_its_columns():
    rows = list(csv.reader(io.StringIO(render_recommendations(recs(with_feedback=False), "csv"))))
    assert rows[0] == ["rank", "id", "title", "score", "authors", "year", "url", "reasons"]


def test_the_table_shows_the_feedback_without_control_characters():
    text = render_recommendations(recs(), "table", width=200)
    assert "feedback: like '<img src=x onerror=alert(1)> *bold*" in text
    assert "saved by 3 members of Lab" in text and "\x1b" not in text


def test_without_feedback_every_format_renders_as_before():
    for fmt in ("markdown", "html", "csv", "table", "json"):
        text = render_recommendations(recs(with_feedback=False), fmt, width=200)
        assert "feedback" not in text.lower(), fmt


def test_json_rows_carry_the_same_lines():
    rows = json.loads(render_recommendations(recs(), "json"))
    assert rows[0]["feedback"] == list(LINES) and "feedback" not in rows[1]
