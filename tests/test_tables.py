"""Tables that fit: `zotrec library` sizes columns by content, a reading list never cuts a link mid-id."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len

from recommender.items import Creator, LibraryItem, Paper, Reason, Recommendation
from zotero_bridge.render.reading_list import render_library, render_recommendations

TITLES = ["Variational Inference with Normalizing Flows", "Density estimation using Real NVP",
          "Glow: Generative Flow with Invertible 1x1 Convolutions"]


def _items() -> list[LibraryItem]:
    return [LibraryItem(key=f"key_{n}", title=title, creators=(Creator("Rezende", "Danilo"),), year=2015 + n,
                        tags=("normalizing flows",)) for n, title in enumerate(TITLES)]


def _words_whole(text: str, phrase: str) -> bool:
    cells = " ".join(re.findall(r"[│┃] ([^│┃]*?)\s*(?=[│┃])", text))
    return all(word in cells.split() for word in phrase.split())


@pytest.mark.parametrize("width", [80, 100, 160])
def test_the_library_table_gives_titles_the_room(width):
    text = render_library(_items(), [], "table", width=width)
    lines = text.splitlines()
    assert max(cell_len(line) for line in lines) <= width
    assert all(_words_whole(text, title) for title in TITLES)  # no title cut inside a word
    header = next(line for line in lines if "title" in line)
    assert "DOI" not in header and "collections" not in header  # empty columns are dropped
    assert "key" in header and "year" in header
    if width >= 160:
        assert all(any(title in line for line in lines) for title in TITLES)  # each title on one line


def test_a_narrow_table_says_which_columns_it_left_out():
    items = [LibraryItem(key="k", title="A title long enough to want room " * 2, item_type="conferencePaper",
                         doi="10.1000/a-rather-long-doi-name", tags=("some tag",), collections=("Thesis/Ch 2",))]
    text = render_library(items, [], "table", width=80)
    assert "Not shown at 80 columns: DOI" in text
    assert "1 item" in text.splitlines()[0]


def test_on_a_pipe_the_library_table_is_a_fixed_readable_width(monkeypatch):
    from zotero_bridge.render.library_table import PIPE_WIDTH, table_width

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)
    assert table_width() == PIPE_WIDTH >= 120
    monkeypatch.setenv("COLUMNS", "90")
    assert table_width() == 90


@pytest.mark.parametrize("width", [60, 80, 100])
def test_reading_list_links_are_never_cut_mid_id(width):
    recs = [Recommendation(Paper(id=f"p{n}", title="Retrieval Augmented Time Series Forecasting",
                                 authors=("Sungwon Han", "Seungeon Lee"),
                                 url=f"https://openreview.net/forum?id=GUDnecJd{n}U"), 0.15,
                           (Reason("K", "A decoder-only foundation model for time-series forecasting", 0.17),), n + 1,
                           match=58) for n in range(3)]
    text = render_recommendations(recs, "table", width=width)
    assert max(cell_len(line) for line in text.splitlines()) <= width
    for n in range(3):
        assert f"openreview.net/forum?id=GUDnecJd{n}U" in text or f"OpenReview GUDnecJd{n}U" in text
