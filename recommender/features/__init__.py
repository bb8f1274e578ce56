"""Features: texts → L2-normalised rows (tf-idf, dense sentence embeddings, their hybrid) and the embedding cache.

Step 2 of the pipeline. Imports the vocabulary only; the dense encoder loads on first use.
Encoders are pluggable: a new one is a class with `encode(texts)` and a `model_id`, named in
`_ENCODERS` (then `--encoder NAME` selects it, and the embedding cache keeps its vectors apart).
"""

from __future__ import annotations

from recommender.errors import SettingError
from recommender.features.base import Representation, cosine

_FACTORIES = {
    "tfidf": ("recommender.features.tfidf", "TfidfRepresentation"),
    "dense": ("recommender.features.dense", "DenseRepresentation"),
    "hybrid": ("recommender.features.hybrid", "HybridRepresentation"),
}
REPRESENTATIONS = tuple(_FACTORIES)
# encoder name → (module, class); the class is built with no arguments and exposes `model_id`.
_ENCODERS = {
    "minilm": ("recommender.features.dense", "MiniLMEncoder"),
}
ENCODERS = tuple(_ENCODERS)
DEFAULT_ENCODER = "minilm"


def make_encoder(name: str = DEFAULT_ENCODER):
    """The sentence encoder called `name` (imported only when asked for)."""
    import importlib

    try:
        module_name, class_name = _ENCODERS[name]
    except KeyError:
        raise SettingError(f"unknown encoder '{name}' (choose from {', '.join(_ENCODERS)})") from None
    return getattr(importlib.import_module(module_name), class_name)()


def make_representation(name: str, encoder: str | None = None) -> Representation:
    """The representation called `name`; optional extras (dense) are imported only when asked for.

    `encoder` names the sentence encoder of the dense and hybrid representations (default MiniLM).
    """
    import importlib

    try:
        module_name, class_name = _FACTORIES[name]
    except KeyError:
        raise SettingError(f"unknown representation '{name}' (choose from {', '.join(_FACTORIES)})") from None
    if encoder is None or encoder == DEFAULT_ENCODER or name == "tfidf":
        return getattr(importlib.import_module(module_name), class_name)()
    from recommender.features.dense import DenseRepresentation

    dense = DenseRepresentation(make_encoder(encoder))
    if name == "dense":
        return dense
    from recommender.features.hybrid import HybridRepresentation

    return HybridRepresentation(dense=dense)


def make_encoder_representation(model_id: str) -> Representation:
    """The dense representation whose encoder has this `model_id` (what a trained model records)."""
    for name in _ENCODERS:
        encoder = make_encoder(name)
        if getattr(encoder, "model_id", None) == model_id:
            from recommender.features.dense import DenseRepresentation

            return DenseRepresentation(encoder)
    raise SettingError(f"no installed encoder has the model id '{model_id}' (known: {', '.join(_ENCODERS)})")


__all__ = ["DEFAULT_ENCODER", "ENCODERS", "REPRESENTATIONS", "Representation", "cosine", "make_encoder",
           "make_encoder_representation", "make_representation"]
