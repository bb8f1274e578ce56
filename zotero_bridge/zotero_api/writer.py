"""Apply a write-back plan through the Web API: posts of at most 50 objects, parent then note, safely.
A paper the plan sends to the trash gets `deleted: 1` in the same membership update (Zotero's trash,
recoverable; the Web API and the desktop both take 0/1 there); nothing is ever sent as a DELETE.

Every write carries the library version it was planned on (a user's concurrent edit → 412 → WriteConflict:
the caller re-reads and re-plans) and a fresh Zotero-Write-Token (a retried batch is never applied twice);
objects that come back in `failed` with a 5xx code are sent again a bounded number of times. The cache is
kept in step with every successful write, and new papers are noted as pending before they are sent: a run
killed after Zotero stored them but before the answer came leaves them recognisable (`settle_pending`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence

from recommender.items import Recommendation
from recommender.words import plural
from zotero_bridge.errors import BridgeError
from zotero_bridge.zotero_api.cache import WebCache, WrittenRecord
from zotero_bridge.zotero_api.client import WebSession
from zotero_bridge.zotero_api.collection_path import parse_collection_path, resolve_collection_path
from zotero_bridge.zotero_api.snapshot import Snapshot
from zotero_bridge.zotero_api.writeback import (
    ApplyResult,
    Plan,
    corpus_id_of,
    is_ours,
    new_key,
    paper_item,
    preprint_fields,
    reasons_note,
)

log = logging.getLogger(__name__)

MAX_OBJECTS_PER_WRITE = 50
PARTIAL_FAILURE_RETRIES = 2


class Writer:
    """Applies one plan with one session; keeps the cache in step with every successful write."""

    def __init__(self, session: WebSession, cache: WebCache, snapshot: Snapshot) -> None:
        self.session, self.cache, self.snapshot = session, cache, snapshot
        self.version = snapshot.version
        self.result = ApplyResult()

    def apply(self, plan: Plan, recs: Sequence[Recommendation]) -> ApplyResult:
        collection = plan.collection_key or self._create_collection(plan.collection_name)
        self.result.collection_key = collection
        by_id = {rec.paper.id: rec for rec in recs}
        pairs = []
        for entry in plan.of("add"):
            key = new_key()
            pairs.append((paper_item(by_id[entry.corpus_id], collection, key),
                          reasons_note(by_id[entry.corpus_id], key, new_key())))
        for start in range(0, len(pairs), MAX_OBJECTS_PER_WRITE // 2):
            chunk = pairs[start:start + MAX_OBJECTS_PER_WRITE // 2]
            self.cache.record_pending(collection, [(corpus_id_of(item), item) for item, _ in chunk])
            saved = self._post_items([o for pair in chunk for o in pair], "creating recommended papers")
            made = [item for item, _ in chunk if item["key"] in saved]
            self.result.created += len(made)
            self.result.created_keys.update({corpus_id_of(item): item["key"] for item in made})
            self._record(collection, [(item["key"], corpus_id_of(item), True) for item in made], saved)
        self._retype(plan, collection, by_id)
        self._membership(plan, collection)
        return self.result

    def _retype(self, plan: Plan, collection: str, by_id: Mapping[str, Recommendation]) -> None:
        """zotrec's own conference papers of a preprint server, untouched since, made preprints (Zotero drops
        the fields the new type lacks, as its item.setType does)."""
        fixes = [entry for entry in plan.of("keep") if entry.retype and entry.corpus_id in by_id]
        for start in range(0, len(fixes), MAX_OBJECTS_PER_WRITE):
            chunk = fixes[start:start + MAX_OBJECTS_PER_WRITE]
            updates = [{"key": e.item_key, "version": self.snapshot.items[e.item_key]["version"],
                        **preprint_fields(by_id[e.corpus_id].paper)} for e in chunk]
            saved = self._post_items(updates, "making zotrec's preprints preprint items")
            done = [(e.item_key, e.corpus_id, True) for e in chunk if e.item_key in saved]
            self._record(collection, done, saved)
            self.result.retyped += len(done)

    def _membership(self, plan: Plan, collection: str) -> None:
        updates, records = [], []
        for entry in plan.of("link", "remove", "trash"):
            data = self.snapshot.items[entry.item_key]
            current = [c for c in data.get("collections") or [] if c != collection]
            wanted = current + [collection] if entry.action == "link" else current
            update = {"key": entry.item_key, "version": data["version"], "collections": wanted}
            if entry.action == "trash":
                update["deleted"] = 1  # Zotero's trash: the user can restore it; never a DELETE
            elif data.get("deleted"):
                update["deleted"] = 0  # zotrec's own trashed paper, back in the top N (make_plan's rule)
            updates.append(update)
            records.append((entry.item_key, entry.corpus_id, is_ours(data)))
        for start in range(0, len(updates), MAX_OBJECTS_PER_WRITE):
            saved = self._post_items(updates[start:start + MAX_OBJECTS_PER_WRITE], "updating the collection")
            done = [r for r in records[start:start + MAX_OBJECTS_PER_WRITE] if r[0] in saved]
            self._record(collection, done, saved)
            for key, _, _ in done:
                linked = collection in saved[key].get("collections", [])
                self.result.linked += linked
                self.result.removed += not linked
                self.result.trashed += bool(saved[key].get("deleted"))

    def _record(self, collection: str, rows: list[tuple[str, str, bool]], saved: Mapping[str, dict]) -> None:
        self.cache.record_written(WrittenRecord(collection, key, corpus_id, int(saved[key]["version"]), created)
                                  for key, corpus_id, created in rows)

    def _create_collection(self, name: str) -> str:
        """Create the missing parts of the path `name` ('A/B': B inside A), parent first; returns the last key."""
        found, missing = resolve_collection_path(self.snapshot.collections, parse_collection_path(name))
        parent: str | bool = found[-1] if found else False
        for part in missing:
            result = self.session.post("collections", [{"name": part, "parentCollection": parent}],
                                       "creating the collection", write_token=uuid.uuid4().hex,
                                       library_version=self.version)
            saved = self._absorb(result, "collections")
            if not saved:
                failure = next(iter(result.get("failed", {}).values()), {})
                raise BridgeError(f"Zotero did not create the collection '{part}' of '{name}': "
                                  f"{failure.get('message', 'no reason')}")
            parent = next(iter(saved))
        log.info("Created the collection '%s'.", name)
        return str(parent)

    def _post_items(self, objects: list[dict], what: str) -> dict[str, dict]:
        """POST, re-sending (a bounded number of times) objects that came back in `failed` with a 5xx code;
        a child note goes again with its parent. Returns the saved objects by key."""
        saved: dict[str, dict] = {}
        pending = list(objects)
        for attempt in range(PARTIAL_FAILURE_RETRIES + 1):
            result = self.session.post("items", pending, what, write_token=uuid.uuid4().hex,
                                       library_version=self.version)
            saved.update(self._absorb(result, "items"))
            again: list[dict] = []
            for index, failure in sorted((int(i), f) for i, f in (result.get("failed") or {}).items()):
                obj, code = pending[index], int(failure.get("code") or 0)
                transient = code >= 500 or obj.get("parentItem") in {o["key"] for o in again}
                if transient and attempt < PARTIAL_FAILURE_RETRIES:
                    again.append(obj)
                    continue
                label = obj.get("title") or ("note of " + str(obj.get("parentItem")) if obj.get("parentItem")
                                             else obj.get("key"))
                log.warning("Zotero refused '%s' (%s): %s", label, code, failure.get("message"))
                self.result.failed.append(f"{label}: {failure.get('message')} ({code})")
            if not again:
                break
            log.info("Zotero could not save %s this time; sending them again.", plural(len(again), "object"))
            pending = again
        return saved

    def _absorb(self, result: Mapping, kind: str) -> dict[str, dict]:
        """Take the saved objects into the cache at the new library version (our write was the only change)."""
        saved = {obj["key"]: obj["data"] for obj in (result.get("successful") or {}).values() if "data" in obj}
        version = self.session.last_version or self.version
        items = list(saved.values()) if kind == "items" else []
        collections = list(saved.values()) if kind == "collections" else []
        top_items = [d for d in items if not d.get("parentItem")]
        self.cache.apply_changes(top_items, collections, (), (), version)
        self.snapshot.items.update({d["key"]: d for d in top_items})
        self.snapshot.collections.update({d["key"]: d for d in collections})
        self.version = self.snapshot.version = version
        return saved


def settle_pending(cache: WebCache, snapshot: Snapshot) -> dict[str, tuple[str, str, dict]]:
    """The papers zotrec sent and has not yet remembered that are in the library now (a run killed between
    Zotero's commit and its answer leaves them): recorded as written, at their version if they are still as
    sent, else at 0 (changed since: never removed). Returns item key → (collection key, corpus id, sent)."""
    found, records, gone = {}, [], []
    for key, (collection, corpus_id, sent) in cache.pending().items():
        data = snapshot.items.get(key)
        if data is None:  # never stored (refused, or the answer was an error)
            gone.append(key)
            continue
        found[key] = (collection, corpus_id, sent)
        if key not in cache.written(collection):
            records.append(WrittenRecord(collection, key, corpus_id,
                                         int(data.get("version") or 0) if _as_sent(sent, data) else 0, True))
    cache.record_written(records)
    cache.forget_pending(gone)
    return found


def _as_sent(sent: Mapping, data: Mapping) -> bool:
    """The item is as zotrec sent it: the user has not edited, tagged, filed or trashed it since."""
    def tags(d: Mapping) -> set:
        return {t.get("tag") for t in d.get("tags") or [] if isinstance(t, Mapping)}

    def creators(d: Mapping) -> list:
        return [tuple(str(c.get(k) or "") for k in ("firstName", "lastName", "name"))
                for c in d.get("creators") or [] if isinstance(c, Mapping)]

    same = all(str(sent.get(name) or "") == str(data.get(name) or "")
               for name in ("title", "abstractNote", "DOI", "url", "extra"))
    return (same and creators(sent) == creators(data) and tags(sent) == tags(data)
            and set(sent.get("collections") or []) == set(data.get("collections") or []) and not data.get("deleted"))
