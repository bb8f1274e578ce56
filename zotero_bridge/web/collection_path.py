"""The one rule for collection names that zotrec writes into: `/` separates a path ("A/B" is B inside A).

A blank name, or a path with a blank part ("A//B", "  "), is refused. Among several live collections with
the same name under the same parent, the one zotrec wrote into before wins, then the oldest, so two runs
that raced to create it converge on one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zotero_bridge.errors import BridgeError


def parse_collection_path(name: str) -> list[str]:
    """'A/B' → ['A', 'B']; blank names and blank parts are a one-line error."""
    parts = [part.strip() for part in str(name or "").split("/")]
    if not any(parts):
        raise BridgeError("the collection name is blank: give --collection-name a name such as "
                          "'Recommended · ICML 2025' (use '/' for a sub-collection: 'Reading/ICML 2025')")
    if not all(parts):
        raise BridgeError(f"the collection name '{name}' has a blank part: '/' separates collections "
                          "('Reading/ICML 2025'), so it cannot start, end or repeat")
    return parts


def find_collection(collections: Mapping[str, Mapping], name: str, known: Sequence[str] = ()) -> str | None:
    """The key of the live collection at path `name`, or None when some part of it does not exist yet."""
    found, _ = resolve_collection_path(collections, parse_collection_path(name), known)
    return found[-1] if len(found) == len(parse_collection_path(name)) else None


def resolve_collection_path(collections: Mapping[str, Mapping], parts: Sequence[str],
                            known: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """(keys of the parts that exist, from the top; the names still to create below the last of them)."""
    found: list[str] = []
    parent: str | bool = False
    for depth, part in enumerate(parts):
        matches = [data for data in collections.values() if data.get("name") == part and not data.get("deleted")
                   and (data.get("parentCollection") or False) == parent]
        if not matches:
            return found, list(parts[depth:])
        matches.sort(key=lambda data: (data["key"] not in known, int(data.get("version") or 0), data["key"]))
        parent = matches[0]["key"]
        found.append(parent)
    return found, []
