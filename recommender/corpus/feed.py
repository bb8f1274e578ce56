"""`feed:URL`: a journal's table-of-contents feed (RSS 2.0, RSS 1.0/RDF, Atom) as a stream corpus.

One conditional GET a fetch: the stored corpus keeps the feed's ETag and Last-Modified (the stream's
memory, `lister.memory`), sent back as If-None-Match and If-Modified-Since, so an unchanged feed costs one
304 and no body. A feed holds its latest items only; the stored corpus keeps each item for the window
(`--days`) from its date, one row per DOI (else per link), so an item that leaves the feed stays stored.
The answer's parsing is feed_parse.py; the window, merge and storage are the stream's (stream.py).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any, ClassVar
from urllib.parse import urlsplit

from recommender.corpus.feed_parse import parse_feed
from recommender.corpus.stream import Lister, StreamPage, StreamSource
from recommender.errors import InputError

_SLUG = re.compile(r"[^a-z0-9]+")


class FeedStream(StreamSource):
    prefix: ClassVar[str] = "feed"
    service: ClassVar[str] = "The feed"
    api: ClassVar[str] = ""
    pause_s: ClassVar[float] = 0.0  # one request a fetch
    newest_first: ClassVar[bool] = False  # a feed is one answer, not a listing
    same_site: ClassVar[bool] = False  # publishers move feeds to a CDN (feeds.nature.com → www.nature.com)
    max_records: ClassVar[int] = 5_000

    def __init__(self, url: str) -> None:
        self.url = url
        self.api = url  # type: ignore[misc]  # `--from URL` replaces it, as for every stream
        parts = urlsplit(url)
        host = parts.hostname or "feed"
        slug = _SLUG.sub("-", f"{host}{parts.path}".lower()).strip("-")[:40].strip("-")
        self.name = f"feed-{slug}-{hashlib.sha256(url.encode()).hexdigest()[:8]}"
        self.label = f"the feed {host}{parts.path}"[:120]
        self.service = host  # type: ignore[misc]  # "www.nature.com gave no papers in …"

    @classmethod
    def from_name(cls, name: str) -> FeedStream:
        url = name.partition(":")[2].strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InputError(f"'{name}': a feed is feed:URL, e.g. feed:https://www.nature.com/nm.rss")
        return cls(url)

    def parse(self, body: bytes, where: str) -> StreamPage:
        return parse_feed(body, where)

    def provenance(self) -> dict[str, Any]:
        return {"url": self.url}

    def listing(self, lister: Lister, url: str, since: datetime) -> Iterator[StreamPage]:
        """The feed, asked once with the validators the last fetch of this URL kept (`lister.memory`, stored
        with the corpus); a 304 is a page with nothing in it, a 200 keeps the answer's new validators."""
        kept = lister.memory.get("validators") if lister.memory.get("url") == url else None
        kept = kept if isinstance(kept, dict) else {}
        headers = {name: str(kept[key]) for key, name in _ASKED if kept.get(key)}
        page = lister.get(url, headers=headers)
        if not page.not_modified:
            answer = lister.response_headers
            lister.memory.update(url=url, validators={key: answer[header] for key, header in _SENT
                                                      if answer.get(header)})
        yield page


_ASKED = (("etag", "If-None-Match"), ("last_modified", "If-Modified-Since"))  # kept → sent back as
_SENT = (("etag", "etag"), ("last_modified", "last-modified"))  # kept ← the answer's header
