"""What each `zotrec mcp` tool answers, from the one ranking (recommender/pipeline/rank.py through
zotero_bridge/feedback/reading.py `library_input`), which the command hands in as a `Pipeline`.

The papers are the rows of `reading-list --format json` (render/reading_list.py), so an assistant reads the same
ids, titles, links and reasons as any other tool; nothing here reads Zotero or a corpus itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from recommender.errors import InputError, SettingError
from recommender.items import LibraryItem, Paper, Recommendation

LIKE_KEY = "zotrec-mcp-text"  # the key of the one-item profile `similar` ranks a text against


@dataclass(frozen=True)
class Query:
    """What a call names (empty: the command's own --library / --corpus) and how it steers the list."""

    library: tuple[str, ...] = ()
    corpus: tuple[str, ...] = ()
    prefer: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    include_seen: bool = False


@dataclass
class Ranked:
    """One ranking: the list, the library as read, the corpus ranked, and how to name both to the user."""

    recs: list[Recommendation]
    items: Sequence[LibraryItem]
    corpus: Sequence[Paper]
    library: str
    corpus_label: str
    seen_left_out: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


Profile = Callable[[Sequence[LibraryItem]], Sequence[LibraryItem]]


class Pipeline(Protocol):
    """The command's wiring of zotrec's one pipeline (zotero_bridge/cli/mcp.py)."""

    def ranked(self, query: Query, top_n: int, profile: Profile | None = None, shown: bool = False) -> Ranked:
        """The list `reading-list` gives for `query` (top_n 0: every paper); `profile` picks the items the
        scores learn from out of the library read (the library stays what is owned); `shown`: the papers
        count as shown to the user (daily papers are then not shown again on a later day)."""

    def library_items(self, query: Query) -> tuple[str, Sequence[LibraryItem]]:
        """(how to name the library, its items as read)."""

    def save(self, query: Query, rec: Recommendation, collection: str | None) -> Any:
        """zotero_bridge/sync/save.py `save_paper` into the library `query` names; its SaveResult."""


def rows(recs: Sequence[Recommendation]) -> list[dict[str, Any]]:
    """The JSON renderer's rows, byte for byte what `reading-list --format json` prints (text made safe there)."""
    from zotero_bridge.render.reading_list import render_recommendations

    return json.loads(render_recommendations(recs, "json")) if recs else []


def _header(ranked: Ranked) -> dict[str, Any]:
    head = {"library": ranked.library, "corpus": ranked.corpus_label}
    if ranked.seen_left_out:
        head["seen_left_out"] = ranked.seen_left_out  # arXiv papers shown on earlier days (include_seen: shown)
    return head


def recommend(pipeline: Pipeline, query: Query, n: int) -> dict[str, Any]:
    ranked = pipeline.ranked(query, n, shown=True)
    return {**_header(ranked), "papers": rows(ranked.recs)}


def explain(pipeline: Pipeline, query: Query, paper_id: str) -> dict[str, Any]:
    """Why a paper was picked: its row, its place in the whole ranking and the reasons in words; a corpus paper
    the ranking leaves out is said to be left out, and why."""
    from zotero_bridge.sync.run import why_lines

    ranked = pipeline.ranked(replace(query, include_seen=True), 0)  # a paper shown on an earlier day is explained
    rec = _find(ranked.recs, paper_id)
    if rec is None:
        paper = _paper(ranked, paper_id)
        return {**_header(ranked), "paper": {"id": paper.id, "title": paper.title, "url": paper.url or None},
                "ranked": False, "why": ["not ranked: it is in your library already, or you dismissed it "
                                         "(zotrec never recommends either)"]}
    [row] = rows([rec])
    why = why_lines(rec) or ["no library item is close to it: it ranks on the corpus side of the score alone"]
    if rec.match is not None:
        why.insert(0, f"{rec.match}% match" + (" (weak)" if rec.weak else ""))
    return {**_header(ranked), "paper": row, "ranked": True, "rank": rec.rank, "of": len(ranked.recs),
            "why": [_safe(line) for line in why]}


def similar(pipeline: Pipeline, query: Query, n: int, text: str | None = None, item: str | None = None
            ) -> dict[str, Any]:
    """Papers like a text, or like one library item (its key or its title): the one ranking with that as the
    profile, so what the library holds is still never recommended."""
    text, item = (text or "").strip(), (item or "").strip()
    if bool(text) == bool(item):
        raise SettingError("similar takes a text or a library item (its key or title), one of the two")
    chosen: list[LibraryItem] = []

    def profile(items: Sequence[LibraryItem]) -> Sequence[LibraryItem]:
        chosen.append(_item(items, item) if item else LibraryItem(key=LIKE_KEY, title=text))
        return chosen

    ranked = pipeline.ranked(query, n, profile, shown=True)
    like = {"text": text} if text else {"item": {"key": chosen[0].key, "title": chosen[0].title}}
    return {**_header(ranked), "like": like, "papers": rows(ranked.recs)}


def sources(pipeline: Pipeline, query: Query, n: int) -> dict[str, Any]:
    """What to follow: the journals, arXiv categories and bioRxiv/medRxiv subjects the library's items come
    from, as `--corpus` options with how many items point there (recommender/corpus/suggest.py)."""
    from recommender.corpus.suggest import suggest_sources

    library, items = pipeline.library_items(query)
    found = suggest_sources(items)
    return {"library": library, "items": len(items), "more": max(0, len(found) - n),
            "sources": [{"option": s.option or None, "label": _safe(s.label), "count": s.count, "kind": s.kind}
                        for s in found[:n]]}


def save(pipeline: Pipeline, query: Query, paper_id: str, confirm: bool, collection: str | None = None
         ) -> dict[str, Any]:
    """Write one paper to Zotero only when `confirm` is true; otherwise say what would be written."""
    ranked = pipeline.ranked(replace(query, include_seen=True), 0)
    rec = _find(ranked.recs, paper_id) or Recommendation(_paper(ranked, paper_id), 0.0)  # owned or dismissed
    if not confirm:
        return {"saved": False, "written": False, "paper": rows([rec])[0],
                "message": "nothing was written; call save again with confirm: true to add it to your Zotero "
                           "collection"}
    result = pipeline.save(query, rec, collection)
    return {"saved": True, **{key: _safe(value) for key, value in result.as_dict().items()}}


def _find(recs: Sequence[Recommendation], paper_id: str) -> Recommendation | None:
    wanted = paper_id.strip()
    return next((rec for rec in recs if rec.paper.id == wanted), None)


def _paper(ranked: Ranked, paper_id: str) -> Paper:
    wanted = paper_id.strip()
    found = next((paper for paper in ranked.corpus if paper.id == wanted), None)
    if found is None:
        raise InputError(f"'{_safe(wanted)}' is not a paper of the corpus ({ranked.corpus_label}); "
                         "the ids are those recommend answers")
    return found


def _item(items: Sequence[LibraryItem], wanted: str) -> LibraryItem:
    """A library item by its key, else by its title (whole, then a unique part of it, case ignored)."""
    folded = wanted.casefold()
    for test in (lambda i: i.key == wanted, lambda i: i.title.strip().casefold() == folded,
                 lambda i: folded in i.title.casefold()):
        found = [i for i in items if test(i) and i.text.strip()]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            titles = "; ".join(f"'{_safe(i.title)}' ({i.key})" for i in found[:3])
            raise InputError(f"more than one library item matches '{_safe(wanted)}': {titles}; give its key")
    raise InputError(f"no library item has the key or title '{_safe(wanted)}'")


def _safe(value: Any) -> Any:
    """Library and corpus text made safe as every output makes it (control characters, bidi overrides)."""
    if not isinstance(value, str):
        return value
    from recommender.formats.output import safe_text

    return safe_text(value)
