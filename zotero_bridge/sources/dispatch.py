"""One way to name a library everywhere: `--library SOURCE`.

SOURCE is a file (.bib, .ris, .json CSL-JSON, .jsonl), a zotero.sqlite path, or a scheme:
`zotero:web` (Web API), `zotero:local` (the desktop's local API), `zotero:sqlite` (the
desktop database in its default place). Readers for schemes are imported only when used.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from recommender.corpus.readers import MAX_ABSTRACT_CHARS
from recommender.items import Skipped
from recommender.text import title_key
from recommender.words import plural
from zotero_bridge.errors import SourceError
from zotero_bridge.sources.base import LibraryRead, SourceOptions
from zotero_bridge.sources.files import read_library_file

log = logging.getLogger(__name__)

# scheme → "module:function"; each function takes (argument, SourceOptions) → LibraryRead
SCHEMES = {
    "zotero:web": "zotero_bridge.sources.web:read_web_library",
    "zotero:local": "zotero_bridge.sources.local:read_local_library",
    "zotero:sqlite": "zotero_bridge.sources.sqlite:read_sqlite_library",
}
SQLITE_SUFFIXES = {".sqlite", ".db"}


def read_library(specs: Sequence[str], options: SourceOptions | None = None) -> LibraryRead:
    """Read and merge every source; an item seen twice (same key and title) is reported once."""
    options = options or SourceOptions()
    merged = LibraryRead()
    titles_by_key: dict[str, list[str]] = {}  # title keys are computed only when a key repeats
    shared_keys: list[str] = []
    capped: list[str] = []
    for spec in specs:
        read = _read_one(spec, options)
        merged.sources.append(spec)
        merged.skipped.extend(read.skipped)
        for name, value in read.stats.items():
            merged.stats[name] = merged.stats.get(name, 0) + value if isinstance(value, int) else value
        for item in read.items:
            earlier = titles_by_key.get(item.key)
            if earlier is None:
                titles_by_key[item.key] = [item.title]
            else:
                known = {title_key(title) for title in earlier}
                if title_key(item.title) in known:
                    merged.skipped.append(Skipped(f"{spec}: {item.key}", "duplicate item (same key and title)"))
                    continue
                shared_keys.append(f"{spec}: '{item.key}'")
                earlier.append(item.title)
            if len(item.abstract) > MAX_ABSTRACT_CHARS:  # a pasted full text: cut so scoring stays fast
                capped.append(f"{spec}: '{item.key}'")
                item = replace(item, abstract=item.abstract[:MAX_ABSTRACT_CHARS])
            merged.items.append(item)
    if shared_keys:  # one line however many (a library without keys would otherwise print one per item)
        log.warning("%s a key with an earlier item (all are kept); first: %s",
                    plural(len(shared_keys), "item") + (" shares" if len(shared_keys) == 1 else " share"),
                    shared_keys[0])
    if capped:
        log.warning("%s an abstract over %d characters (cut); first: %s",
                    plural(len(capped), "item") + (" has" if len(capped) == 1 else " have"), MAX_ABSTRACT_CHARS,
                    capped[0])
    return merged


def _read_one(spec: str, options: SourceOptions) -> LibraryRead:
    parsed = parse_library_spec(spec)
    if parsed.kind != FILE:
        return _scheme_reader(parsed.kind)(parsed.argument, options)
    items, skipped = read_library_file(Path(parsed.argument).expanduser())
    return LibraryRead(items=items, skipped=skipped, sources=[spec])


FILE = "file"


@dataclass(frozen=True)
class LibrarySpec:
    """A `--library` SOURCE, parsed: `kind` is FILE (an export file) or a scheme of SCHEMES; `argument` the
    file, the zotero.sqlite path, the local API's URL or the Web API's library ('' for the default)."""

    kind: str
    argument: str


def parse_library_spec(spec: str) -> LibrarySpec:
    """The one reading of a `--library` SOURCE, for reading it, for its feedback and for sync's target:
    'zotero:sqlite:/x/zotero.sqlite' → (zotero:sqlite, /x/zotero.sqlite); a .sqlite/.db path, or the Zotero
    data folder holding zotero.sqlite, is zotero:sqlite too; any other path is an export FILE."""
    if spec.startswith("zotero:"):
        for scheme in SCHEMES:
            if spec == scheme or spec.startswith(scheme + ":"):
                return LibrarySpec(scheme, spec[len(scheme) + 1 :])
        raise SourceError(f"unknown library source '{spec}' (use a file path, {', '.join(SCHEMES)})")
    path = Path(spec).expanduser()
    if path.is_dir() and (path / "zotero.sqlite").is_file():  # the Zotero data folder itself
        return LibrarySpec("zotero:sqlite", str(path / "zotero.sqlite"))
    if path.suffix.lower() in SQLITE_SUFFIXES:
        return LibrarySpec("zotero:sqlite", str(path))
    return LibrarySpec(FILE, spec)


def _scheme_reader(scheme: str):
    module_name, _, function = SCHEMES[scheme].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name:
            raise SourceError(f"the source '{scheme}' is not available in this version of zotrec") from None
        raise
    return getattr(module, function)
