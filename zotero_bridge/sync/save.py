"""Save one recommended paper into zotrec's collection, at the user's explicit request (the page's Save, the
assistant's `save`): the item `sync` writes (zotero_api/writeback.py: the paper tagged `zotrec` with its reasons
note), through the same transports and writer, remembered as kept (feedback/fates.py `SAVED`): the paper is the
user's from then on, so sync never takes it out and the ranking learns from it.

Idempotent: the paper is found in the library as sync's plan finds it (its corpus id in Extra first, then DOI,
URL, title), so a second call, or a retry after a killed one, writes nothing and remembers nothing again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from recommender.items import Recommendation
from zotero_bridge.errors import BridgeError
from zotero_bridge.sources.base import SourceOptions
from zotero_bridge.sync.run import MAX_PLAN_ROUNDS, WEB_API, Transport, local_transport
from zotero_bridge.zotero_api.client import WriteConflict
from zotero_bridge.zotero_api.writeback import Plan, PlanEntry, make_plan
from zotero_bridge.zotero_api.writer import Writer, settle_pending

log = logging.getLogger(__name__)

CREATED, ADDED, ALREADY = "created", "added", "already"  # a new item; one of the library's, now in the collection
ASKED = "you asked zotrec to save it"


@dataclass(frozen=True)
class SaveTarget:
    """Where a save goes: a library reached by a sync transport (WEB_API, or run.local_transport(URL)), the
    collection sync fills, and the history file (default: history.sqlite in the user data folder)."""

    options: SourceOptions
    collection_name: str
    transport: Transport = WEB_API
    memory_path: Path | None = None


WRITABLE = ("zotero:web", "zotero:local")  # the --library sources a save can write to (files and zotero.sqlite: read)


def writable_library(specs) -> str | None:
    """The first `--library` spec a save can write to, None when there is none."""
    from zotero_bridge.sources.dispatch import parse_library_spec

    return next((spec for spec in specs if parse_library_spec(spec).kind in WRITABLE), None)


def target_for(spec: str, options: SourceOptions, collection_name: str, memory_path: Path | None = None
               ) -> SaveTarget:
    """The SaveTarget of a `--library` spec: zotero:web (the Web API) or zotero:local[:URL] (the desktop's local
    API, Zotero 10); the collection name checked as sync checks it ('A/B': B inside A)."""
    from zotero_bridge.sources.dispatch import parse_library_spec
    from zotero_bridge.zotero_api.collection_path import parse_collection_path

    parsed = parse_library_spec(spec)
    if parsed.kind not in WRITABLE or (parsed.kind == "zotero:web" and parsed.argument):
        raise BridgeError(f"zotrec saves to zotero:web or zotero:local[:URL], not '{spec}' (files and zotero.sqlite "
                          "are only read)")
    parse_collection_path(collection_name)
    transport = WEB_API if parsed.kind == "zotero:web" else local_transport(parsed.argument)
    return SaveTarget(options, collection_name, transport, memory_path)


@dataclass(frozen=True)
class SaveResult:
    """What one save did: `action` CREATED, ADDED or ALREADY; `written`: whether Zotero was sent anything."""

    corpus_id: str
    title: str
    item_key: str
    collection_key: str
    collection: str
    library: str
    action: str
    written: bool

    def as_dict(self) -> dict[str, Any]:
        return {"corpus_id": self.corpus_id, "title": self.title, "item_key": self.item_key,
                "collection": self.collection, "collection_key": self.collection_key, "library": self.library,
                "action": self.action, "written": self.written}


def save_paper(target: SaveTarget, rec: Recommendation) -> SaveResult:
    """Put `rec`'s paper into the collection (a new item with its note, or the library's own item added to it)
    and remember it as kept; a paper already there is only remembered as kept (nothing is sent). A user's edit
    meanwhile (a 412) is read and planned again, at most MAX_PLAN_ROUNDS times."""
    from zotero_bridge.feedback.memory import Memory

    paper = rec.paper
    if paper.title_derived or not paper.title.strip():
        raise BridgeError(f"'{paper.id}' has no title of its own (a seed abstract): zotrec never writes such a "
                          "paper to Zotero; use a titled corpus (zotrec corpus fetch icml2025)")
    session, cache = target.transport.open(target.options)
    memory = None
    try:
        memory = Memory(target.memory_path)
        library = target.transport.identity(session.credentials)
        for _ in range(MAX_PLAN_ROUNDS):
            snapshot = target.transport.snapshot(session, cache)
            pending = settle_pending(cache, snapshot)  # a killed save's item is recognised, never sent twice
            plan, entry = _plan(snapshot, rec, cache, target.collection_name)
            try:
                result = Writer(session, cache, snapshot).apply(plan, [rec]) if plan.needs_writes else None
                break
            except WriteConflict as conflict:
                log.info("%s; reading the changes and saving again.", conflict)
        else:
            raise BridgeError(f"{session.credentials.describe()} kept changing while zotrec saved '{paper.title}' "
                              f"({MAX_PLAN_ROUNDS} tries); try again later")
        key = entry.item_key or (result.created_keys.get(paper.id, "") if result else "")
        failed = "; ".join(result.failed) if result is not None and result.failed else ""
        if not key:
            raise BridgeError(f"Zotero did not save '{paper.title}': {failed or 'no reason given'}")
        if failed:  # the paper is in, its note or a membership update was refused: said, and the paper kept
            log.warning("Zotero saved '%s' but refused part of it: %s", paper.title, failed)
        collection_key = (result.collection_key if result else None) or plan.collection_key or ""
        action = CREATED if key in pending else {"add": CREATED, "link": ADDED}.get(entry.action, ALREADY)
        _remember(memory, library, target.collection_name, rec, action, key, collection_key, snapshot)
        cache.forget_pending([key])
        return SaveResult(paper.id, paper.title, key, collection_key, target.collection_name,
                          session.credentials.describe(), action, result is not None or key in pending)
    finally:
        session.close()
        cache.close()
        if memory is not None:
            memory.close()


def _plan(snapshot, rec: Recommendation, cache, collection_name: str) -> tuple[Plan, PlanEntry]:
    """sync's plan for this one paper alone (add, link or keep); a paper sync would pass over (the user trashed
    it or took it out of the collection) is put back, since the user asks for it now."""
    found = make_plan(snapshot, [rec], cache, collection_name, top_n=1)
    entry = next(e for e in found.entries if e.corpus_id == rec.paper.id)
    if entry.action == "skip":
        entry = replace(entry, action="link", note=ASKED)
    return Plan(found.collection_name, found.collection_key, found.library_version, [entry]), entry


def _remember(memory, library: str, collection: str, rec: Recommendation, action: str, key: str,
              collection_key: str, snapshot) -> None:
    """The save as a one-line run of the history, and zotrec's item as kept (fates.SAVED); nothing when the
    memory already says so (a second save). The user's own items are theirs already: only the line."""
    from zotero_bridge.feedback.fates import KEPT, SAVED, fingerprint
    from zotero_bridge.feedback.memory import IN_COLLECTION, Remembered, ShownPaper
    from zotero_bridge.sync.rolling import remember_synced
    from zotero_bridge.zotero_api.ours import is_ours

    paper, data = rec.paper, snapshot.items.get(key, {})
    before = memory.papers(library).get(paper.id)
    if before is not None and before.item_key != key:
        before = None
    ours = is_ours(data)
    if action == ALREADY and (not ours or (before is not None and before.why == SAVED and before.fate == KEPT)):
        return
    saved = replace(before or Remembered(paper.id, paper.title, key, collection_key, fingerprint(data)),
                    status=IN_COLLECTION, fate=KEPT, why=SAVED, untouched_runs=0)
    created = [saved] if ours and before is None else []
    memory.record_run(library, collection, collection_key, snapshot.version,
                      [ShownPaper(paper.id, paper.title, rec.rank, rec.score, key, "save")],
                      created, [saved] if ours else [])
    remember_synced(library, [PlanEntry("add", paper.title, paper.id, key)])  # a daily paper: shown once
