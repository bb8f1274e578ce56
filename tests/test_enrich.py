"""Untitled seed abstracts → their real ICML 2025 papers by their text alone, checked against seed_matches.json
(shipped as a known match since issue 23; these tests switch it off to measure the text matcher)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from recommender.corpus.enrich import enrich_untitled, match_untitled
from recommender.corpus.readers import load_corpus
from recommender.items import Paper
from recommender.text import title_key


@pytest.fixture(scope="module")
def icml(request):
    shared = Path(__file__).resolve().parents[1].parent / "shared"
    data = shared / "data" / "icml2025"
    if not (data / "papers.jsonl").is_file() or not (data / "seed_matches.json").is_file():
        pytest.skip("../shared/data/icml2025 is not present")
    seeds = sorted((shared / "seeds").glob("*.txt"))
    truth = {}
    for match in json.loads((data / "seed_matches.json").read_text()):
        paragraphs = _paragraphs(shared / "seeds" / match["seed_file"])
        truth[title_key(paragraphs[match["seed_index"]])] = match["paper_id"]
    return {"seeds": seeds, "list": data / "papers.jsonl", "truth": truth}


def _paragraphs(path: Path) -> list[str]:
    """The seed format: a header line, then abstracts separated by blank lines."""
    blocks = "\n".join(path.read_text(encoding="utf-8").splitlines()[1:]).split("\n\n")
    return [" ".join(b.split()) for b in blocks if b.strip()]


def by_text(paths):
    """load_corpus without the shipped known matches: the seeds matched by their text only."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("recommender.corpus.venues.seed_matches", dict)
        return load_corpus(paths)


@pytest.fixture(scope="module")
def merged(icml):
    return by_text([*icml["seeds"], icml["list"]])


def test_seeds_get_their_true_titles_and_none_a_wrong_one(icml, merged):
    loaded = merged
    merged = [p for p in loaded.papers if "matched_abstract_id" in p.metadata]
    unmatched = [p for p in loaded.papers if p.title_derived]
    wrong = [p.title for p in merged if icml["truth"][title_key(p.abstract)] != p.id]
    assert wrong == []
    assert len(merged) >= 28 and loaded.enriched == len(merged)
    assert len(merged) + len(unmatched) == len(set(icml["truth"].values())) == 31
    assert len(loaded.papers) == 3330 + len(unmatched)


def test_a_merged_paper_has_the_list_metadata_and_the_seed_abstract(merged):
    loaded = merged
    paper = next(p for p in loaded.papers if p.id == "Z6RsbHAJk5")
    assert paper.title == "Flexible Tails for Normalizing Flows"
    assert paper.abstract.startswith("Normalizing flows are a flexible class")
    assert paper.authors and paper.url == "https://proceedings.mlr.press/v267/hickling25a.html"
    assert paper.metadata["openreview_id"] == "Z6RsbHAJk5" and not paper.title_derived


def test_the_hashed_seed_scores_are_scikit_learns_vocabulary_ones_up_to_collisions(icml):
    """The matcher's tf-idf (LexicalIndex with its stemming tokenizer, hashed) against scikit-learn's
    TfidfVectorizer with the same tokenizer: every seed's best title is the same, and hash collisions
    move no cosine by more than a few hundredths."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from recommender.corpus.enrich import _BUCKETS, _tokens
    from recommender.features.lexical import LexicalIndex

    seeds = [p.abstract for p in load_corpus(icml["seeds"]).papers]
    titles = [p.title for p in load_corpus([icml["list"]]).papers]
    vectorizer = TfidfVectorizer(sublinear_tf=True, tokenizer=_tokens, lowercase=False, token_pattern=None,
                                 ngram_range=(1, 2)).fit(titles + seeds)
    want = (vectorizer.transform(seeds) @ vectorizer.transform(titles).T).toarray()
    index = LexicalIndex.fit(titles + seeds, n_features=_BUCKETS, tokenize=_tokens)
    got = (index.transform(seeds) @ index.transform(titles).T).toarray()
    assert np.array_equal(got.argmax(axis=1), want.argmax(axis=1))
    assert np.abs(got - want).max() < 0.05


def test_file_order_does_not_matter(icml, merged):
    forward = merged
    backward = by_text([icml["list"], *reversed(icml["seeds"])])
    assert {p.id: p.title for p in forward.papers} == {p.id: p.title for p in backward.papers}


def test_seeds_whose_paper_is_missing_stay_untitled(icml):
    """Without their true papers in the list, no seed may be attached to anything."""
    listed = load_corpus([icml["list"]]).papers
    seeds = load_corpus(icml["seeds"]).papers
    without_truth = [p for p in listed if p.id not in set(icml["truth"].values())]
    assert match_untitled(seeds, without_truth) == []


def test_two_seeds_claiming_one_paper_get_neither(icml):
    listed = load_corpus([icml["list"]]).papers
    seed = next(p for p in load_corpus(icml["seeds"]).papers if "tail transform flow" in (p.abstract or ""))
    variant = Paper(id="abs-variant", title="x", abstract=seed.abstract + " We release code.", title_derived=True)
    assert len(match_untitled([seed], listed)) == 1
    assert match_untitled([seed, variant], listed) == []


def test_too_few_candidates_means_no_guessing():
    seed = Paper(id="abs-1", title="Graph", abstract="Graph neural networks for molecules.", title_derived=True)
    listed = Paper(id="p1", title="Graph Neural Networks for Molecules")
    assert enrich_untitled([seed, listed]) == ([seed, listed], 0)


def test_a_titled_copy_of_the_same_abstract_replaces_the_untitled_one(tmp_path):
    seed = tmp_path / "seed.txt"
    seed.write_text("ICML 2025\n\nWe propose a tail transform flow.\n", encoding="utf-8")
    rows = tmp_path / "full.jsonl"
    rows.write_text(json.dumps({"id": "x1", "title": "Flexible Tails", "abstract": "We propose a tail transform flow.",
                                "authors": ["A. Person"]}) + "\n", encoding="utf-8")
    papers = load_corpus([seed, rows]).papers
    assert [(p.id, p.title, p.title_derived) for p in papers] == [("x1", "Flexible Tails", False)]


def test_title_only_papers_are_counted_and_rows_carry_a_null_abstract(tmp_path, caplog):
    from click.testing import CliRunner

    from zotero_bridge.cli.main import cli

    corpus = tmp_path / "titles.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"t{n}", "title": f"Graph networks for molecules, part {n}"}) + "\n"
                              for n in range(3)), encoding="utf-8")
    library = tmp_path / "library.bib"
    library.write_text("@article{a, title={Graph networks for molecules}}\n", encoding="utf-8")
    with caplog.at_level(logging.INFO):
        result = CliRunner().invoke(cli, ["reading-list", "--library", str(library), "--corpus", str(corpus),
                                          "--format", "jsonl", "--features", "tfidf"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert rows and all("abstract" in row and row["abstract"] is None for row in rows)
    assert "3 of 3 papers ranked on titles only (no abstract)" in caplog.text + result.output  # the one notice line
