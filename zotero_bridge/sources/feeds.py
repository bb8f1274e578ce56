"""`--corpus zotero:feeds[:NAME]`: the unread items of the feeds the user follows in Zotero, as corpus papers.

Zotero keeps each feed as a library of type 'feed' whose items carry a feedItems row (the entry's guid and
the time it was marked read); sqlite.py reads them. Here they become `Paper`s with ids `zotero-feed:GUID`,
which the seen-once memory treats as a daily stream (zotero_bridge/feedback/seen.py), so each is shown once.
Read items are left out; items the library already holds are left out by the caller, by the ranking's rule.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from recommender.items import Paper
from recommender.text import clean_text
from zotero_bridge.errors import SourceError
from zotero_bridge.sources.dispatch import parse_library_spec
from zotero_bridge.sources.zotero_json import FieldShapeError, creator_from_json, doi_of, text_of, year_of

if TYPE_CHECKING:  # the database reader is imported where feeds are read: every list checks is_feeds_spec
    from zotero_bridge.sources.sqlite import DatabaseFeed, FeedsRead

FEEDS_SCHEME = "zotero:feeds"
FEED_ID_PREFIX = "zotero-feed:"
MAX_GUID_CHARS = 200  # a longer guid (a whole URL with its query) is kept as its digest


def is_feeds_spec(spec: str) -> bool:
    """`zotero:feeds` or `zotero:feeds:NAME`."""
    return spec == FEEDS_SCHEME or spec.startswith(FEEDS_SCHEME + ":")


def feed_name(spec: str) -> str:
    """The NAME of `zotero:feeds:NAME` ('' for every feed)."""
    return spec[len(FEEDS_SCHEME) + 1:].strip() if spec.startswith(FEEDS_SCHEME + ":") else ""


def feeds_label(spec: str) -> str:
    """'Zotero feeds', or 'Zotero feed NAME' for one feed (a collection's name, a list's title)."""
    name = feed_name(spec)
    return f"Zotero feed {name}" if name else "Zotero feeds"


def feeds_database(libraries: Sequence[str]) -> str:
    """The zotero.sqlite whose feeds to read: the one `--library` names ('' = the default profile's)."""
    for spec in libraries:
        parsed = parse_library_spec(spec)
        if parsed.kind == "zotero:sqlite":
            return parsed.argument
    return ""


@dataclass
class FeedPapers:
    """The unread feed items as papers, and what was left out on the way."""

    papers: list[Paper] = field(default_factory=list)
    feeds: list[str] = field(default_factory=list)
    read: int = 0  # items already marked read in Zotero
    skipped: int = 0  # items with neither title nor abstract, or fields of the wrong shape


def feed_papers(found: FeedsRead, name: str = "") -> FeedPapers:
    """The unread items of every feed (or of the feed called `name`, by name or URL), each guid once."""
    feeds = _chosen(found, name)
    result = FeedPapers(feeds=[feed.name for feed in feeds])
    seen: set[str] = set()
    for feed in feeds:
        for data in feed.items:
            if data.get("readTime"):
                result.read += 1
                continue
            paper = _paper(data, feed)
            if paper is None:
                result.skipped += 1
            elif paper.id not in seen:
                seen.add(paper.id)
                result.papers.append(paper)
    return result


def _chosen(found: FeedsRead, name: str) -> list[DatabaseFeed]:
    if not found.feeds:
        raise SourceError(f"{found.path}: this Zotero database follows no feeds (add one in Zotero: "
                          "File → New Feed), so zotero:feeds has nothing to rank")
    if not name:
        return found.feeds
    wanted = name.casefold()
    chosen = [feed for feed in found.feeds if wanted in (feed.name.casefold(), feed.url.casefold())]
    if not chosen:
        listing = "; ".join(feed.name for feed in found.feeds)
        raise SourceError(f"{found.path}: no feed named '{name}' (feeds here: {listing})")
    return chosen


def feed_paper_id(guid: str, fallback: str) -> str:
    """`zotero-feed:` and the entry's guid (its digest when very long); the item key when it has none."""
    guid = " ".join(guid.split()) or fallback
    if len(guid) > MAX_GUID_CHARS:
        guid = "sha1-" + hashlib.sha1(guid.encode("utf-8")).hexdigest()
    return FEED_ID_PREFIX + guid


def _paper(data: dict, feed: DatabaseFeed) -> Paper | None:
    from zotero_bridge.sources.sqlite import split_multipart_date

    try:
        title, abstract = clean_text(text_of(data, "title")), clean_text(text_of(data, "abstractNote"))
        if not title and not abstract:
            return None
        doi = doi_of(data)
        date, year = split_multipart_date(text_of(data, "date"))
        authors = []
        for creator in data.get("creators") or []:
            person = creator_from_json(creator)
            authors.append(" ".join(part for part in (person.first, person.last) if part))
    except FieldShapeError:
        return None
    return Paper(
        id=feed_paper_id(text_of(data, "guid"), text_of(data, "key")),
        title=title or abstract[:120],
        abstract=abstract or None,
        authors=tuple(author for author in authors if author),
        url=text_of(data, "url").strip(),
        doi=doi,
        year=year or year_of(date),
        venue=clean_text(text_of(data, "publicationTitle")) or feed.name,
        title_derived=not title,
        metadata={"feed": feed.name, "published": date, "added": text_of(data, "dateAdded")},
    )
