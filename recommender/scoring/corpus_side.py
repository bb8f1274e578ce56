"""What the signals derive from the corpus alone (tf-idf index and rows, predicted collaborative
factors, the authors' name keys): computed once per corpus, through a memo when the caller keeps a prepared corpus.

`memo(name, build)` returns the arrays stored under `name`, else `build()`'s, stored (the prepared
corpus's extras, recommender/scoring/prepared.py); None computes them in this process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from recommender import progress
from recommender.items import Paper
from recommender.scoring.authors import AuthorIndex, author_index_arrays
from recommender.store import digest

Memo = Callable[[str, Callable[[], dict[str, np.ndarray]]], dict[str, np.ndarray]]


def _through(memo: Memo | None, name: str | None, build: Callable[[], dict[str, np.ndarray]],
             what: str = "") -> dict[str, np.ndarray]:
    def said() -> dict[str, np.ndarray]:
        if not what:
            return build()
        with progress.doing(f"Preparing the corpus: {what}" + (" (once; kept for later runs)" if memo else "")):
            return build()

    return said() if memo is None or name is None else memo(name, said)


def tagged(memo: Memo | None, tag: str) -> Memo | None:
    """`memo` with every name followed by `tag` (the background scored beside the corpus: background.py), so
    that arrays made beside one background are never read beside another; `memo` itself for no tag."""
    if memo is None or not tag:
        return memo
    return lambda name, build: memo(f"{name}-background-{tag}", build)


def factors_name(model) -> str | None:
    """The name a collaborative model's predicted factors are kept under (with the prepared corpus and
    in the kept library state): one per model version (its cache_id); None for a model without one."""
    return None if model is None else f"factors-{digest(model.cache_id)[:16]}"


def corpus_factors(papers: Sequence[Paper], model, memo: Memo | None = None) -> np.ndarray:
    """The corpus papers' predicted collaborative factors."""
    return _through(memo, factors_name(model),
                    lambda: {"factors": model.item_factors([paper.text for paper in papers])},
                    f"collaborative factors of {len(papers):,} papers")["factors"]


AUTHORS_NAME = "authors-1"  # bump when recommender/features/authors.py changes what a key is


def corpus_authors(papers: Sequence[Paper], memo: Memo | None = None) -> AuthorIndex:
    """Every corpus author's name key (recommender/scoring/authors.py)."""
    return AuthorIndex.from_arrays(_through(memo, AUTHORS_NAME, lambda: author_index_arrays(papers),
                                           "the author index"))


def lexical_corpus(papers: Sequence[Paper], memo: Memo | None = None):
    """(LexicalIndex fitted on the corpus, the corpus's tf-idf rows)."""
    from scipy import sparse

    from recommender.features.lexical import N_FEATURES, LexicalIndex

    texts = [paper.text for paper in papers]

    def build() -> dict[str, np.ndarray]:
        index, rows = LexicalIndex.fit_transform(texts)
        return {**index.to_arrays(), "stop_words": np.array(sorted(index.stop_words)),
                "data": rows.data, "indices": rows.indices, "indptr": rows.indptr}

    arrays = _through(memo, "lexical", build, f"tf-idf rows of {len(papers):,} papers")
    index = LexicalIndex.from_arrays(arrays, arrays["stop_words"].tolist())
    rows = sparse.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=(len(texts), N_FEATURES))
    return index, rows
