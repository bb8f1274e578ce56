"""pyzotero on zotrec's bounded HTTP client, for both Zotero APIs: `make_zotero` builds the pyzotero client
(every answer read through recommender/bounded_http.py; pyzotero's own Backoff bookkeeping, which cannot
read an HTTP date and sleeps without a limit, left to our hooks), and `every_page` reads a listing page by
page — to the Total-Results Zotero reported, and never around a `Link: rel="next"` loop or past the page cap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from recommender.bounded_http import Limits, PageGuard, bounded_client, server_name

REQUEST_TIMEOUT_S = 20.0


def make_zotero(library_id: str, library_type: str, *, api_key: str | None = None, local: bool = False,
                endpoint: str | None = None, bounds: Limits | None = None,
                event_hooks: dict[str, list] | None = None, timeout: float = REQUEST_TIMEOUT_S) -> Any:
    """A pyzotero `Zotero` whose client is bounded_client; the local API is never sent through a proxy."""
    from pyzotero import zotero

    client = bounded_client(bounds=bounds, event_hooks=event_hooks, timeout=timeout, trust_env=not local)
    zot = zotero.Zotero(library_id, library_type, api_key, local=local, client=client)
    if endpoint:
        zot.endpoint = endpoint
    zot._set_backoff = lambda duration: None  # float('Wed, 21 Oct …') raises; waits are the session's to take
    zot._check_backoff = lambda: None
    return zot


def total_results(zot: Any) -> int | None:
    """The Total-Results header of the last answer, when it is a whole number."""
    value = zot.request.headers.get("Total-Results") if zot.request is not None else None
    return int(value) if value and str(value).strip().isdigit() else None


def _link(zot: Any, name: str) -> str | None:
    """A page link as one string whatever the order of its parameters (locale and format left out)."""
    link = (zot.links or {}).get(name)
    if not link:
        return None
    parts = urlsplit(str(link))
    query = sorted((k, v) for k, v in parse_qsl(parts.query) if k not in ("locale", "format"))
    return f"{parts.path.rstrip('/')}?{urlencode(query)}"


def _keys(page: list) -> tuple[str, ...]:
    return tuple(str(row.get("key") or (row.get("data") or {}).get("key")) if isinstance(row, dict) else repr(row)
                 for row in page)


def listing(endpoint: str, what: str) -> Callable[[Any], list]:
    """A `check` for every_page: a page must be a list (an HTML page or other JSON is one line)."""
    def check(page: Any) -> list:
        if not isinstance(page, list):
            from zotero_bridge.errors import SourceError

            raise SourceError(f"{endpoint} answered {what} with something that is not Zotero API data "
                              f"({type(page).__name__})")
        return page
    return check


def every_page(zot: Any, what: str, first_page: list, *, run: Callable[[Callable[[], Any]], Any],
               check: Callable[[Any], list], progress: Callable[[int, int | None], None] | None = None,
               limits: Limits | None = None) -> list:
    """`first_page` (already read and checked) and every page after it: `run(zot.follow)` while Zotero gives
    a next link, until Total-Results objects are read; `check` turns each answer into a list or raises.
    A next link back to a page already read, the same page twice, or more than the page cap is one
    ServerLimitError naming the server."""
    rows = list(first_page)
    guard = PageGuard(server_name(zot.endpoint), what, total_results(zot), limits)
    guard.page(_keys(first_page), _link(zot, "self"))
    while not guard.done(len(rows)):
        following = _link(zot, "next")
        if following is None:
            break
        guard.follow(following)
        page = check(run(zot.follow))
        guard.page(_keys(page), _link(zot, "self"))
        rows.extend(page)
        if progress is not None:
            progress(guard.pages, guard.total)
    return rows
