"""Whole-field items as weaker content evidence (recommender/scoring/evidence.py): a textbook typed as a book
carries fewer picks and reasons than the same text typed as a paper, a library with no book ranks exactly as
before, and the kept library state gives a warm run the cold run's list, also after an item's type alone changes."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from recommender.scoring.evidence import WHOLE_FIELD_WEIGHT, combined, evidence_weights
from zotero_bridge.cli import cli

PAPERS = [
    ("hamilton2023", "article", "Stochastic Optimal Control of Nonlinear Systems via Backstepping",
     "We design feedback controllers for nonlinear systems with backstepping and prove input-to-state stability."),
    ("lee2022", "article", "Distributed Model Predictive Control with ADMM",
     "Model predictive control of networked systems, distributed by the alternating direction method of multipliers."),
    ("ames2019", "article", "Control Barrier Functions: Theory and Applications",
     "Control barrier functions enforce safety constraints on nonlinear control systems with quadratic programs."),
]
TEXTBOOKS = [
    ("murphy2022", "Probabilistic Machine Learning: An Introduction",
     "A comprehensive introduction to machine learning through the lens of probabilistic modeling and inference."),
    ("hastie2009", "The Elements of Statistical Learning",
     "Data mining, inference and prediction: supervised learning, linear methods, trees, boosting, neural networks."),
]


def bibtex(book_type: str) -> str:
    entries = [f"@{kind}{{{key},\n  title = {{{title}}},\n  abstract = {{{abstract}}},\n  year = {{2023}}\n}}\n"
               for key, kind, title, abstract in PAPERS]
    entries += [f"@{book_type}{{{key},\n  title = {{{title}}},\n  abstract = {{{abstract}}},\n  year = {{2022}}\n}}\n"
                for key, title, abstract in TEXTBOOKS]
    return "\n".join(entries)


def ranked(tmp_path, monkeypatch, library, cache="cache") -> list[dict]:
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / cache))
    monkeypatch.setenv("ZOTREC_DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(cli, ["-q", "reading-list", "--library", str(library), "-n", "20", "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def textbook_carried(rows: list[dict]) -> int:
    books = {key for key, _, _ in TEXTBOOKS}
    return sum(1 for row in rows if row["reasons"] and row["reasons"][0]["key"] in books)


def test_weights_mark_only_whole_field_types():
    assert evidence_weights(["journalArticle", "preprint", "conferencePaper"]) is None
    weights = evidence_weights(["book", "journalArticle", "encyclopediaArticle", "bookSection"])
    assert weights.tolist() == [WHOLE_FIELD_WEIGHT, 1.0, WHOLE_FIELD_WEIGHT, 1.0]
    assert combined(None, None) is None and combined(weights, None) is weights
    assert np.allclose(combined(weights, np.full(4, 0.5, np.float32)), weights * 0.5)


def test_a_textbook_typed_as_a_book_carries_fewer_picks_than_as_a_paper(tmp_path, monkeypatch):
    as_papers, as_books = tmp_path / "papers.bib", tmp_path / "books.bib"
    as_papers.write_text(bibtex("article"), encoding="utf-8")
    as_books.write_text(bibtex("book"), encoding="utf-8")
    before = ranked(tmp_path, monkeypatch, as_papers)
    after = ranked(tmp_path, monkeypatch, as_books)
    assert textbook_carried(before) >= 3  # the textbooks reach far: they carry picks as papers
    assert textbook_carried(after) < textbook_carried(before)
    own = {row["id"] for row in before if row["reasons"][0]["key"] not in {key for key, _, _ in TEXTBOOKS}}
    assert own <= {row["id"] for row in after}  # what the library's papers carried stays in the list
    shown_before = {(row["id"], reason["key"]): reason["similarity"] for row in before for reason in row["reasons"]}
    books = {key for key, _, _ in TEXTBOOKS}
    weighed = [(reason["similarity"], shown_before[row["id"], reason["key"]]) for row in after
               for reason in row["reasons"] if reason["key"] in books and (row["id"], reason["key"]) in shown_before]
    assert weighed  # a book still a reason somewhere: its similarity shown at the weight it counts with
    assert all(abs(now - WHOLE_FIELD_WEIGHT * was) < 2e-3 for now, was in weighed)


def test_the_kept_state_gives_a_warm_run_the_cold_list_also_after_a_type_change(tmp_path, monkeypatch):
    library = tmp_path / "library.bib"
    library.write_text(bibtex("book"), encoding="utf-8")
    cold = ranked(tmp_path, monkeypatch, library, cache="one")
    warm = ranked(tmp_path, monkeypatch, library, cache="one")
    assert warm == cold
    library.write_text(bibtex("article"), encoding="utf-8")  # the same texts, the type alone changed
    changed = ranked(tmp_path, monkeypatch, library, cache="one")
    fresh = ranked(tmp_path, monkeypatch, library, cache="two")
    assert changed == fresh and changed != cold
