"""The hybrid score: the content score and the collaborative score, each standardised per user, then blended.

Standardising over the candidates puts a cosine and an ALS dot product on one scale, so a single
weight (chosen on a validation split, stored in the model) says how much the collaborative side counts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

log = logging.getLogger(__name__)

BLEND_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def standardise(scores: np.ndarray) -> np.ndarray:
    """Zero mean, unit spread along the last axis (a constant row becomes all zeros)."""
    scores = np.asarray(scores, dtype=np.float64)
    centred = scores - scores.mean(axis=-1, keepdims=True)
    spread = centred.std(axis=-1, keepdims=True)
    return np.divide(centred, spread, out=np.zeros_like(centred), where=spread > 0)


def blend(content: np.ndarray, collaborative: np.ndarray, weight: float) -> np.ndarray:
    """(1 − weight)·z(content) + weight·z(collaborative), row by row."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"blend weight must be between 0 and 1, got {weight}")
    return (1.0 - weight) * standardise(content) + weight * standardise(collaborative)


def choose_blend_weight(quality: Callable[[float], float], grid: Sequence[float] = BLEND_GRID) -> float:
    """The grid weight with the best validation quality (ties: the smaller weight, i.e. more content)."""
    results = {weight: quality(weight) for weight in grid}
    best = max(results, key=lambda weight: (results[weight], -weight))
    log.info("blend weights on validation: %s → %.2f",
             ", ".join(f"{w:.1f}:{q:.4f}" for w, q in results.items()), best)
    return best


def hybrid_scores(content: np.ndarray, library_texts: Sequence[str], corpus_factors: np.ndarray, model) -> np.ndarray:
    """Blend for one user: `corpus_factors` are the model's predicted factors of the corpus papers."""
    user = model.user_vector(model.item_factors(library_texts))
    return blend(content, corpus_factors @ user, model.blend_weight)
