"""Feedback for `zotrec reading-list` (and `score`) from Zotero (zotero.sqlite, the local API or the Web API's
sync cache): the fates of the papers `sync` wrote, read-only, with the memory when this computer has it, or
from zotrec's tags and Extra lines alone when it does not. Nothing is written: reading a list never changes
the memory."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence

from recommender.items import LibraryItem, Paper
from recommender.scoring.feedback import Feedback
from zotero_bridge.feedback.identity import LEGACY_LOCAL, desktop_history, legacy_history
from zotero_bridge.feedback.learn import feedback_for, read_fates, summary
from zotero_bridge.feedback.memory import IN_COLLECTION, RETIRED, Memory, Remembered
from zotero_bridge.feedback.ratings import files_identity, ratings_if_any, read_ratings
from zotero_bridge.feedback.sqlite_view import SqliteLibrary, read_sqlite_view
from zotero_bridge.zotero_api.ours import is_ours_item

log = logging.getLogger(__name__)


def _argument(specs: Sequence[str], kind: str) -> str | None:
    """The argument of the first `--library` spec of this kind (sources/dispatch.py's one parser), or None."""
    from zotero_bridge.sources.dispatch import parse_library_spec

    return next((parsed.argument for parsed in map(parse_library_spec, specs) if parsed.kind == kind), None)


def read_web_view(argument: str, options) -> SqliteLibrary:
    """The Web API library as the sync cache holds it (the read just brought it up to date; no request)."""
    from zotero_bridge.feedback.fates import LibraryView
    from zotero_bridge.sources.web import open_session
    from zotero_bridge.zotero_api.collection_path import collection_paths

    session, cache = open_session(options, argument)
    try:
        items, collections = cache.items(), cache.collections()
    finally:
        session.close()
        cache.close()
    credentials = session.credentials
    view = LibraryView(items=items, collections=collection_paths(collections))  # deletions: sync asks for them
    return SqliteLibrary(f"{credentials.library_type}:{credentials.library_id}", credentials.describe(), view)


def sqlite_feedback(specs: Sequence[str], group: str | None, corpus: Sequence[Paper], options=None
                    ) -> tuple[Feedback, frozenset[str], str] | None:
    """What the user did with zotrec's papers, from the first zotero.sqlite, zotero:local or (given the
    source `options`) zotero:web among `specs` (None: none), with the page's ratings (ratings.py), in a group
    library the keys of items only other members saved (the group signal), and the library's memory name."""
    from zotero_bridge.sources.sqlite_paths import resolve_database_path

    argument, endpoint, web = (_argument(specs, kind) for kind in ("zotero:sqlite", "zotero:local", "zotero:web"))
    if argument is not None:
        library = read_sqlite_view(resolve_database_path(argument), group)
    elif endpoint is not None:
        from zotero_bridge.feedback.local_view import read_local_view

        library = read_local_view(endpoint, group)
    elif web is not None and options is not None:
        library = read_web_view(web, options)
    else:
        return None
    with Memory(read_only=True) as memory:  # reading needs no write access
        name = library.name
        if name == LEGACY_LOCAL and argument is not None:  # a desktop database with no account: its history
            name = desktop_history(memory.db, library.view.items) or name  # is kept by its server id
        remembered = memory.papers(name)
        if not remembered and (old := legacy_history(memory.db, name, library.view.collections, library.view.items)):
            remembered = memory.papers(old)  # kept as 'user:0' before; the next sync moves it (nothing written here)
        rated = read_ratings(memory, name)
        identity = name
    if not remembered:
        remembered = _from_tags(library)
    fates = read_fates(remembered, library.view)
    counts, name = group_counts(library, corpus)
    if fates:
        log.info("What you did with zotrec's papers in %s: %s.", library.label,
                 ", ".join(f"{count} {fate}" for fate, count in summary(fates).items()))
    return feedback_for(fates, counts, name, rated), library.saved_by_others(), identity


def _from_tags(library: SqliteLibrary) -> dict[str, Remembered]:
    """Without a memory on this computer: zotrec's tagged items, their corpus id from Extra, the collection
    most of them are in; taking an item out of it cannot be told from zotrec doing it, so only the trash
    and the signs of keeping count."""
    from zotero_bridge.zotero_api.ours import corpus_id_of, is_ours

    items = {key: data for key, data in library.view.items.items() if is_ours(data)}
    held = Counter(key for data in items.values() for key in data.get("collections") or [])
    collection = held.most_common(1)[0][0] if held else ""
    found = {}
    for key, data in items.items():
        corpus_id = corpus_id_of(data)
        status = IN_COLLECTION if collection in (data.get("collections") or []) else RETIRED
        found[corpus_id] = Remembered(corpus_id, str(data.get("title") or key), key, collection, "", status)
    return found


def group_counts(library: SqliteLibrary, corpus: Sequence[Paper]) -> tuple[Mapping[str, int], str]:
    """corpus id → how many group members saved the paper (the same rule as the Web API's group signal and
    `zotrec score --group-summary`: `scoring.feedback.member_counts`)."""
    from recommender.scoring.feedback import CorpusMatcher, member_counts

    if not library.members:
        return {}, ""
    saves = [(user, str(data.get("DOI") or ""), str(data.get("title") or ""))
             for key, users in library.members.items() for data in [library.all_items.get(key, {})] for user in users]
    return member_counts(saves, CorpusMatcher(corpus)), library.label


def library_input(specs: Sequence[str], items: Sequence[LibraryItem], corpus: Sequence[Paper] = (),
                  group: str | None = None, options=None):
    """The library as the one ranking takes it (recommender/pipeline): with what the user did with zotrec's
    papers when a Zotero source among `specs` shows it (zotero.sqlite, zotero:local, zotero:web with its
    `options`): zotrec's own items count only once kept, dismissed papers never come back, and in a group
    library papers other members saved are candidates with their count. reading-list, score and (through
    its own views) sync all rank what this gives."""
    return named_library_input(specs, items, corpus, group, options)[0]


def named_library_input(specs: Sequence[str], items: Sequence[LibraryItem], corpus: Sequence[Paper] = (),
                        group: str | None = None, options=None):
    """(library_input's Library, the memory's name for it: where `zotrec serve` keeps its ratings). A library
    read from export files only is named by its files (ratings.files_identity) and has the ratings alone."""
    from recommender.pipeline import Library

    learned = sqlite_feedback(specs, group, corpus, options)
    if learned is None:
        identity = files_identity(specs)
        rated = ratings_if_any(identity)
        return Library(items=list(items), feedback=feedback_for({}, ratings=rated) if rated else None), identity
    feedback, others, identity = learned
    mine = [item for item in items if not is_ours_item(item) or item.key in feedback.kept_items]
    return Library(items=mine, feedback=feedback, shared=frozenset(others)), identity
