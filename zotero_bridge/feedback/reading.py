"""Feedback for `zotrec reading-list` (and `score`) from Zotero (zotero.sqlite, the local API or the Web API's
sync cache): the fates of the papers `sync` wrote, read-only, with the memory when this computer has it, or
from zotrec's tags and Extra lines alone when it does not. Nothing is written: reading a list never changes
the memory."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from recommender.items import LibraryItem, Paper
from recommender.scoring.feedback import Feedback
from zotero_bridge.feedback.fates import ZOTREC_TAG
from zotero_bridge.feedback.learn import feedback_for, read_fates, summary
from zotero_bridge.feedback.memory import IN_COLLECTION, RETIRED, Memory, Remembered
from zotero_bridge.feedback.sqlite_view import SqliteLibrary, read_sqlite_view

log = logging.getLogger(__name__)


def sqlite_argument(spec: str) -> str | None:
    """The zotero.sqlite argument of a --library spec, or None when the spec is another kind of source."""
    if spec == "zotero:sqlite" or spec.startswith("zotero:sqlite:"):
        return spec[len("zotero:sqlite:"):] if spec != "zotero:sqlite" else ""
    if not spec.startswith("zotero:") and Path(spec).suffix.lower() in (".sqlite", ".db"):
        return spec
    return None


def local_argument(spec: str) -> str | None:
    """The endpoint of a zotero:local spec ('' for the default), or None for another kind of source."""
    if spec == "zotero:local" or spec.startswith("zotero:local:"):
        return spec[len("zotero:local:"):] if spec != "zotero:local" else ""
    return None


def web_argument(spec: str) -> str | None:
    """The argument of a zotero:web spec ('' for the configured library), or None for another kind of source."""
    if spec == "zotero:web" or spec.startswith("zotero:web:"):
        return spec[len("zotero:web:"):] if spec != "zotero:web" else ""
    return None


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
    view = LibraryView(items=items, collections=collection_paths(collections), complete=bool(items))
    return SqliteLibrary(f"{credentials.library_type}:{credentials.library_id}", credentials.describe(), view)


def is_zotrec_item(item: LibraryItem) -> bool:
    """An item zotrec created (its tag and its Extra line), as any library reader shows it."""
    return ZOTREC_TAG in item.tags and "zotrec:" in item.extra


def sqlite_feedback(specs: Sequence[str], group: str | None, corpus: Sequence[Paper], options=None
                    ) -> tuple[Feedback, frozenset[str]] | None:
    """What the user did with zotrec's papers, from the first zotero.sqlite, zotero:local or (given the
    source `options`) zotero:web among `specs` (None: none), and in a group library the keys of items only
    other members saved (the group signal)."""
    from zotero_bridge.sources.sqlite_paths import resolve_database_path

    argument = next((a for a in map(sqlite_argument, specs) if a is not None), None)
    endpoint = next((a for a in map(local_argument, specs) if a is not None), None)
    web = next((a for a in map(web_argument, specs) if a is not None), None)
    if argument is not None:
        library = read_sqlite_view(resolve_database_path(argument), group)
    elif endpoint is not None:
        from zotero_bridge.feedback.local_view import read_local_view

        library = read_local_view(endpoint, group)
    elif web is not None and options is not None:
        library = read_web_view(web, options)
    else:
        return None
    with Memory() as memory:
        remembered = memory.papers(library.name)
    if remembered:
        missing = {p.item_key for p in remembered.values()} - set(library.view.items)
        if missing and argument is not None:
            library = read_sqlite_view(resolve_database_path(argument), group, missing)
    else:
        remembered = _from_tags(library)
    fates = read_fates(remembered, library.view)
    counts, name = group_counts(library, corpus)
    if fates:
        log.info("What you did with zotrec's papers in %s: %s.", library.label,
                 ", ".join(f"{count} {fate}" for fate, count in summary(fates).items()))
    return feedback_for(fates, counts, name), library.saved_by_others()


def _from_tags(library: SqliteLibrary) -> dict[str, Remembered]:
    """Without a memory on this computer: zotrec's tagged items, their corpus id from Extra, the collection
    most of them are in; taking an item out of it cannot be told from zotrec doing it, so only the trash
    and the signs of keeping count."""
    import re

    items = {key: data for key, data in library.view.items.items()
             if ZOTREC_TAG in {t.get("tag") for t in data.get("tags") or [] if isinstance(t, dict)}}
    held = Counter(key for data in items.values() for key in data.get("collections") or [])
    collection = held.most_common(1)[0][0] if held else ""
    found = {}
    for key, data in items.items():
        match = re.search(r"^zotrec:\s*(\S+)", str(data.get("extra") or ""), re.MULTILINE)
        if match:
            status = IN_COLLECTION if collection in (data.get("collections") or []) else RETIRED
            found[match.group(1)] = Remembered(match.group(1), str(data.get("title") or key), key, collection, "",
                                               status)
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


def own_items(specs: Sequence[str], items: Sequence[LibraryItem], options=None) -> list[LibraryItem]:
    """`items` without zotrec's recommendations the user has not kept (the rule sync learns by), when a
    Zotero source among `specs` shows their fates; `zotrec score` profiles a library by it."""
    learned = sqlite_feedback(specs, None, (), options)
    if learned is None:
        return list(items)
    kept = learned[0].kept_items
    return [item for item in items if not is_zotrec_item(item) or item.key in kept]


def recommend_with_feedback(recommender, specs: Sequence[str], items: Sequence[LibraryItem], top_n: int,
                            profile_of, group: str | None, options=None, steering=None):
    """`Recommender.recommend` (with the run's `steering`), then what the user did with earlier
    recommendations when a Zotero source shows it (zotero.sqlite, zotero:local, zotero:web with its
    `options`): zotrec's own items count only once kept, dismissed papers never come back, in a group
    library papers other members saved are candidates with their count, and the papers in zotrec's collection
    stay unless beaten clearly (scoring/stability.py), as sync keeps them."""
    learned = sqlite_feedback(specs, group, recommender.corpus, options)
    if learned is None:
        return recommender.recommend(items, top_n=top_n, profile=profile_of(items), steering=steering)
    from recommender.scoring.feedback import apply_feedback

    feedback, others = learned
    mine = [item for item in items if (not is_zotrec_item(item) or item.key in feedback.kept_items)]
    profile = profile_of(mine) or mine
    owned = [item for item in mine if item.key not in others]
    recs = recommender.recommend(owned, top_n=0, profile=profile, steering=steering)
    texts = [item.text for item in profile if item.text.strip()]
    rows = recommender.representation.transform(texts) if feedback and texts else None
    from recommender.scoring.stability import stable_recommendations

    recs = apply_feedback(recs, [paper.id for paper in recommender.corpus], recommender.corpus_rows, feedback,
                          profile_rows=rows)
    shown = stable_recommendations(recs, feedback.shown, top_n)  # zotrec's collection as sync keeps it
    return shown[:top_n] if top_n else shown
