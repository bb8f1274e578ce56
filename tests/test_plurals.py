"""Counts read right: '1 item', '1 user', '1 library', never '1 items'."""

from __future__ import annotations

from recommender.batch.runner import BatchSummary
from recommender.items import LibraryItem
from zotero_bridge.cli.batch import summary_text
from zotero_bridge.render.html_page import ListContext, render_html_page
from zotero_bridge.render.reading_list import render_library
from zotero_bridge.render.words import plural


def test_plural():
    assert [plural(n, "item") for n in (0, 1, 2)] == ["0 items", "1 item", "2 items"]
    assert plural(1, "library", "libraries") == "1 library" and plural(3, "library", "libraries") == "3 libraries"


def test_one_of_each_is_singular():
    summary = BatchSummary(users=1, scored=1, resumed=1, papers=1, rows=1, failures=[("u", "broken")])
    report, failures = summary_text(summary)
    assert "Scored 1 user against 1 paper; 1 row in all" in report
    assert "1 user was already in the output file" in report
    assert failures.startswith("1 of 1 library failed")
    many, _ = summary_text(BatchSummary(users=3, scored=3, resumed=2, papers=5, rows=15))
    assert "Scored 3 users against 5 papers; 15 rows in all" in many and "2 users were already" in many


def test_the_library_table_and_page_count_one_item():
    table = render_library([LibraryItem(key="K1", title="Only one")], [], "table")
    assert "1 item" in table and "1 items" not in table
    page = render_html_page([], "Reading list", ListContext(library="a.bib", library_items=1))
    assert "(1 item)" in page and "1 items" not in page
