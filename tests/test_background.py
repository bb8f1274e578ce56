"""A small corpus is ranked inside the bundled list (recommender/scoring/background.py, issue 39)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from recommender.features.base import HybridRows, stacked
from recommender.items import LibraryItem, Paper
from recommender.pipeline.build import bundled_background
from recommender.scoring.background import BACKGROUND_SIZE, background_tag, beside, needs_background
from recommender.scoring.owned import CorpusKeys
from recommender.scoring.ranking import Recommender

from .conftest import REPO

TOPICS = ["graph neural networks message passing molecules", "reinforcement learning policy gradient exploration",
          "diffusion models image generation sampling", "bayesian optimisation gaussian process kernels",
          "protein structure prediction folding", "speech recognition acoustic models",
          "federated learning privacy clients", "causal inference treatment effects"]


def paper(number: int, title: str, **fields) -> Paper:
    return Paper(id=f"p{number}", title=title, **fields)


def background_papers(count: int = 160) -> list[Paper]:
    """Papers of every topic: most of them are not for a user of one field."""
    return [paper(1000 + n, f"{TOPICS[n % len(TOPICS)]} study {n} with {TOPICS[(n * 3 + 1) % len(TOPICS)]}")
            for n in range(count)]


def test_the_background_is_the_bundled_list_and_the_default_corpus_is_never_padded():
    papers = bundled_background()
    assert len(papers) == BACKGROUND_SIZE
    assert not needs_background(len(papers))  # the default corpus is its own background: the shipped list unchanged
    assert needs_background(BACKGROUND_SIZE - 1) and needs_background(1)


def test_beside_leaves_out_the_corpus_papers_by_doi_url_or_title():
    background = [paper(1, "Shared title of a paper"), paper(2, "Other", doi="10.1/X"), paper(3, "Third", url="https://a.org/p"),
                  paper(4, "Only in the background"), paper(5, "Shared title of a paper", title_derived=True)]
    corpus = [paper(10, "Shared Title of a Paper!"), paper(11, "Different", doi="10.1/x"),
              paper(12, "Else", url="https://a.org/p")]
    extra = beside(corpus, CorpusKeys(corpus), background)
    # a title made from the abstract never matches (the owned rule): paper 5 stays
    assert [p.id for p in extra] == ["p4", "p5"]
    assert beside(corpus, CorpusKeys(corpus), []) == []
    assert background_tag(extra) != background_tag(extra[:1]) and background_tag([]) == ""


def test_beside_gives_nothing_for_a_corpus_as_large_as_the_background(monkeypatch):
    monkeypatch.setattr("recommender.scoring.background.BACKGROUND_SIZE", 3)
    corpus = [paper(n, f"title {n}") for n in range(3)]
    assert beside(corpus, CorpusKeys(corpus), [paper(9, "else")]) == []
    assert [p.id for p in beside(corpus[:2], CorpusKeys(corpus[:2]), [paper(9, "else")])] == ["p9"]


def test_stacked_joins_rows_of_each_kind():
    dense_a, dense_b = np.eye(3, 4, dtype=np.float32), np.ones((2, 4), dtype=np.float32)
    joined = stacked(dense_a, dense_b)
    assert joined.dtype == np.float32 and np.array_equal(joined, np.vstack([dense_a, dense_b]))
    sparse_a, sparse_b = sparse.csr_matrix(dense_a), sparse.csr_matrix(dense_b)
    assert np.array_equal(stacked(sparse_a, sparse_b).toarray(), joined)
    hybrid = stacked(HybridRows(sparse_a, dense_a, 0.7), HybridRows(sparse_b, dense_b, 0.7))
    assert hybrid.shape == (5, 8) and hybrid.dense_weight == 0.7
    assert np.array_equal(hybrid.dense_rows, joined) and np.array_equal(hybrid.sparse_rows.toarray(), joined)


def _library() -> list[LibraryItem]:
    return [LibraryItem(key=f"L{n}", title=f"{TOPICS[0]} for chemistry, part {n}") for n in range(6)]


def _small_corpus() -> list[Paper]:
    return [paper(n, f"{TOPICS[0]} variant {n} " + " ".join(TOPICS[(n % 4) + 1].split()[:n % 3]))
            for n in range(12)] + [paper(50, f"{TOPICS[0]} for chemistry, part 3")]  # the last: owned


def test_a_small_corpus_shows_its_own_papers_only_each_once():
    corpus = _small_corpus()
    ranked = Recommender(corpus, background=background_papers()).recommend(_library(), top_n=0)
    shown = [rec.paper.id for rec in ranked]
    assert sorted(shown) == sorted(p.id for p in corpus[:-1])  # the owned paper and the background never shown
    assert [rec.rank for rec in ranked] == list(range(1, len(shown) + 1))
    assert all(np.isfinite(rec.score) for rec in ranked)
    assert all(later.score <= earlier.score for earlier, later in zip(ranked, ranked[1:]))


@pytest.mark.parametrize("representation", ["tfidf", "dense"])
def test_a_small_corpus_is_scored_as_inside_corpus_and_background(representation):
    """The background's whole effect: each corpus paper's score and place are those it has in a ranking of the
    corpus and the background together (the same papers in the same order), the background left out."""
    corpus, background = _small_corpus(), background_papers()
    library = _library()
    beside_it = Recommender(corpus, representation=representation, background=background, interests=False)
    together = Recommender(corpus + background, representation=representation, interests=False)
    alone = [(rec.paper.id, rec.score) for rec in beside_it.recommend(library, top_n=0)]
    inside = [(rec.paper.id, rec.score) for rec in together.recommend(library, top_n=0)
              if rec.paper.id in {p.id for p in corpus}]
    assert [name for name, _ in alone] == [name for name, _ in inside]
    assert np.allclose([score for _, score in alone], [score for _, score in inside], rtol=1e-6, atol=1e-9)
    assert beside_it.corpus == corpus and beside_it.corpus_keys.size == len(corpus)  # the public corpus: its own


def test_every_command_scores_a_small_corpus_file_beside_the_bundled_list(tmp_path, monkeypatch):
    """The commands' one builder (pipeline/build.py) hands the background to a small corpus, never to a large one."""
    from recommender.pipeline.build import background_for, shipped_recommender

    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    lines = (REPO / "recommender" / "data" / "icml2025.jsonl").read_text(encoding="utf-8").splitlines()
    small = tmp_path / "small.jsonl"
    small.write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    built = shipped_recommender([small], features="tfidf", aggregation="learned")
    assert len(built.recommender.corpus) == 40 and built.recommender.background_tag
    shown = built.recommender.recommend([LibraryItem(key="A", title="language models that reason")], top_n=0)
    assert len(shown) == 40
    assert background_for(BACKGROUND_SIZE) == () and len(background_for(40)) == BACKGROUND_SIZE
