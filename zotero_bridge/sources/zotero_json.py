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
                      "date": ("dateDecided", "dateEnacted", "issueDate"),
                      "publicationTitle": ("proceedingsTitle", "bookTitle", "websiteTitle", "repository")}


class FieldShapeError(ValueError):
    """A field of valid JSON has the wrong type: the entry is skipped with this reason, never misread."""


def text_of(data: Mapping, name: str) -> str:
    """A text field: text or a number; missing/null is ''; an object, a list or true/false is an error
    (a title must never become the printed form of an object)."""
    value = data.get(name)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise FieldShapeError(f"'{name}' is {_kind(value)}, expected text")


def list_of(data: Mapping, name: str, kinds: tuple[type, ...] = (str,)) -> list:
    """A list field whose members are all `kinds`; missing/null is []; a lone text is split on , or ;."""
    value = data.get(name)
    if value is None or value == "":
        return []
    if isinstance(value, str) and str in kinds:
        return [part.strip() for part in re.split(r"[,;]", value) if part.strip()]
    if isinstance(value, list) and all(isinstance(v, kinds) and not isinstance(v, bool) for v in value):
        return value
    raise FieldShapeError(f"'{name}' is {_kind(value)}, expected a list of "
                          + " or ".join("text" if k is str else "objects" if k is dict else k.__name__
                                        for k in kinds))


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", bool: "true/false", str: "text"}.get(type(value), type(value).__name__)


def year_of(date: str) -> int | None:
    """The first plausible year in a free-form or Zotero multipart date."""
    match = _YEAR.search(date or "")
    return int(match.group(1)) if match else None


def doi_of(data: Mapping) -> str:
    """The DOI field, else a 'DOI: …' line of Extra (where Zotero keeps it for types without the field)."""
    doi = text_of(data, "DOI")
    if not doi and (match := _EXTRA_DOI.search(text_of(data, "extra"))):
        doi = match.group(1)
    return doi.strip()


def creator_from_json(data: Mapping) -> Creator:
    """{'firstName','lastName'} or {'name'} → Creator (names cleaned, order kept by caller)."""
    creator_type = text_of(data, "creatorType") or "author"
    if data.get("name"):
        return Creator(last=clean_text(text_of(data, "name")), creator_type=creator_type)
    return Creator(
        last=clean_text(text_of(data, "lastName")),
        first=clean_text(text_of(data, "firstName")),
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
    items, and fields of the wrong type, come back as Skipped with the reason, so the caller can report them."""
    try:
        return _item(data, where, collection_paths, library)
    except FieldShapeError as error:
        return Skipped(where, str(error), True)


def _item(data: Mapping, where: str, collection_paths: Mapping[str, str] | None, library: str
          ) -> LibraryItem | Skipped:
    if "data" in data and isinstance(data["data"], Mapping):
        data = data["data"]
    item_type = text_of(data, "itemType")
    key = text_of(data, "key")
    if not item_type:
        return Skipped(where, "no itemType")
    if item_type in NON_REGULAR_TYPES:
        return Skipped(where, f"{item_type}")
    if data.get("deleted"):
        return Skipped(where, "in the trash")
    data = with_base_fields(data)
    title = clean_text(text_of(data, "title"))
    abstract = clean_text(text_of(data, "abstractNote"))
    if not title and not abstract:
        return Skipped(where, "empty (no title, no abstract)")
    extra = text_of(data, "extra")
    doi = doi_of(data)
    paths = collection_paths or {}
    date = text_of(data, "date")
    version = data.get("version")
    return LibraryItem(
        key=key,
        title=title,
        item_type=item_type,
        abstract=abstract,
        creators=tuple(creator_from_json(c) for c in list_of(data, "creators", (dict,))),
        doi=doi.strip(),
        url=text_of(data, "url").strip(),
        date=date,
        year=year_of(date),
        date_added=text_of(data, "dateAdded"),
        tags=tuple(text_of(t, "tag") for t in list_of(data, "tags", (dict,)) if t.get("tag")),
        collections=tuple(paths.get(c, c) for c in list_of(data, "collections")),
        extra=extra,
        version=version if isinstance(version, int) and not isinstance(version, bool) else None,
        library=library,
        publication=clean_text(text_of(data, "publicationTitle")),
        issn=text_of(data, "ISSN").strip(),
    )


def with_base_fields(data: Mapping) -> dict:
    """Fill `title`/`date` from a type-specific field when the base one is empty."""
    data = dict(data)
    for base, aliases in BASE_FIELD_ALIASES.items():
        if not data.get(base):
            data[base] = next((data[alias] for alias in aliases if data.get(alias)), data.get(base, ""))
    return data
