"""Counts read right: '1 item', '1 user', '1 library', never '1 items'."""

from __future__ import annotations

import io
import re

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


def test_history_counts_one_paper_and_one_run(tmp_path):
    from zotero_bridge.feedback.history_view import render_history
    from zotero_bridge.feedback.memory import Memory, Remembered, ShownPaper

    with Memory(tmp_path / "history.sqlite") as memory:
        paper = Remembered("icml/1", "A paper", "KEY1", "COLL", "fp")
        memory.record_run("user:1", "Recommended", "COLL", 3, [ShownPaper("icml/1", "A paper", 1, 0.5, "KEY1", "add")],
                          [paper], [])
        memory.record_run("user:1", "Recommended", "COLL", 4, [ShownPaper("icml/1", "A paper", 1, 0.5, "KEY1", "keep")],
                          [], [Remembered(**{**paper.__dict__, "untouched_runs": 1})])
        text = render_history(memory, None, 5, "text")
    assert "user:1: 1 paper created" in text and "(1 run)" in text and '"Recommended" · 1 paper' in text
    assert not re.search(r"\b1 (papers|runs|items)\b", text)


def test_a_failed_score_write_counts_one_user():
    from recommender.batch.output import ScoreWriter

    writer = ScoreWriter(io.StringIO(), "csv")
    writer.users_written = 1
    assert "the 1 user written before is kept" in str(writer._failure(OSError(28, "No space left on device")))
    writer.users_written = 2
    assert "the 2 users written before are kept" in str(writer._failure(OSError(28, "No space left on device")))


# Counts written by hand beside a noun ("%d items", "{n} papers") read "1 items" for one; zotrec says them
# with `plural`. Left out: counts always over one ("fits {len(paths)} collections") and thousands-separated
# corpus sizes in recommender/corpus (its own helper's texts).
HAND_PLURAL = re.compile(r"(%d|\{[^}:]*\}) (items|runs|users|papers|libraries|rows|collections|objects|deletions|"
                         r"entries|notes)\b")
ROOMS = ("zotero_bridge", "recommender/batch")


def test_no_count_is_pluralised_by_hand():
    from .conftest import REPO

    found = [f"{path.relative_to(REPO)}:{number}: {line.strip()}"
             for room in ROOMS for path in sorted((REPO / room).rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if HAND_PLURAL.search(line) and "fits {len(paths)} collections" not in line]
    assert found == []
