"""zotrec's Zotero side: read libraries (files, zotero.sqlite, local and Web API), write back."""

from .errors import BridgeError, SourceError
from .sources import LibraryRead, SourceOptions, read_library

__all__ = ["BridgeError", "LibraryRead", "SourceError", "SourceOptions", "read_library"]
