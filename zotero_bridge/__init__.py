"""zotrec's Zotero side: the Web API (zotero_api/), read libraries (sources/), learn from what the user
did (feedback/), write back (sync/), render results (render/), and the `zotrec` command line (cli/).
May import recommender; the recommender never imports this package."""

from .errors import BridgeError, SourceError

# The readers load on first use, so `zotrec --help` does not import every parser.
_LAZY = {"LibraryRead": ".sources", "SourceOptions": ".sources", "read_library": ".sources"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BridgeError", "LibraryRead", "SourceError", "SourceOptions", "read_library"]
