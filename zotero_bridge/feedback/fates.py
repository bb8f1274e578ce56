"""What became of a recommendation zotrec created: the rules, in one place (the README repeats them).

Read from the item as Zotero shows it now (Web API, zotero.sqlite or the local API give the same item JSON);
nothing is ever written to read a fate. In this order, the first rule that holds decides:

1. **dismissed**: the item is in the trash, or was deleted for good — only when the API says so (asked for
   by key, it answers 404), never because one read did not hold it.
2. **kept**: the user saved it from zotrec's page or assistant (sync/save.py: remembered as `SAVED`), gave it
   a tag of their own (any tag but `zotrec`), filed it in another collection, added a child note, attachment
   or annotation (zotrec's own note carries the `zotrec` tag), or edited its title, abstract, creators, DOI or URL.
3. **dismissed**: it is no longer in the collection zotrec put it in, and zotrec did not take it out itself.
4. **untouched**: none of the above; after `STALE_AFTER_RUNS` runs untouched it steps aside for fresh papers.

An item the source cannot see (not yet synced to this computer, a page that came back short) keeps its last
known fate, and so does one zotrec itself moved to the trash when it left the collection untouched (in the trash,
or emptied from it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from zotero_bridge.feedback.memory import IN_COLLECTION, TRASHED, Remembered
from zotero_bridge.zotero_api.ours import ZOTREC_TAG, is_our_note

KEPT, DISMISSED, UNTOUCHED = "kept", "dismissed", "untouched"
ZOTREC_TRASHED = "zotrec moved it to the trash"
SAVED = "you saved it"  # an explicit Save (sync/save.py): kept until the user trashes or deletes it
STALE_AFTER_RUNS = 3
FINGERPRINT_FIELDS = ("title", "abstractNote", "DOI", "url")
CHILD_TYPES = ("note", "attachment", "annotation")


@dataclass
class LibraryView:
    """A library as one source sees it now.

    `items`: top-level item JSON by key (trashed ones with `deleted`); `children`: parent key → the user's
    and zotrec's child items (annotations lifted to the top-level item); `collections`: key → path of live
    collections; `deleted`: keys the source reports deleted for good (its evidence; a key merely missing
    from `items` is not deleted).
    """

    items: Mapping[str, Mapping] = field(default_factory=dict)
    children: Mapping[str, Sequence[Mapping]] = field(default_factory=dict)
    collections: Mapping[str, str] = field(default_factory=dict)
    deleted: frozenset[str] = frozenset()


def fingerprint(data: Mapping) -> str:
    """A digest of the fields a user edits when they adopt a paper (what zotrec wrote, compared later)."""
    creators = [" ".join(str(c.get(k) or "") for k in ("firstName", "lastName", "name")).strip()
                for c in data.get("creators") or [] if isinstance(c, Mapping)]
    values = [" ".join(str(data.get(name) or "").split()) for name in FINGERPRINT_FIELDS] + creators
    return hashlib.sha256(json.dumps(values, ensure_ascii=False).encode()).hexdigest()[:16]


def user_tags(data: Mapping) -> list[str]:
    return [str(t.get("tag")) for t in data.get("tags") or []
            if isinstance(t, Mapping) and t.get("tag") and t.get("tag") != ZOTREC_TAG]


def user_children(children: Sequence[Mapping]) -> list[Mapping]:
    """Children the user made: not zotrec's note (ours.py), not in the trash."""
    return [c for c in children if not c.get("deleted") and not is_our_note(c)]


def fate_of(paper: Remembered, view: LibraryView, collection_name: str = "") -> Remembered:
    """`paper` with its fate as `view` shows it now (status, fate, why, untouched runs, child seen)."""
    data = view.items.get(paper.item_key)
    if paper.status == TRASHED and data is None:
        return paper  # the user emptied the trash zotrec put it in: no judgement of the paper
    if paper.status == TRASHED and data.get("deleted"):  # zotrec's own doing, unless the user kept it there
        children = user_children(view.children.get(paper.item_key, ()))
        kept = _kept_because(paper, data, view, children, paper.child_seen or bool(children))
        return replace(paper, fate=KEPT, why=kept, untouched_runs=0) if kept else replace(paper, why=ZOTREC_TRASHED)
    if data is None:
        if paper.item_key in view.deleted:
            return replace(paper, fate=DISMISSED, why="you deleted it")
        return paper
    if data.get("deleted"):
        return replace(paper, fate=DISMISSED, why="you moved it to the trash")
    children = user_children(view.children.get(paper.item_key, ()))
    child_seen = paper.child_seen or bool(children)
    if kept := _kept_because(paper, data, view, children, child_seen):
        return replace(paper, fate=KEPT, why=kept, child_seen=child_seen, untouched_runs=0)
    if paper.status == IN_COLLECTION and paper.collection_key not in (data.get("collections") or []):
        where = f"'{collection_name}'" if collection_name else "zotrec's collection"
        return replace(paper, fate=DISMISSED, why=f"you removed it from {where}")
    return replace(paper, fate=UNTOUCHED, why="", child_seen=child_seen)


def _kept_because(paper: Remembered, data: Mapping, view: LibraryView, children: list[Mapping],
                  child_seen: bool) -> str:
    if paper.fate == KEPT and paper.why == SAVED:
        return SAVED
    if tags := user_tags(data):
        return "you tagged it " + ", ".join(f"'{t}'" for t in tags[:3])
    elsewhere = [view.collections.get(key, key) for key in data.get("collections") or []
                 if key != paper.collection_key and key in view.collections]
    if elsewhere:
        return "you filed it in " + ", ".join(f"'{path}'" for path in elsewhere[:3])
    if children:
        kinds = sorted({str(c.get("itemType") or "note") for c in children})
        return "you added " + " and ".join(f"a{'n' if k[0] in 'aeiou' else ''} {k}" for k in kinds)
    if child_seen:
        return "you added a note or attachment"
    if paper.fingerprint and fingerprint(data) != paper.fingerprint:
        return "you edited it"
    return ""


def lift_children(rows: Sequence[Mapping]) -> dict[str, list[Mapping]]:
    """parent key → children, from child item JSON; an annotation counts for its attachment's parent."""
    by_key = {str(r.get("key")): r for r in rows}
    children: dict[str, list[Mapping]] = {}
    for row in rows:
        parent = row.get("parentItem")
        if not parent or row.get("itemType") not in CHILD_TYPES:
            continue
        holder = by_key.get(str(parent))
        if row.get("itemType") == "annotation" and holder is not None and holder.get("parentItem"):
            parent = holder["parentItem"]
        children.setdefault(str(parent), []).append(row)
    return children
