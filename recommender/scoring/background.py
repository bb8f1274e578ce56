"""The background a small corpus is ranked inside (issue 39): the bundled ICML 2025 list.

The linear model draws its negatives from the corpus and every signal is standardised over it, which assumes a
broad corpus, mostly not for the user; a few dozen papers of one field break that (the field itself becomes "not
this user"). So a corpus smaller than the bundled list is scored together with it and shows only its own papers
(docs/evaluation.md, "A small corpus is ranked inside the bundled list").
"""

from __future__ import annotations

from collections.abc import Sequence

from recommender.items import Paper
from recommender.scoring.owned import CorpusKeys
from recommender.store import digest

BACKGROUND_SIZE = 3330  # the bundled list's papers (a test holds it): a corpus this large is its own background


def needs_background(corpus_size: int) -> bool:
    """Whether a corpus of `corpus_size` papers is ranked inside the background."""
    return corpus_size < BACKGROUND_SIZE


def beside(corpus: Sequence[Paper], keys: CorpusKeys, background: Sequence[Paper]) -> list[Paper]:
    """The background papers scored beside `corpus` (whose identity keys are `keys`): none for a corpus as large
    as the background, else every background paper that is not a corpus paper (same DOI, URL or title)."""
    if not background or not needs_background(len(corpus)):
        return []
    return [paper for paper in background
            if keys.find(paper.doi or "", paper.url or "", "" if paper.title_derived else paper.title) is None]


def background_tag(papers: Sequence[Paper]) -> str:
    """A short name for the background papers in use ("" for none): what a kept value computed beside them
    is stored under, so that a changed background never meets values kept beside another."""
    return digest("\n".join(paper.id for paper in papers))[:12] if papers else ""
