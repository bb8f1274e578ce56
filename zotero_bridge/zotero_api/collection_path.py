"""The one rule for collection names that zotrec writes into: `/` separates a path ("A/B" is B inside A).

A blank name, or a path with a blank part ("A//B", "  "), is refused. Among several live collections with
the same name under the same parent, the one zotrec wrote into before wins, then the oldest, so two runs
that raced to create it converge on one. `collection_paths` names every live collection by its path, as every
reader (Web API, local API) shows it.
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


def collection_paths(collections: Mapping[str, Mapping]) -> dict[str, str]:
    """key → 'Parent/Child' for every live collection (a parent in the trash or missing ends the path)."""
    paths: dict[str, str] = {}

    def path_of(key: str, seen: tuple[str, ...] = ()) -> str:
        if key in paths:
            return paths[key]
        data = collections[key]
        parent = data.get("parentCollection")
        name = str(data.get("name") or key)
        if parent and parent in collections and parent not in seen and not collections[parent].get("deleted"):
            name = f"{path_of(parent, (*seen, key))}/{name}"
        paths[key] = name
        return name

    for key, data in collections.items():
        if not data.get("deleted"):
            path_of(key)
    return {key: path for key, path in paths.items() if not collections[key].get("deleted")}
