"""One `zotrec serve` session: the list the page shows, made as `reading-list` makes it (the source's Library
with its feedback and ratings, feedback/reading.py, through the one ranking, recommender/pipeline/rank.py), and
what each click does: a rating in the memory (feedback/ratings.py), and for Save a real Zotero item
(sync/save.py). All of it runs on one worker thread, in order: a click is recorded and the list made again
before the next click is read (a double click on Save writes once), and the SQLite files the ranking keeps open
(the embedding cache) are used by the thread that opened them."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from recommender.items import LibraryItem, Recommendation
from zotero_bridge.errors import BridgeError
from zotero_bridge.feedback.ratings import LATER, MORE, NOT, SAVED, later_today, ratings_if_any, record_rating

log = logging.getLogger(__name__)

ACTIONS = {"save": SAVED, "not": NOT, "more": MORE, "later": LATER}
SAID = {SAVED: "Saved '{}' to Zotero", NOT: "'{}': not for you; less like it from now on",
        MORE: "More like '{}' from now on", LATER: "'{}' is put off until tomorrow"}


@dataclass(frozen=True)
class ServeSetup:
    """What a session ranks: the built Recommender and caches (pipeline/build.py), the sources and their items,
    the profile (a collection's items, None: all), the list's length, and where Save writes (None: no Zotero
    source that takes writes: Save is refused with a line saying so)."""

    built: object
    specs: Sequence[str]
    items: Sequence[LibraryItem]
    settings: object = None
    group: str | None = None
    profile: Sequence[LibraryItem] | None = None
    top_n: int = 20
    save_target: object = None
    steering: object = None


class TriageSession:
    def __init__(self, setup: ServeSetup) -> None:
        from zotero_bridge.feedback.reading import named_library_input

        self.setup = setup
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zotrec-serve")
        self.shown: dict[str, Recommendation] = {}  # corpus id → the paper as the page last showed it
        self.identity = self._run(lambda: named_library_input(setup.specs, setup.items, self.corpus, setup.group,
                                                              setup.settings)[1])

    def _run(self, work, *args):
        return self.worker.submit(work, *args).result()

    def close(self) -> None:
        """Wait for the click being recorded, if any; nothing runs after."""
        self.worker.shutdown(wait=True, cancel_futures=True)

    @property
    def corpus(self):
        return self.setup.built.recommender.corpus

    def ranked(self) -> list[Recommendation]:
        """The whole list the page draws from: reading-list's ranking (ratings included), papers shown on an
        earlier day (arXiv) and papers put off today left out."""
        return self._run(self._ranked)[0]

    def _ranked(self):
        from recommender.pipeline import RankOptions, rank
        from zotero_bridge.feedback.reading import named_library_input
        from zotero_bridge.feedback.seen import SeenFilter

        setup = self.setup
        seen = SeenFilter.for_run(setup.specs, setup.settings, corpus=self.corpus)
        library, _ = named_library_input(setup.specs, setup.items, self.corpus, setup.group, setup.settings)
        library = replace(library, profile=setup.profile)
        put_off = later_today(ratings_if_any(self.identity))
        recs = rank(setup.built.recommender, library, RankOptions(top_n=0, steering=setup.steering),
                    setup.built.caches)
        return [rec for rec in seen.apply(recs, 0) if rec.paper.id not in put_off], seen

    def page(self, interest: str = "", source: str = "") -> tuple[list[Recommendation], list[str], list[str]]:
        """(the papers to show, the list's interests, its sources), `interest`/`source` filtering the list."""
        return self._run(self._page, interest, source)

    def _page(self, interest: str, source: str):
        recs, seen = self._ranked()
        interests = sorted({rec.interest for rec in recs[: 5 * self.setup.top_n] if rec.interest})
        sources = sorted({rec.paper.venue for rec in recs if rec.paper.venue})
        chosen = [rec for rec in recs if (not interest or rec.interest == interest)
                  and (not source or rec.paper.venue == source)]
        chosen = chosen[: self.setup.top_n] if self.setup.top_n else chosen
        self.shown.update((rec.paper.id, rec) for rec in chosen)
        seen.remember(chosen, "page")  # a daily paper shown here is not shown again on another day
        return chosen, interests, sources

    def act(self, corpus_id: str, action: str) -> str:
        """Record one click on a paper the page showed; returns the line the page says. Save writes the paper
        into Zotero first (once: a paper already rated saved is not sent again) and is rated only then."""
        return self._run(self._act, corpus_id, action)

    def _act(self, corpus_id: str, action: str) -> str:
        from zotero_bridge.feedback.memory import Memory
        from zotero_bridge.feedback.ratings import read_ratings

        rating = ACTIONS.get(action)
        if rating is None:
            raise BridgeError(f"unknown action '{action}' (save, not, more or later)")
        rec = self.shown.get(corpus_id)
        if rec is None:
            raise BridgeError("that paper is not on the page (reload it)")
        with Memory() as memory:
            before = read_ratings(memory, self.identity).get(corpus_id)
            if rating == SAVED and before is not None and before.rating == SAVED:
                return SAID[SAVED].format(rec.paper.title) + " (already)"
            if rating == SAVED:
                self._save(rec)
            record_rating(memory, self.identity, corpus_id, rec.paper.title, rating)
        log.info("%s.", SAID[rating].format(rec.paper.title))
        return SAID[rating].format(rec.paper.title)

    def _save(self, rec: Recommendation) -> None:
        if self.setup.save_target is None:
            raise BridgeError("Save needs a Zotero library that takes writes: serve with --library zotero:web "
                              "or zotero:local (or --save-to one of them)")
        from zotero_bridge.sync.save import save_paper

        result = save_paper(self.setup.save_target, rec)
        log.info("Saved '%s' to %s in '%s' (%s).", rec.paper.title, result.library, result.collection, result.action)
