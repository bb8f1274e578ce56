"""Zotero's item JSON (Web API, local API, JSON Lines exports) → LibraryItem."""

from __future__ import annotations

import re
from collections.abc import Mapping

from recommender.items import Creator, LibraryItem, Skipped
from recommender.text import clean_text

NON_REGULAR_TYPES = {"note", "attachment", "annotation"}
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d|21\d\d)\b")
_EXTRA_DOI = re.compile(r"^\s*DOI:\s*(\S+)", re.IGNORECASE | re.MULTILINE)
# Item types keep their title/date under type-specific names (case: caseName, dateDecided; …).
BASE_FIELD_ALIASES = {"title": ("caseName", "nameOfAct", "subject"),
                      "date": ("dateDecided", "dateEnacted", "issueDate")}


def year_of(date: str) -> int | None:
    """The first plausible year in a free-form or Zotero multipart date."""
    match = _YEAR.search(date or "")
    return int(match.group(1)) if match else None


def creator_from_json(data: Mapping) -> Creator:
    """{'firstName','lastName'} or {'name'} → Creator (names cleaned, order kept by caller)."""
    creator_type = str(data.get("creatorType") or "author")
    if data.get("name"):
        return Creator(last=clean_text(str(data["name"])), creator_type=creator_type)
    return Creator(
        last=clean_text(str(data.get("lastName") or "")),
        first=clean_text(str(data.get("firstName") or "")),
        creator_type=creator_type,
    )


def item_from_zotero_json(
    data: Mapping,
    *,
    where: str,
    collection_paths: Mapping[str, str] | None = None,
    library: str = "",
) -> LibraryItem | Skipped:
    """Convert one item's `data` object. Notes, attachments, annotations and trashed or empty
    items come back as Skipped with the reason, so the caller can report them."""
    if "data" in data and isinstance(data["data"], Mapping):
        data = data["data"]
    item_type = str(data.get("itemType") or "")
    key = str(data.get("key") or "")
    if not item_type:
        return Skipped(where, "no itemType")
    if item_type in NON_REGULAR_TYPES:
        return Skipped(where, f"{item_type}")
    if data.get("deleted"):
        return Skipped(where, "in the trash")
    data = with_base_fields(data)
    title = clean_text(str(data.get("title") or ""))
    abstract = clean_text(str(data.get("abstractNote") or ""))
    if not title and not abstract:
        return Skipped(where, "empty (no title, no abstract)")
    extra = str(data.get("extra") or "")
    doi = str(data.get("DOI") or "")
    if not doi and (match := _EXTRA_DOI.search(extra)):
        doi = match.group(1)
    paths = collection_paths or {}
    date = str(data.get("date") or "")
    version = data.get("version")
    return LibraryItem(
        key=key,
        title=title,
        item_type=item_type,
        abstract=abstract,
        creators=tuple(creator_from_json(c) for c in data.get("creators") or [] if isinstance(c, Mapping)),
        doi=doi.strip(),
        url=str(data.get("url") or "").strip(),
        date=date,
        year=year_of(date),
        date_added=str(data.get("dateAdded") or ""),
        tags=tuple(str(t.get("tag")) for t in data.get("tags") or [] if isinstance(t, Mapping) and t.get("tag")),
        collections=tuple(paths.get(c, c) for c in data.get("collections") or []),
        extra=extra,
        version=int(version) if isinstance(version, int) else None,
        library=library,
    )


def with_base_fields(data: Mapping) -> dict:
    """Fill `title`/`date` from a type-specific field when the base one is empty."""
    data = dict(data)
    for base, aliases in BASE_FIELD_ALIASES.items():
        if not data.get(base):
            data[base] = next((data[alias] for alias in aliases if data.get(alias)), data.get(base, ""))
    return data
