"""Features: texts → L2-normalised rows (tf-idf, dense MiniLM, their hybrid) and the embedding cache.

Step 2 of the pipeline. Imports the vocabulary only; the dense encoder loads on first use.
"""

from __future__ import annotations

from recommender.features.base import Representation, cosine

_FACTORIES = {
    "tfidf": ("recommender.features.tfidf", "TfidfRepresentation"),
    "dense": ("recommender.features.dense", "DenseRepresentation"),
    "hybrid": ("recommender.features.hybrid", "HybridRepresentation"),
}
REPRESENTATIONS = tuple(_FACTORIES)


def make_representation(name: str) -> Representation:
    """The representation called `name`; optional extras (dense) are imported only when asked for."""
    import importlib

    try:
        module_name, class_name = _FACTORIES[name]
    except KeyError:
        raise ValueError(f"unknown representation '{name}' (choose from {', '.join(_FACTORIES)})") from None
    return getattr(importlib.import_module(module_name), class_name)()


__all__ = ["REPRESENTATIONS", "Representation", "cosine", "make_representation"]
