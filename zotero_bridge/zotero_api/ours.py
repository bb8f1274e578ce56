"""What makes an item zotrec's: the one rule the planner, the writer, the fates and every reader use.

A paper zotrec created carries the `zotrec` tag and an Extra line `zotrec: <corpus id> …` (writeback.py writes
both); zotrec's child note carries the tag. An item with only one of the two is the user's — a paper they
tagged 'zotrec' themselves, or one with a pasted Extra line — so zotrec never takes it out, trashes or
rewrites it, and it counts as a library item like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from recommender.items import LibraryItem

ZOTREC_TAG = "zotrec"
_EXTRA_LINE = re.compile(r"^zotrec:\s*(\S+)", re.MULTILINE)


def has_zotrec_tag(tags: Iterable) -> bool:
    """`tags` as item JSON gives them ([{"tag": …}]) or as plain names."""
    return any((t.get("tag") if isinstance(t, Mapping) else t) == ZOTREC_TAG for t in tags or ())


def corpus_id_of(data: Mapping) -> str:
    """The corpus id in zotrec's Extra line ('' when there is none)."""
    match = _EXTRA_LINE.search(str(data.get("extra") or ""))
    return match.group(1) if match else ""


def is_ours(data: Mapping) -> bool:
    """A top-level item (Zotero item JSON) zotrec created: the tag and the Extra line."""
    return has_zotrec_tag(data.get("tags") or ()) and bool(corpus_id_of(data))


def is_our_note(child: Mapping) -> bool:
    """Of a paper's child items (notes, attachments, annotations): the one zotrec wrote, its note of reasons."""
    return has_zotrec_tag(child.get("tags") or ())


def is_ours_item(item: LibraryItem) -> bool:
    """The same rule for a LibraryItem, as any library reader gives it."""
    return is_ours({"tags": list(item.tags), "extra": item.extra})
