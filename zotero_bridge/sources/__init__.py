"""Sources: where a library comes from (export files, zotero.sqlite, the local API, the Web API)
→ LibraryItems. `read_library` dispatches on `--library SOURCE`. Imports recommender's vocabulary
and zotero_bridge.zotero_api (client, cache, credentials) for reading; never the CLI, feedback or sync.
"""

from zotero_bridge.sources.base import LibraryRead, SourceOptions
from zotero_bridge.sources.dispatch import SQLITE_SUFFIXES, read_library

__all__ = ["SQLITE_SUFFIXES", "LibraryRead", "SourceOptions", "read_library"]
