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


OSC8 = re.compile(r"\x1b\]8;[^;]*;([^\x1b]*)\x1b\\")
ANSI = re.compile(r"\x1b\]8;[^\x1b]*\x1b\\|\x1b\[[0-9;]*m")


def _linked_recs() -> list[Recommendation]:
    urls = ["https://openreview.net/forum?id=GUDnecJdJU", "https://icml.cc/virtual/2025/poster/46523",
            "javascript:alert(1)"]
    return [Recommendation(Paper(id=f"p{n}", title="Retrieval Augmented Time Series Forecasting", url=url),
                           0.15, (Reason("K", "A decoder-only foundation model", 0.17),), n + 1, match=58)
            for n, url in enumerate(urls)]


@pytest.mark.parametrize("width", [80, 120])
def test_on_a_terminal_the_table_links_are_hyperlinks_to_the_whole_url(width):
    plain = render_recommendations(_linked_recs(), "table", width=width)
    linked = render_recommendations(_linked_recs(), "table", width=width, hyperlinks=True)
    assert "\x1b" not in plain
    targets = set(OSC8.findall(linked)) - {""}
    assert targets == {"https://openreview.net/forum?id=GUDnecJdJU", "https://icml.cc/virtual/2025/poster/46523"}
    assert "javascript" not in targets  # only http(s) links become clickable
    visible = ANSI.sub("", linked)
    assert visible == plain  # the same text, the same width: only the markup is added
    assert max(cell_len(line) for line in visible.splitlines()) <= width


def _cli_table(corpus, *, terminal: bool) -> str:
    """`zotrec reading-list` as a user runs it, its stdout a pseudo-terminal or a pipe."""
    import os
    import pty
    import subprocess
    import sys

    from .conftest import REPO

    command = [sys.executable, "-m", "zotero_bridge", "-q", "reading-list", "--library",
               str(REPO / "examples" / "library.bib"), "--features", "tfidf", "--model", "none", "-n", "3",
               "--corpus", str(corpus)]
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None), env.pop("FORCE_COLOR", None), env.pop("TTY_COMPATIBLE", None)
    if not terminal:
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, cwd=REPO,
                              check=True).stdout
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, stdout=follower, stderr=subprocess.DEVNULL, env=env, cwd=REPO)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=300)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_hyperlinks_on_a_terminal_and_none_on_a_pipe(tmp_path):
    import json

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"p{n}", "title": title, "abstract": title,
                                          "url": f"https://openreview.net/forum?id=Abc{n}xyz"}) + "\n"
                              for n, title in enumerate(["Normalizing flows for molecules", "Flow matching on graphs",
                                                         "Continuous normalizing flows for images",
                                                         "Diffusion models and flows"])))
    piped = _cli_table(corpus, terminal=False)
    assert "openreview.net/forum?id=Abc" in piped and "\x1b" not in piped
    shown = _cli_table(corpus, terminal=True)
    listed = set(re.findall(r"forum\?id=(Abc\dxyz)", piped))
    assert len(listed) == 3  # -n 3, each paper's link shown whole
    assert {target for target in OSC8.findall(shown) if target} == {f"https://openreview.net/forum?id={forum}"
                                                                     for forum in listed}
    assert " ".join(ANSI.sub("", shown).replace("\r\n", "\n").split()) == " ".join(piped.split())


@pytest.mark.parametrize("width", [50, 60, 80])
def test_other_links_become_a_short_id_not_a_piece_of_one(width):
    url = "https://proceedings.mlr.press/v267/han25a.html"
    recs = [Recommendation(Paper(id="p", title="Retrieval Augmented Forecasting", url=url), 0.15,
                           (Reason("K", "A decoder-only foundation model for time-series forecasting", 0.17),), 1)]
    text = render_recommendations(recs, "table", width=width)
    cells = " ".join(re.findall(r"│ ([^│]*?)\s*(?=│)", text)).split()
    shown = [word for word in cells if "mlr" in word or "han25a" in word or "v267" in word]
    assert shown in (["proceedings.mlr.press/v267/han25a.html"], ["proceedings.mlr.press", "han25a.html"],
                     ["han25a.html"], ["proceedings.mlr.press"]), (width, shown)
