"""The collaborative adapter of issue 16, measured on the dense protocol (not shipped: see docs/evaluation.md).

The adapted space is the content space plus a mapped part: each paper's unit embedding joined to
β × its unit predicted ALS factor (the kNN map of collaborative/dense_model.py), renormalised. The
cosine of two adapted papers is then (cos(content) + β²·cos(factors)) / (1 + β²): papers saved by the
same people come closer. Every content signal (the topK similarities, hence the reasons, and the
per-user linear model) is computed in that space instead of the content space.

Measured on validation (citeulike-a and -t, fold 0's training items, 20 % cold, 1,500 users) against
linear (ridge) mapped parts and β ∈ {0.5, 1, 2, 3}; the kNN part with β = 0.5 was the best, and the
gain was within noise of the plain fusion, so zotrec does not ship it.
"""

from __future__ import annotations

import numpy as np

ADAPTER_BETA = 0.5


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def adapted(vectors: np.ndarray, factors: np.ndarray, beta: float = ADAPTER_BETA) -> np.ndarray:
    """Unit rows of [embedding, β·unit(predicted factor)]: the adapted space's vectors."""
    if len(vectors) != len(factors):
        raise ValueError(f"{len(vectors)} embeddings but {len(factors)} factor rows")
    return _unit(np.hstack([_unit(vectors), beta * _unit(factors)]))


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
    benchmarks/topic_coverage.py and icml_leaveout.py measure; zotrec does not ship it)."""

    def __init__(self, base, model, beta: float = ADAPTER_BETA) -> None:
        self.base, self.model, self.beta = base, model, beta
        self.name = f"{getattr(base, 'name', 'dense')}+adapter"

    def fit(self, texts) -> AdaptedRepresentation:
        self.base = self.base.fit(texts)
        return self

    def transform(self, texts) -> np.ndarray:
        texts = list(texts)
        return adapted(np.asarray(self.base.transform(texts)), self.model.item_factors(texts), self.beta)


__all__ = ["ADAPTER_BETA", "AdaptedRepresentation", "adapted", "adapted_fold"]
