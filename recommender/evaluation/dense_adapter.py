"""The collaborative adapter of issue 16 in its full form, measured on the dense protocol.

The adapted space (scoring/adapter.py) is the content space plus a mapped part: each paper's unit
embedding joined to β × its unit predicted ALS factor, renormalised, so papers saved by the same
people come closer. Here every content signal (the topK similarities, hence the reasons, and the
per-user linear model) is computed in that space. zotrec ships the lighter form, only the linear
model in the adapted space (scoring/fusion.py): within noise of this form on CiteULike validation,
ahead of it on the ICML leave-out, one 128-d join instead of a wider similarity matrix, and the
reasons stay in the plain content space (docs/evaluation.md has the figures).
"""

from __future__ import annotations

import numpy as np

from recommender.scoring.adapter import ADAPTER_BETA, adapted


def adapted_fold(fold, beta: float = ADAPTER_BETA):
    """A copy of a DenseFold whose content vectors and similarities live in the adapted space.

    The user side uses the factors a Zotero user's items would get (cross-fitted: an item is never
    its own neighbour); the candidates use the map's factors. Lexical and collaborative inputs stay.
    """
    from dataclasses import replace

    train = adapted(fold.train_vectors, fold.train_factors_from_text, beta)
    test = adapted(fold.test_vectors, fold.test_factors, beta)
    return replace(fold, train_vectors=train, test_vectors=test, dense_similarity=train @ test.T)


class AdaptedRepresentation:
    """A Representation (features/base.py) whose rows live in the adapted space: the base encoder's
    embeddings joined to a dense collaborative model's predicted factors of the same texts. With it a
    Recommender's topK, reasons and per-user linear model all use the adapted space (what
    benchmarks/topic_coverage.py and icml_leaveout.py measure; zotrec ships only the linear model's part)."""

    def __init__(self, base, model, beta: float = ADAPTER_BETA) -> None:
        self.base, self.model, self.beta = base, model, beta
        self.name = f"{getattr(base, 'name', 'dense')}+adapter"

    def fit(self, texts) -> AdaptedRepresentation:
        self.base = self.base.fit(texts)
        return self

    def transform(self, texts) -> np.ndarray:
        texts = list(texts)
        return adapted(np.asarray(self.base.transform(texts)), self.model.item_factors(texts), self.beta)


__all__ = ["AdaptedRepresentation", "adapted_fold"]
