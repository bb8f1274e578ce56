"""The rolling collection of a daily corpus (`zotrec sync --corpus arxiv:cs.LG`): the last days' best papers.

Two rules on top of today's sync, for arXiv ids only: a paper a list, a sync or a digest showed this library
on an earlier day is not added again (one already in the collection stays: keeping is not showing again);
and zotrec's papers that left the corpus's window count as in the corpus, so the plan takes the unkept ones
out ("out of the top N") instead of keeping them as "not in this corpus". Kept and moved ones stay the
user's, by the plan's own rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

from recommender.items import Paper, Recommendation
from zotero_bridge.feedback.memory import IN_COLLECTION, Remembered
from zotero_bridge.feedback.seen import SeenMemory, is_daily, seen_path


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
    today = (day or date.today()).isoformat()
    hidden = {key for key, shown in first.items() if shown < today and key not in in_collection}
    have = {paper.id for paper in corpus}
    gone = [Paper(id=key, title=paper.title) for key, paper in remembered.items() if is_daily(key) and key not in have]
    return [rec for rec in recs if rec.paper.id not in hidden], [*corpus, *gone]


def remember_synced(library: str, entries, day: date | None = None) -> None:
    """The papers a written sync put into the collection count as shown to the library."""
    ids = [entry.corpus_id for entry in entries if entry.corpus_id and entry.action in ("add", "link", "keep")]
    if any(is_daily(key) for key in ids):
        with SeenMemory() as memory:
            memory.remember(library, ids, day or date.today(), "sync")
