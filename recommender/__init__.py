"""zotrec's recommender: corpus → features → scoring → recommendations, plus the collaborative
model, batch scoring and evaluation. Knows nothing of Zotero: never imports zotero_bridge,
pyzotero or click. Shared vocabulary at this level: items (types), errors, text (normalisation)."""

from .errors import EmptyLibraryError, InputError, RecommenderError
from .items import Creator, LibraryItem, Paper, Reason, Recommendation, Skipped

# numpy-backed names load on first use, so `zotrec --help` (which imports our errors) stays fast.
_LAZY = {"Recommender": ".scoring.ranking", "CorpusLoad": ".corpus.readers",
         "load_corpus": ".corpus.readers"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CorpusLoad",
    "Creator",
    "EmptyLibraryError",
    "InputError",
    "LibraryItem",
    "Paper",
    "Reason",
    "Recommendation",
    "Recommender",
    "RecommenderError",
    "Skipped",
    "load_corpus",
]
