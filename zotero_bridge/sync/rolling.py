"""The rolling collection of a daily corpus (`zotrec sync --corpus arxiv:cs.LG`): the window's best N papers.

Two rules on top of today's sync, for arXiv ids only: a paper a list, a sync or a digest showed this library
on an earlier day is not added again (one already in the collection stays: keeping is not showing again);
and zotrec's papers that left the corpus's window count as in the corpus, so the plan takes the unkept ones
out instead of keeping them as "not in this corpus". The collection rolls: no incumbency margin beyond a
tie (scoring/stability.margin_for), so an untouched pick leaves once N better papers are in the window, and
each leaving entry says which is true, "left the top N" or "left the window". Kept and moved ones stay the
user's, by the plan's own rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date

from recommender.items import Paper, Recommendation
from zotero_bridge.feedback.memory import IN_COLLECTION, Remembered
from zotero_bridge.feedback.days import today
from zotero_bridge.feedback.seen import SeenMemory, earlier, is_daily, seen_path


def is_rolling(corpus: Sequence[Paper]) -> bool:
    return any(is_daily(paper.id) for paper in corpus)


def daily_plan_inputs(recs: Sequence[Recommendation], corpus: Sequence[Paper], remembered: Mapping[str, Remembered],
                      library: str, day: date | None = None) -> tuple[list[Recommendation], list[Paper]]:
    """(the ranking without papers shown on earlier days that are not in the collection now, the corpus
    the plan judges "in this corpus" by: this window's papers and zotrec's that left it)."""
    if not is_rolling(corpus):
        return list(recs), list(corpus)
    in_collection = {key for key, paper in remembered.items() if paper.status == IN_COLLECTION}
    first = {}
    if seen_path().is_file():
        with SeenMemory() as memory:
            first = memory.first_days(library)
    hidden = earlier(first, day or today()) - in_collection
    have = {paper.id for paper in corpus}
    gone = [Paper(id=key, title=paper.title) for key, paper in remembered.items() if is_daily(key) and key not in have]
    return [rec for rec in recs if rec.paper.id not in hidden], [*corpus, *gone]


LEFT_TOP_N = "left the top N"
LEFT_WINDOW = "left the window"
TRASH_NOTE = "to Zotero's trash (you never touched it)"


def leaving_notes(plan, window: Sequence[Paper]):
    """The plan with each daily paper leaving the collection saying why: "left the window" when the window no
    longer holds it, else "left the top N" (and, for the trash, that the user never touched it)."""
    if not is_rolling(window):
        return plan
    have = {paper.id for paper in window}
    for place, entry in enumerate(plan.entries):
        if entry.action in ("remove", "trash") and is_daily(entry.corpus_id):
            why = LEFT_TOP_N if entry.corpus_id in have else LEFT_WINDOW
            plan.entries[place] = replace(entry, note=f"{why}; {TRASH_NOTE}" if entry.action == "trash" else why)
    return plan


def remember_synced(library: str, entries, day: date | None = None) -> None:
    """The papers a written sync put into the collection count as shown to the library."""
    ids = [entry.corpus_id for entry in entries if entry.corpus_id and entry.action in ("add", "link", "keep")]
    if any(is_daily(key) for key in ids):
        with SeenMemory() as memory:
            memory.remember(library, ids, day or today(), "sync")
