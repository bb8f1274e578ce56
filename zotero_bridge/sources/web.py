"""`--library zotero:web`: read a Zotero library through the Web API (pyzotero), incrementally.

The read itself (first time everything, later only what changed) is zotero_api/snapshot.py; this module
resolves the credentials from the options and turns the snapshot into LibraryItems. Notes, attachments,
annotations and trashed items never reach the profile.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from recommender.items import LibraryItem
from recommender.retry import RetryPolicy
from zotero_bridge.errors import SourceError
from zotero_bridge.sources.base import LibraryRead, SourceOptions
from zotero_bridge.sources.zotero_json import item_from_zotero_json
from zotero_bridge.zotero_api.cache import WebCache, cache_path
from zotero_bridge.zotero_api.client import WebSession
from zotero_bridge.zotero_api.credentials import Credentials, resolve_credentials
from zotero_bridge.zotero_api.snapshot import Snapshot, sync_snapshot


def open_session(options: SourceOptions, argument: str = "") -> tuple[WebSession, WebCache]:
    """Credentials (option > env > config > keyring), one pyzotero client, and this library's cache."""
    library_type, library_id = _parse_argument(argument)
    explicit_type = library_type or (options.library_type if options.library_type != "user" else None)
    credentials = resolve_credentials(library_id or options.library_id, explicit_type, options.api_key,
                                      options.endpoint)
    policy = options.extra.get("retry_policy") or RetryPolicy()
    session = WebSession(credentials, policy)
    return session, WebCache(cache_path(credentials.endpoint, credentials.library_type, credentials.library_id,
                                        options.cache_dir))


def _parse_argument(argument: str) -> tuple[str | None, str | None]:
    """'' → (None, None); 'group:123' → ('group', '123'); '123' → (None, '123')."""
    if not argument:
        return None, None
    kind, _, number = argument.rpartition(":")
    if kind and kind not in ("user", "group") or not number.isdigit():
        raise SourceError(f"zotero:web:{argument}: write zotero:web, zotero:web:<id> or zotero:web:group:<id>")
    return kind or None, number


def read_web_library(argument: str, options: SourceOptions) -> LibraryRead:
    """The scheme reader: sync the cache, then convert its items (request counts go in `stats`)."""
    session, cache = open_session(options, argument)
    try:
        snapshot = sync_snapshot(session, cache)
    finally:
        session.close()
        cache.close()
    read = library_read(snapshot, session.credentials)
    read.stats.update(session.stats())
    return read


def library_read(snapshot: Snapshot, credentials: Credentials,
                 keep: Callable[[Mapping], bool] | None = None) -> LibraryRead:
    """Regular items not in the trash, with full collection paths; the rest is reported as skipped."""
    paths = snapshot.collection_paths()
    where = f"zotero:web ({credentials.describe()})"
    read = LibraryRead(sources=[where], stats={"library_version": snapshot.version})
    for key, data in snapshot.items.items():
        if data.get("deleted"):
            continue  # the user threw it away: not part of the profile, not worth a warning
        if keep is not None and not keep(data):
            continue
        data = {**data, "collections": [c for c in data.get("collections") or [] if c in paths]}
        converted = item_from_zotero_json(data, where=f"{where}: {key}", collection_paths=paths,
                                          library=credentials.describe())
        (read.items if isinstance(converted, LibraryItem) else read.skipped).append(converted)
    return read
