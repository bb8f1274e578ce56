"""The one rule for collection names that zotrec writes into: `/` separates a path ("A/B" is B inside A).

A `/` inside one collection's name is written `\\/` in a path ("Thesis\\/Ch2" is the collection named
"Thesis/Ch2"), so a path names one collection; a plain name that fits both readings (a collection named
"Thesis/Ch2" and Ch2 inside Thesis) is an error listing both. A blank name, or a path with a blank part
("A//B", "  "), is refused. Among several live collections with
the same name under the same parent, the one zotrec wrote into before wins, then the oldest, so two runs
that raced to create it converge on one. `collection_paths` names every live collection by its path, as every
reader (Web API, local API) shows it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from zotero_bridge.errors import BridgeError

_SEPARATOR = re.compile(r"(?<!\\)/")


def split_path(path: str) -> list[str]:
    """'A/B\\/C' → ['A', 'B/C']: an unescaped '/' separates, '\\/' is a slash inside a name."""
    return [part.replace("\\/", "/") for part in _SEPARATOR.split(str(path or ""))]


def join_path(names: Iterable[str]) -> str:
    """['A', 'B/C'] → 'A/B\\/C', the path every reader shows (the inverse of split_path)."""
    return "/".join(str(name).replace("/", "\\/") for name in names)


def shown_path(path: str) -> str:
    """A path as a person reads it in a message: 'Thesis › Ch2', or "'Thesis/Ch2'" for one collection."""
    return " › ".join(f"'{name}'" if "/" in name else name for name in split_path(path))


def parse_collection_path(name: str) -> list[str]:
    """'A/B' → ['A', 'B'] ('A\\/B' → ['A/B']); blank names and blank parts are a one-line error."""
    parts = [part.strip() for part in split_path(str(name or ""))]
    if not any(parts):
        raise BridgeError("the collection name is blank: give --collection-name a name such as "
                          "'Recommended · ICML 2025' (use '/' for a sub-collection: 'Reading/ICML 2025')")
    if not all(parts):
        raise BridgeError(f"the collection name '{name}' has a blank part: '/' separates collections "
                          "('Reading/ICML 2025'), so it cannot start, end or repeat")
    return parts


def find_collection(collections: Mapping[str, Mapping], name: str, known: Sequence[str] = ()) -> str | None:
    """The key of the live collection at path `name`, or None when some part of it does not exist yet;
    a plain 'A/B' that also fits a collection named 'A/B' is an error listing both."""
    parts = parse_collection_path(name)
    found, _ = resolve_collection_path(collections, parts, known)
    exact = found[-1] if len(found) == len(parts) else None
    if len(parts) < 2 or "\\/" in str(name):
        return exact
    loose = "/".join(parts)
    paths = collection_paths(collections)
    others = sorted((key for key, path in paths.items()
                     if "/".join(split_path(path)) == loose and split_path(path) != parts),
                    key=lambda key: (key not in known, int(collections[key].get("version") or 0), key))
    if exact and others:
        raise ambiguous_path(name, [join_path(parts), paths[others[0]]])
    return exact or (others[0] if others else None)


def ambiguous_path(name: str, paths: Sequence[str]) -> BridgeError:
    """The one-line error for a name that fits several collections, and how to pick one."""
    escaped = next((path for path in paths if "\\/" in path), "")
    how = (f"write '{escaped}' for the one whose name holds a '/', or rename one in Zotero" if escaped
           else "rename one in Zotero")
    return BridgeError(f"the collection name '{name}' fits {len(paths)} collections: "
                       f"{', '.join(shown_path(path) for path in paths)}; {how}")


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
    """key → 'Parent/Child' for every live collection (a parent in the trash or missing ends the path);
    a '/' in a name is escaped (join_path)."""
    paths: dict[str, str] = {}

    def path_of(key: str, seen: tuple[str, ...] = ()) -> str:
        if key in paths:
            return paths[key]
        data = collections[key]
        parent = data.get("parentCollection")
        name = join_path([str(data.get("name") or key)])
        if parent and parent in collections and parent not in seen and not collections[parent].get("deleted"):
            name = f"{path_of(parent, (*seen, key))}/{name}"
        paths[key] = name
        return name

    for key, data in collections.items():
        if not data.get("deleted"):
            path_of(key)
    return {key: path for key, path in paths.items() if not collections[key].get("deleted")}
