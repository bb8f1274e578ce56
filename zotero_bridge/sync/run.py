"""`zotrec sync`: read a Zotero library through the Web API, score the corpus, write the top N back.
(The desktop's local API goes through the same plan: see `Transport`.)

One session (one pyzotero client, one request counter) for the whole command. A 412 while writing means
someone changed the library meanwhile: zotrec reads what changed, scores and plans again (bounded rounds).
Before scoring, the fates of earlier recommendations are read (zotero_bridge/feedback/) and passed to the
recommender as plain lists; after a successful write, the run and the fates go into the memory in one
transaction (never on --dry-run).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recommender.items import Recommendation
from recommender.scoring.caches import NO_CACHES, ScoringCaches
from recommender.scoring.ranking import Recommender
from zotero_bridge.errors import BridgeError
from zotero_bridge.feedback.identity import legacy_history, library_identity, move_history, say_if_new
from zotero_bridge.sources import SourceOptions
from zotero_bridge.sources.web import library_read, open_session
from zotero_bridge.zotero_api.client import WriteConflict
from zotero_bridge.zotero_api.snapshot import sync_snapshot
from zotero_bridge.zotero_api.writeback import (
    NOT_IN_CORPUS,
    ApplyResult,
    Plan,
    collection_members,
    is_ours,
    make_plan,
)
from zotero_bridge.zotero_api.writer import Writer, settle_pending

log = logging.getLogger(__name__)

MAX_PLAN_ROUNDS = 3


@dataclass(frozen=True)
class Transport:
    """How sync reaches a library, so one plan serves the Web API and the desktop's local API alike.

    `open(options)` → (session, cache); `snapshot(session, cache)` → the library now. The session offers
    `credentials` (library_type, library_id, describe()), `zot` (pyzotero), `call`, `post` (≤50 objects, write
    token, If-Unmodified-Since-Version; 412 → WriteConflict), `last_version`, `stats` and `close`.
    """

    open: Callable[[SourceOptions], tuple[Any, Any]] = open_session
    snapshot: Callable[[Any, Any], Any] = sync_snapshot
    group_signal: bool = True  # the Web API shows who created each group item; the local API does not
    identity: Callable[[Any], str] = lambda target: library_identity(target.library_type, target.library_id)


WEB_API = Transport()


def local_transport(endpoint: str = "") -> Transport:
    """The desktop's local API (`--library zotero:local[:URL]`, Zotero 10 and later)."""
    from zotero_bridge.local_api.transport import open_local, read_snapshot

    return Transport(open=lambda options: open_local(endpoint, options), snapshot=read_snapshot, group_signal=False,
                     identity=lambda target: library_identity(target.library_type, target.library_id,
                                                              target.server_id))


@dataclass
class SyncRequest:
    """What the user asked for: the Recommender to rank with (recommender/pipeline/build.py's, or one built
    on a list of papers) and the caches it ranks with."""

    recommender: Recommender
    options: SourceOptions
    collection_name: str
    top_n: int = 20
    dry_run: bool = False
    memory_path: Path | None = None  # the history file (default: history.sqlite in the user data folder)
    transport: Transport = WEB_API  # local_transport(URL) for zotero:local
    steering: Any = None  # recommender.scoring.steering.Steering: --prefer / --avoid / --recent-half-life
    caches: ScoringCaches = NO_CACHES


@dataclass
class SyncReport:
    """The plan that was (or, with --dry-run, would be) applied, what happened, and what it cost."""

    library: str
    plan: Plan
    recommendations: list[Recommendation]
    result: ApplyResult | None
    dry_run: bool
    rounds: int
    stats: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The stable JSON shape of `zotrec sync --format json`."""
        by_id = {rec.paper.id: rec for rec in self.recommendations}
        entries = [{"action": e.action, "title": e.title, "corpus_id": e.corpus_id or None,
                    "item_key": e.item_key or None, "rank": e.rank,
                    "score": None if e.score is None else round(e.score, 4), "note": e.note or None,
                    "why": why_lines(by_id[e.corpus_id]) if e.rank and e.corpus_id in by_id else []}
                   for e in self.plan.entries]
        result = self.result or ApplyResult()
        return {
            "library": self.library, "collection": self.plan.collection_name,
            "collection_key": result.collection_key or self.plan.collection_key, "dry_run": self.dry_run,
            "library_version": self.plan.library_version, "plan": entries,
            "counts": {action: len(self.plan.of(action)) for action in ACTIONS},
            "written": None if self.result is None else {"created": result.created, "linked": result.linked,
                                                          "removed": result.removed, "trashed": result.trashed,
                                                          "retyped": result.retyped, "failed": result.failed},
            "rounds": self.rounds, "requests": self.stats,
        }


def run_sync(request: SyncRequest) -> SyncReport:
    """Read, learn from the fates of earlier recommendations, score, plan, and (unless dry-run) write and
    remember; re-plan after a conflict, at most MAX_PLAN_ROUNDS times."""
    from zotero_bridge.feedback.memory import Memory
    from zotero_bridge.feedback.ratings import read_ratings

    recommender = request.recommender
    session, cache = request.transport.open(request.options)
    memory = Memory(request.memory_path)
    library = request.transport.identity(session.credentials)  # per library identity (feedback/identity.py)
    try:
        first_version = cache.library_version
        remembered = memory.papers(library)
        user_changed = None  # did the library change since the last run, before our own writes?
        adopted: dict[str, Any] = {}
        for round_number in range(1, MAX_PLAN_ROUNDS + 1):
            since = cache.library_version
            snapshot = request.transport.snapshot(session, cache)
            if round_number == 1 and not remembered:  # history under the old name, or a new library: one line
                if old := legacy_history(memory.db, library, snapshot.collections, snapshot.items):
                    remembered = memory.papers(old)
                    if not request.dry_run:
                        move_history(memory.db, old, library)
                else:
                    say_if_new(memory.db, library, session.credentials.describe())
            remembered = _taken_out_by_us(cache, snapshot, remembered)
            adopted.update(_adopt(cache, snapshot, {**remembered, **adopted}))
            remembered = {**adopted, **remembered}
            user_changed = snapshot.version != first_version if user_changed is None else user_changed
            group = (_group_signal(session, memory, library, snapshot, recommender.corpus)
                     if request.transport.group_signal else ({}, frozenset(), ""))
            report, fates = _plan_round(request, recommender, session, cache, snapshot, since, remembered, group,
                                        say_unread=round_number == 1,
                                        ratings=read_ratings(memory, library))  # the page's (feedback/ratings.py)
            remembered = fates
            report.rounds = round_number
            if request.dry_run or not report.plan.needs_writes:
                break
            try:
                cache.record_leaving(report.plan.collection_key or "",
                                     [e.item_key for e in report.plan.of("remove", "trash")])
                report.result = Writer(session, cache, snapshot).apply(report.plan, report.recommendations)
                break
            except WriteConflict as conflict:
                log.info("%s; reading the changes and planning again.", conflict)
        else:
            raise BridgeError(f"{session.credentials.describe()} kept changing while zotrec wrote to it "
                              f"({MAX_PLAN_ROUNDS} tries); run it again later")
        if not request.dry_run:
            _remember(memory, library, report, fates, snapshot, moved=bool(user_changed), adopted=adopted,
                      steering=request.steering)
            from zotero_bridge.sync.rolling import remember_synced

            remember_synced(library, report.plan.entries)  # arXiv papers in the collection: shown once
            cache.forget_pending(cache.pending())  # remembered now
            cache.forget_leaving()
        if (report.result is not None and session.credentials.library_type == "group"
                and request.transport.group_signal):
            _, me, name = memory.group_state(library)  # our own writes were the only change (else a 412)
            memory.store_group(library, snapshot.version, me, name,
                               {key: me for key in report.result.created_keys.values()} if me else {},
                               set(snapshot.items))
        report.stats = session.stats()
        return report
    finally:
        session.close()
        cache.close()
        memory.close()


def _group_signal(session, memory, library, snapshot, corpus):
    """For a group library: (corpus id → other members who saved it, keys they created, the group's name)."""
    if session.credentials.library_type != "group":
        return {}, frozenset(), ""
    from zotero_bridge.feedback.group_web import group_creators
    from zotero_bridge.feedback.learn import member_counts

    creators, me, name = group_creators(session, memory, library, snapshot)
    counts, others = member_counts(creators, snapshot.items, corpus, me)
    return counts, others, name or session.credentials.describe()


def _plan_round(request, recommender, session, cache, snapshot, since, remembered, group, say_unread=False,
                ratings=None):
    """One read → fates → feedback → ranking → plan; in a group, papers other members saved are candidates.
    `say_unread`: warn about items the dense encoder cannot read (the first round; a re-plan says it no more)."""
    from zotero_bridge.feedback.fates import DISMISSED, UNTOUCHED
    from zotero_bridge.feedback.learn import feedback_for, read_fates, summary
    from zotero_bridge.feedback.web_view import web_view

    view = web_view(session, snapshot, since, [paper.item_key for paper in remembered.values()],
                    unsure=[paper.item_key for paper in remembered.values() if paper.fate != DISMISSED])
    fates = read_fates(remembered, view, request.collection_name)
    counts, others, group_name = group
    feedback = feedback_for(fates, counts, group_name, ratings)
    if fates:
        log.info("What you did with earlier recommendations: %s.",
                 ", ".join(f"{count} {fate}" for fate, count in summary(fates).items()))
    read = library_read(snapshot, session.credentials,
                        keep=lambda data: not is_ours(data) or data["key"] in feedback.kept_items)
    from recommender.pipeline import Library, RankOptions, rank
    from recommender.scoring.stability import margin_for
    from zotero_bridge.sync.rolling import daily_plan_inputs, is_rolling, leaving_notes

    if say_unread and recommender.dense:  # items MiniLM cannot read (recommender/scoring/unread.py), said once
        from recommender.scripts import library_notice

        if notice := library_notice(item.text for item in read.items):
            log.warning("%s", notice)

    stream = is_rolling(recommender.corpus)  # a daily corpus rolls: its collection is the window's best N
    recs = rank(recommender, Library(items=read.items, feedback=feedback, shared=frozenset(others)),
                RankOptions(top_n=request.top_n, steering=request.steering, every_paper=True, stream=stream),
                request.caches)
    recs, corpus = daily_plan_inputs(recs, recommender.corpus, remembered,  # a daily corpus rolls (no-op else)
                                     request.transport.identity(session.credentials))
    recs = _stable(recs, collection_members(snapshot, recs, request.collection_name), request.top_n,
                   margin_for(stream))
    untouched = {paper.item_key for paper in fates.values() if paper.fate == UNTOUCHED}
    plan = make_plan(snapshot, recs, cache, request.collection_name, request.top_n, kept=feedback.kept_items,
                     corpus=corpus,  # zotrec's items whose paper this corpus lacks stay
                     untouched=untouched)  # leaving, these go to the trash
    plan = leaving_notes(plan, recommender.corpus)  # "left the top N" or "left the window" (a daily corpus)
    planned = {entry.corpus_id for entry in plan.entries}
    recs = [rec for rec in recs if rec.paper.id in planned]
    return SyncReport(session.credentials.describe(), plan, recs, None, request.dry_run, 1), fates


def _taken_out_by_us(cache, snapshot, remembered):
    """Papers a killed run was taking out of the collection (cache.leaving) and that are out now: zotrec took
    them out (RETIRED) or moved them to the trash (TRASHED); the user did not dismiss them."""
    from dataclasses import replace

    from zotero_bridge.feedback.memory import IN_COLLECTION, RETIRED, TRASHED

    leaving = cache.leaving()

    def now(paper):
        if paper.status != IN_COLLECTION or paper.item_key not in leaving:
            return paper
        data = snapshot.items.get(paper.item_key, {})
        if data.get("deleted"):
            return replace(paper, status=TRASHED)
        return replace(paper, status=RETIRED) if leaving[paper.item_key] not in (data.get("collections") or []) else paper

    return {cid: now(paper) for cid, paper in remembered.items()}


def _stable(recs: list[Recommendation], members: set[str], top_n: int, margin: float) -> list[Recommendation]:
    """The ranking with the collection's members kept unless beaten clearly (scoring/stability.py): the papers
    to write first, in ranked order, with the untitled ones ranked among them (make_plan counts and skips
    those), then the rest in ranked order."""
    from recommender.scoring.stability import stable_order

    if not members or not top_n:
        return recs
    writable = [rec for rec in recs if _writable(rec)]
    order = stable_order([rec.paper.id for rec in writable], [rec.score for rec in writable], members, top_n,
                         margin)
    chosen = {writable[index].paper.id for index in order[:top_n]}
    position = {rec.paper.id: place for place, rec in enumerate(recs)}
    last = max((position[paper] for paper in chosen), default=-1)
    head = [rec for rec in recs if rec.paper.id in chosen or (not _writable(rec) and position[rec.paper.id] < last)]
    taken = {rec.paper.id for rec in head}
    return head + [rec for rec in recs if rec.paper.id not in taken]


def _writable(rec: Recommendation) -> bool:
    return not rec.paper.title_derived and bool(rec.paper.title.strip())


def _adopt(cache, snapshot, remembered):
    """corpus id → Remembered for the papers a killed run created and never remembered (`settle_pending`),
    so their fates count and the plan may take them out again."""
    from zotero_bridge.feedback.fates import fingerprint
    from zotero_bridge.feedback.memory import Remembered

    return {corpus_id: Remembered(corpus_id, str(sent.get("title") or key), key, collection, fingerprint(sent))
            for key, (collection, corpus_id, sent) in settle_pending(cache, snapshot).items()
            if corpus_id and corpus_id not in remembered}


def _remember(memory, library, report, fates, snapshot, *, moved: bool, adopted=(), steering=None) -> None:
    """Store the run, how it was steered, and the fates read in it (papers adopted after a killed run among
    those created), in one transaction, after the writes succeeded."""
    from zotero_bridge.feedback.learn import after_run
    from zotero_bridge.feedback.memory import ShownPaper

    plan, result = report.plan, report.result
    collection_key = (result.collection_key if result else None) or plan.collection_key or ""
    created = result.created_keys if result else {}
    made, updated = after_run(fates, plan.entries, created, snapshot.items, collection_key, moved)
    made += [fates[corpus_id] for corpus_id in adopted if corpus_id in fates]
    shown = [ShownPaper(e.corpus_id, e.title, e.rank, e.score, e.item_key or created.get(e.corpus_id, ""), e.action)
             for e in plan.entries if e.corpus_id and e.action in ("add", "link", "keep", "remove", "trash")]
    memory.record_run(library, plan.collection_name, collection_key, snapshot.version, shown, made, updated,
                      steering.as_dict() if steering is not None and steering.active else None)


ACTIONS = ("add", "link", "keep", "remove", "trash", "skip")
_ACTION_LABELS = {"add": "add", "link": "add (existing)", "keep": "keep", "remove": "remove",
                  "trash": "to the trash", "skip": "skip"}


def not_in_corpus(plan: Plan) -> int:
    """zotrec's items kept only because this run's corpus does not hold their paper."""
    return sum(entry.note == NOT_IN_CORPUS for entry in plan.of("keep"))


def why_lines(rec: Recommendation) -> list[str]:
    """The reasons a person reads under a planned paper: the library items it is like, the interest, authors and
    preferences it serves (recommender/words.py, as in every output), then the feedback."""
    from recommender.words import more_reasons

    lines = []
    if rec.reasons:
        lines.append("because you saved: " + "; ".join(f"'{r.item_title}' ({r.similarity:.2f})" for r in rec.reasons))
    lines.extend(more_reasons(rec))
    lines.extend(rec.feedback)
    return lines


def render_sync_report(report: SyncReport, fmt: str) -> str:
    """`table` (plain text a person reads) or `json` (SyncReport.as_dict, with request counts)."""
    import json

    if fmt == "json":
        return json.dumps(report.as_dict(), ensure_ascii=False, indent=2) + "\n"
    state = "dry run: nothing was written" if report.dry_run else (
        "nothing to change" if report.result is None else "written")
    lines = [f"Zotero sync · {report.library} · collection \"{report.plan.collection_name}\" ({state})"]
    by_id = {rec.paper.id: rec for rec in report.recommendations}
    for entry in report.plan.entries:
        rank = f"#{entry.rank}" if entry.rank else ""
        score = f"{entry.score:.3f}" if entry.score is not None else ""
        note = f"  [{entry.note}]" if entry.note else ""
        lines.append(f"  {_ACTION_LABELS[entry.action]:<12} {rank:>4} {score:>6}  {entry.title}{note}")
        rec = by_id.get(entry.corpus_id) if entry.action in ("add", "link", "keep") and entry.rank else None
        if rec is not None:
            lines.extend(f"{'':26}{why}" for why in why_lines(rec))
    absent = not_in_corpus(report.plan)
    retype = sum(entry.retype for entry in report.plan.entries)
    kept = ", ".join(part for part in (f"{absent} {NOT_IN_CORPUS}" if absent else "",
                                       f"{retype} made preprints" if retype else "") if part)
    counts = ", ".join(f"{len(report.plan.of(a))} {'to the trash' if a == 'trash' else a}"
                       + (f" ({kept})" if a == "keep" and kept else "") for a in ACTIONS)
    lines.append(f"Plan: {counts}.")
    if report.result is not None:
        result = report.result
        lines.append(f"Written: {result.created} created, {result.linked} added, {result.removed} removed"
                     + (f" ({result.trashed} to the trash)" if result.trashed else "")
                     + (f", {result.retyped} made preprints" if result.retyped else "")
                     + (f", {len(result.failed)} failed: " + "; ".join(result.failed) if result.failed else "."))
    stats = report.stats
    lines.append(f"Requests: {stats.get('requests', 0)} ({stats.get('read_requests', 0)} read, "
                 f"{stats.get('write_requests', 0)} write).")
    return "\n".join(lines) + "\n"
