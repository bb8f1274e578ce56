"""What `sync` writes into a Zotero collection: the plan (add / keep / remove) and the item JSON; no transport.

Rules: the collection is found by name or created once; new papers become `conferencePaper` items (a
preprint server's papers `preprint` items: repository, archive ID, full date, DOI where given) tagged
`zotrec`, with an Extra line `zotrec: <corpus id> score=<score>` and a child note with the reasons; a paper
already in the library is reused, not created again; papers that fell out of the top N leave the collection
unless the user changed them since zotrec wrote them; one zotrec created and the user never touched goes to
Zotero's trash (`deleted: 1`, recoverable there; never deleted outright), any other stays in the library; a
paper this run's corpus does not hold (another corpus, a partial fetch) stays, since it did not fall out of
anything; one zotrec itself put in the trash comes back from it when it returns to the top N. Plans only ever
touch our collection's membership and the items zotrec created. A preprint zotrec made a conference paper
before, untouched since, is made a preprint (a "keep" entry that says so). Applying a plan is the writer's job
(writer.py).
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from recommender.items import Paper, Recommendation
from recommender.text import doi_key, title_key, url_key
from recommender.words import capitalised, more_reasons, plural
from zotero_bridge.zotero_api.cache import WebCache, WrittenRecord
from zotero_bridge.zotero_api.collection_path import find_collection
from zotero_bridge.zotero_api.ours import ZOTREC_TAG, corpus_id_of, is_ours  # noqa: F401 (the one rule, re-exported)
from zotero_bridge.zotero_api.snapshot import Snapshot

KEY_CHARS = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
NOT_IN_CORPUS = "not in this corpus"
TO_THE_TRASH = "out of the top N; to Zotero's trash (you never touched it)"
FROM_THE_TRASH = "back from the trash (zotrec put it there)"
TO_PREPRINT = "made a preprint (zotrec had written it as a conference paper)"
PREPRINT_SERVERS = {"arxiv": "arXiv", "biorxiv": "bioRxiv", "medrxiv": "medRxiv"}  # corpus id prefix → repository
ICML_2025_PROCEEDINGS = "Proceedings of the 42nd International Conference on Machine Learning"
_OPENREVIEW = re.compile(r"^OpenReview:\s*(\S+)|openreview\.net/(?:forum|pdf)\?(?:.*&)?id=([\w-]+)",
                         re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True)
class PlanEntry:
    """One line of the plan: what happens to one paper or collection member, and why."""

    action: str  # add | link | keep | remove | trash (remove, and to Zotero's trash) | skip
    title: str
    corpus_id: str = ""
    item_key: str = ""
    rank: int | None = None
    score: float | None = None
    note: str = ""
    retype: bool = False  # a kept paper of zotrec's that becomes a preprint (TO_PREPRINT)


@dataclass
class Plan:
    collection_name: str
    collection_key: str | None
    library_version: int
    entries: list[PlanEntry] = field(default_factory=list)

    def of(self, *actions: str) -> list[PlanEntry]:
        return [entry for entry in self.entries if entry.action in actions]

    @property
    def needs_writes(self) -> bool:
        return bool(self.of("add", "link", "remove", "trash")) or any(entry.retype for entry in self.entries)


@dataclass
class ApplyResult:
    created: int = 0
    linked: int = 0
    removed: int = 0
    trashed: int = 0  # of the removed, those moved to Zotero's trash
    retyped: int = 0  # zotrec's conference papers of a preprint server made preprints
    failed: list[str] = field(default_factory=list)
    collection_key: str | None = None
    created_keys: dict[str, str] = field(default_factory=dict)  # corpus id → the item key Zotero stored


def make_plan(snapshot: Snapshot, recs: Sequence[Recommendation], cache: WebCache, collection_name: str,
              top_n: int | None = None, known_collections: Sequence[str] = (),
              kept: Collection[str] = (), corpus: Sequence[Paper] | None = None,
              untouched: Collection[str] = ()) -> Plan:
    """Fill `top_n` places (default: one per recommendation) from the ranking, best first; nothing is sent.

    A paper without a real title (a seed abstract) is never written; a paper the user trashed, or took out
    of the collection after zotrec put it there, is skipped and the next one takes its place (a refill).
    Items in `kept` (keys of recommendations the user adopted) stay where the user left them, and so do
    zotrec's items whose paper is not in `corpus` (this run's papers; None: all are). A leaving item in
    `untouched` (keys of papers zotrec created whose fate is untouched) that is as zotrec last wrote it goes
    to the trash; a paper zotrec put in the trash and the ranking brings back is taken out of it.
    """
    collection_key = find_collection(snapshot.collections, collection_name, known_collections)
    plan = Plan(collection_name, collection_key, snapshot.version)
    records = cache.written(collection_key) if collection_key else {}
    index = _ItemIndex(snapshot.items)
    wanted: set[str] = set()
    places = len(recs) if top_n is None else top_n
    untitled = 0
    for rec in recs:
        if places <= 0:
            break
        paper = rec.paper
        if paper.title_derived or not paper.title.strip():
            untitled += 1
            continue
        data = index.match(rec)
        common = {"title": paper.title, "corpus_id": paper.id, "rank": rec.rank, "score": rec.score}
        if data is None:
            plan.entries.append(PlanEntry("add", **common))
            places -= 1
            continue
        key = data["key"]
        wanted.add(key)
        record = records.get(key)
        if data.get("deleted") and _trashed_by_zotrec(record, data):
            plan.entries.append(PlanEntry("link", **common, item_key=key, note=FROM_THE_TRASH))
            places -= 1
        elif data.get("deleted"):
            plan.entries.append(PlanEntry("skip", **common, item_key=key, note="you moved it to the trash"))
        elif collection_key and collection_key in (data.get("collections") or []):
            retype = _wrongly_typed(paper, data, record)
            plan.entries.append(PlanEntry("keep", **common, item_key=key, note=TO_PREPRINT if retype else "",
                                          retype=retype))
            places -= 1
        elif record is not None and record.version != data.get("version"):
            plan.entries.append(PlanEntry("skip", **common, item_key=key,
                                          note="you took it out of the collection or changed it"))
        else:
            plan.entries.append(PlanEntry("link", **common, item_key=key, note="already in your library"))
            places -= 1
    if untitled:
        plan.entries.append(PlanEntry("skip", f"{plural(untitled, 'paper')} without a title",
                                      note="seed abstracts without their paper's title are never written to "
                                           "Zotero; use a titled corpus (zotrec corpus fetch icml2025)"))
    if collection_key:
        names = None if corpus is None else {name for paper in corpus for name in paper_names(paper)}
        plan.entries.extend(_removals(snapshot, collection_key, wanted, records, set(kept), names, set(untouched)))
    return plan


def _wrongly_typed(paper: Paper, data: Mapping, record: WrittenRecord | None) -> bool:
    """A preprint server's paper that zotrec itself made a conference paper, untouched since (its version is
    the one zotrec wrote): zotrec may correct its own item, never one the user changed."""
    return (bool(preprint_server(paper)) and data.get("itemType") == "conferencePaper" and record is not None
            and record.created and record.version == data.get("version") and is_ours(data))


def _trashed_by_zotrec(record: WrittenRecord | None, data: Mapping) -> bool:
    """In the trash because zotrec put it there: created by zotrec, unchanged since its last write (the trash)."""
    return record is not None and record.created and record.version == data.get("version")


def collection_members(snapshot: Snapshot, recs: Sequence[Recommendation], collection_name: str,
                       known_collections: Sequence[str] = ()) -> set[str]:
    """Corpus ids of the ranked papers that are in the collection now (live items), matched as the plan
    matches them: the incumbents a stable list keeps (recommender/scoring/stability.py)."""
    collection_key = find_collection(snapshot.collections, collection_name, known_collections)
    if not collection_key:
        return set()
    index = _ItemIndex(snapshot.items)
    return {rec.paper.id for rec in recs if (data := index.match(rec)) is not None and not data.get("deleted")
            and collection_key in (data.get("collections") or [])}


def _removals(snapshot: Snapshot, collection_key: str, wanted: set[str], records: Mapping[str, WrittenRecord],
              kept: set[str], corpus_names: set[str] | None, untouched: set[str] = frozenset()) -> list[PlanEntry]:
    entries = []
    for key, data in snapshot.items.items():
        if key in wanted or data.get("deleted") or collection_key not in (data.get("collections") or []):
            continue
        title = str(data.get("title") or key)
        record = records.get(key)
        if key in kept:
            entries.append(PlanEntry("keep", title, corpus_id_of(data), key, note="you kept it"))
        elif record is None:
            note = "added by you" if not is_ours(data) else "no record of zotrec writing it on this computer"
            entries.append(PlanEntry("keep", title, corpus_id_of(data), key, note=f"out of the top N; {note}"))
        elif record.version != data.get("version"):
            entries.append(PlanEntry("keep", title, record.corpus_id, key, note="out of the top N; you changed it"))
        elif corpus_names is not None and corpus_names.isdisjoint([f"id:{record.corpus_id}", *_ItemIndex.names(data)]):
            entries.append(PlanEntry("keep", title, record.corpus_id, key, note=NOT_IN_CORPUS))
        elif record.created and key in untouched and is_ours(data):
            entries.append(PlanEntry("trash", title, record.corpus_id, key, note=TO_THE_TRASH))
        else:
            entries.append(PlanEntry("remove", title, record.corpus_id, key, note="out of the top N"))
    return entries


class _ItemIndex:
    """Find a library item for a paper: zotrec's corpus id, then DOI, OpenReview id, URL, normalised title,
    and (only for items zotrec wrote, e.g. under a seed abstract's made-up title) the abstract; live items
    before trashed ones, zotrec's own before the user's."""

    def __init__(self, items: Mapping[str, dict]) -> None:
        self.by: dict[str, dict] = {}
        for data in sorted(items.values(), key=lambda d: (not d.get("deleted"), is_ours(d))):
            if data.get("itemType") in ("note", "attachment", "annotation"):
                continue
            for name in self.names(data):
                self.by[name] = data  # later wins: live and ours preferred

    @staticmethod
    def names(data: Mapping) -> list[str]:
        names = []
        if corpus := corpus_id_of(data):
            names.append(f"id:{corpus}")
        if data.get("DOI"):
            names.append(f"doi:{doi_key(str(data['DOI']))}")
        if forum := openreview_id_of(str(data.get("extra") or "") + "\n" + str(data.get("url") or "")):
            names.append(f"or:{forum}")
        if data.get("url"):
            names.append(f"url:{url_key(str(data['url']))}")
        if title := title_key(str(data.get("title") or "")):
            names.append(f"title:{title}")
        if is_ours(data) and (abstract := title_key(str(data.get("abstractNote") or ""))):
            names.append(f"abstract:{abstract}")
        return names

    def match(self, rec: Recommendation) -> dict | None:
        return next((self.by[name] for name in paper_names(rec.paper) if name in self.by), None)


def paper_names(paper: Paper) -> list[str]:
    """The names a library item of this paper may carry (see _ItemIndex.names), the surest first."""
    names = [f"id:{paper.id}"]
    names += [f"doi:{doi_key(paper.doi)}"] if paper.doi else []
    names += [f"or:{forum}"] if (forum := _openreview_id(paper)) else []
    names += [f"url:{url_key(paper.url)}"] if paper.url else []
    names += [f"title:{title_key(paper.title)}"] if not paper.title_derived else []
    names += [f"abstract:{title_key(paper.abstract)}"] if paper.abstract else []
    return names


def openreview_id_of(text: str) -> str:
    """The OpenReview forum id in an Extra line ('OpenReview: ID') or an openreview.net URL."""
    match = _OPENREVIEW.search(text)
    return (match.group(1) or match.group(2)) if match else ""


def paper_openreview_id(rec: Recommendation) -> str:
    return _openreview_id(rec.paper)


def _openreview_id(paper: Paper) -> str:
    meta = paper.metadata or {}
    return str(meta.get("openreview_id") or "") or openreview_id_of(str(meta.get("openreview_url") or ""))


# ---- the objects a writer sends ---------------------------------------------------------------------------
def new_key() -> str:
    """A Zotero object key made here, so a paper and its note go in one request."""
    return "".join(secrets.choice(KEY_CHARS) for _ in range(8))


def preprint_server(paper: Paper) -> str:
    """The repository a preprint's corpus id names ('arXiv' for arxiv:2501.00001), '' for any other paper."""
    return PREPRINT_SERVERS.get(paper.id.partition(":")[0].lower(), "") if ":" in paper.id else ""


def preprint_fields(paper: Paper) -> dict:
    """Zotero's `preprint` fields for a preprint server's paper (schema.json's preprint type): the repository,
    the archive ID as Zotero's own arXiv translator writes it ('arXiv:2501.00001'), the full date of the first
    version, the DOI where the server gives one."""
    server = preprint_server(paper)
    meta = paper.metadata or {}
    number = str(meta.get("arxiv_id") or paper.id.partition(":")[2]) if server == "arXiv" else ""
    published = str(meta.get("published") or "")[:10]
    return {"itemType": "preprint", "repository": server, "archiveID": f"arXiv:{number}" if number else "",
            "date": published or str(paper.year or ""), "DOI": paper.doi or "", "url": paper.url,
            "libraryCatalog": "arXiv.org" if server == "arXiv" else server}


def paper_item(rec: Recommendation, collection_key: str, key: str) -> dict:
    """The item JSON for one recommendation, marked as zotrec's: a preprint server's paper as a `preprint`,
    any other as a `conferencePaper`."""
    paper = rec.paper
    if preprint_server(paper):
        return {"key": key, "title": paper.title, "creators": _creators(paper.authors),
                "abstractNote": paper.abstract or "", **preprint_fields(paper),
                "extra": f"zotrec: {paper.id} score={rec.score:.4f}", "tags": [{"tag": ZOTREC_TAG}],
                "collections": [collection_key], "relations": {}}
    icml = not paper.venue or ("ICML" in paper.venue.upper() and "2025" in paper.venue)
    return {
        "key": key, "itemType": "conferencePaper", "title": paper.title, "creators": _creators(paper.authors),
        "abstractNote": paper.abstract or "", "proceedingsTitle": ICML_2025_PROCEEDINGS if icml else "",
        "conferenceName": "ICML 2025" if icml else paper.venue, "date": str(paper.year or (2025 if icml else "")),
        "url": paper.url, "DOI": paper.doi, "extra": f"zotrec: {paper.id} score={rec.score:.4f}" + (
            f"\nOpenReview: {forum}" if (forum := paper_openreview_id(rec)) else ""),
        "tags": [{"tag": ZOTREC_TAG}], "collections": [collection_key], "relations": {},
    }


def _creators(authors: Sequence[str]) -> list[dict]:
    creators = []
    for author in authors:
        first, _, last = author.rpartition(" ")
        creators.append({"creatorType": "author", "firstName": first, "lastName": last} if first
                        else {"creatorType": "author", "name": author})
    return creators


def reasons_note(rec: Recommendation, parent_key: str, key: str) -> dict:
    """The child note: why zotrec recommends this paper. Written once, with the paper: a later run never
    rewrites it, so a note the user edited keeps the user's words (and a run with other reasons leaves it)."""
    reasons = "".join(f"<li>{html.escape(r.item_title)} (similarity {r.similarity:.2f})</li>" for r in rec.reasons)
    more = "".join(f"<li>{html.escape(capitalised(line))}</li>" for line in more_reasons(rec))
    learned = "".join(f"<li>{html.escape(line)}</li>" for line in rec.feedback)
    weak = " (weak: nothing in the library is close)." if rec.weak else "."
    match = "" if rec.match is None else f" {rec.match}% match{weak}"
    body = (f"<p><b>Recommended by zotrec</b>: rank {rec.rank}, score {rec.score:.3f}.{match}</p>"
            + (f"<p>Because you saved:</p><ul>{reasons}</ul>" if reasons else "")
            + (f"<p>Also:</p><ul>{more}</ul>" if more else "")
            + (f"<p>From what you did with earlier recommendations:</p><ul>{learned}</ul>" if learned else ""))
    return {"key": key, "itemType": "note", "parentItem": parent_key, "note": body,
            "tags": [{"tag": ZOTREC_TAG}], "collections": [], "relations": {}}
