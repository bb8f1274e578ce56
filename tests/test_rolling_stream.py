"""A stream collection rolls (issue 38): against the fake Zotero Web API and the arXiv double, an untouched pick
leaves once N better unseen papers are in the window — to the trash, saying "left the top N" — while a fixed
corpus keeps its strong incumbency (tests/test_stable_sync.py)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from recommender.corpus.stream import fetch_stream
from recommender.corpus.http import FetchSettings
from recommender.corpus.readers import load_corpus
from recommender.scoring.stability import MARGIN, margin_for, stable_selection
from tests.conftest import ZOTERO_USER_ID
from tests.fake_arxiv import FakeArxiv, paper
from tests.test_arxiv_rolling import SPEC, START, corpus_id, data_dir, members, sync  # noqa: F401 - data_dir


def test_a_stream_has_no_incumbency_beyond_a_tie():
    ranked, scores = ["a", "b", "c", "d"], [0.9, 0.8, 0.21, 0.2]
    assert stable_selection(ranked, scores, {"d"}, 2, margin_for(stream=True)) == ["a", "b"]
    assert stable_selection(ranked, scores, {"d"}, 2, margin_for(stream=False)) == ["a", "d"]  # σ-margin holds
    assert stable_selection(ranked, [0.9, 0.5, 0.5, 0.5], {"d"}, 2, margin_for(stream=True)) == ["a", "d"]  # a tie
    assert margin_for(stream=False) == MARGIN


FILLER = ["earthquakes seismic waves", "electron microscopy analysis", "food allergy sensitization",
          "plasma probe vacuum flows", "nanotube yarns textiles", "stem cell transplantation"]


def weak(day: int):
    """Three fair picks (Sherlock Holmes with a plasma probe) among papers on the library's other topics."""
    when = START + timedelta(days=day) - timedelta(hours=8)
    fair = [paper(100 * day + n, when, hour=n, title=f"Sherlock Holmes, plasma probes and vacuum flows {day}.{n}",
                  abstract=f"sherlock holmes plasma probe vacuum subsonic flows calibration {day} {n}")
            for n in range(3)]
    return fair + [paper(100 * day + 10 + n, when, hour=n, title=f"{topic.title()} note {day}.{n}",
                         abstract=f"{topic} {day} {n}") for n, topic in enumerate(FILLER)]


def strong(day: int):
    """Three a little better: Sherlock Holmes and crime fiction, without the plasma."""
    when = START + timedelta(days=day) - timedelta(hours=8)
    return [paper(100 * day + n, when, hour=n, title=f"Sherlock Holmes, crime fiction and plasma {day}.{n}",
                  abstract=f"sherlock holmes crime fiction plasma probe vacuum flows {day} {n}")
            for n in range(3)]


def test_untouched_picks_leave_the_top_n_when_better_papers_come(zotero_server, data_dir):  # noqa: F811
    arxiv = FakeArxiv()
    url = arxiv.start()
    try:
        arxiv.add(*weak(0))
        fetch_stream(SPEC, [url], FetchSettings(sleep=lambda s: None, page_size=50), days=3, now=START)
        sync(zotero_server, top_n=3)
        first = {corpus_id(d) for d in members(zotero_server).values()}
        assert len(first) == 3
        with sqlite3.connect(data_dir / "seen.sqlite") as db:  # a day passes
            db.execute("UPDATE seen SET first_day = date(first_day, '-1 day')")
        arxiv.add(*strong(1))
        fetch_stream(SPEC, [url], FetchSettings(sleep=lambda s: None, page_size=50), days=3,
                    now=START + timedelta(days=1))
        window = {p.id for p in load_corpus(["arxiv:cs.LG"]).papers}
        assert first <= window  # the weak picks are still in the window: they leave the top N, not the window
        report = sync(zotero_server, top_n=3)
        now_in = {corpus_id(d) for d in members(zotero_server).values()}
        assert len(now_in) == 3 and not now_in & first  # three better unseen papers: the weak picks left
        leaving = {e.corpus_id: e.note for e in report.plan.of("trash", "remove")}
        assert set(leaving) == first
        assert all(note.startswith("left the top N") for note in leaving.values()), leaving
        assert all(e.action == "trash" for e in report.plan.of("trash", "remove"))  # untouched: to the trash
        library = zotero_server.library("user", ZOTERO_USER_ID)  # the user keeps one pick (a tag of their own)
        kept_key, kept = next(iter(members(zotero_server).items()))
        zotero_server.edit_item(library, kept_key, tags=[*kept["tags"], {"tag": "to-read"}])
        with sqlite3.connect(data_dir / "seen.sqlite") as db:  # two days pass; the window is two days now
            db.execute("UPDATE seen SET first_day = date(first_day, '-2 day')")
        arxiv.add(*weak(3))
        fetch_stream(SPEC, [url], FetchSettings(sleep=lambda s: None, page_size=50), days=2,
                    now=START + timedelta(days=3))
        report = sync(zotero_server, top_n=3)
        leaving = {e.corpus_id: e.note for e in report.plan.of("trash", "remove")}
        assert set(leaving) == now_in - {corpus_id(kept)}
        assert all(note.startswith("left the window") for note in leaving.values()), leaving
        after = {corpus_id(d) for d in members(zotero_server).values()}
        assert corpus_id(kept) in after and len(after) == 4  # the kept one is the user's, beside three picks
    finally:
        arxiv.stop()
