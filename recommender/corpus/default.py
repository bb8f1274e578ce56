"""The default corpus: the bundled ICML 2025 list with its seed abstracts, enriched by what was fetched.

`zotrec corpus fetch icml2025` may bring every paper or only some (a sample file, a cut listing); either
way the default stays the bundled list of all 3,330 papers, and what was fetched (abstracts, links,
presentation types) sits on the papers it belongs to. A fetched paper is a listed one when they share
an id, an OpenReview id, a PMLR id, a DOI or a normalised title (tried in that order); one that matches
no listed paper is added as it is, and counted. `zotrec corpus remove icml2025` goes back to the list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from recommender.corpus.store import stored_path
from recommender.corpus.venues import BUNDLED_ICML2025, BUNDLED_SEEDS
from recommender.items import Paper
from recommender.text import doi_key, title_key

DEFAULT_NAME = "icml2025"  # the stored corpus that enriches the bundled list
_ID_FIELDS = ("openreview_id", "pmlr_id")
_NOT_COPIED = {"sources", "source_line"}  # how the fetched row was made, not what it says of the paper


@dataclass(frozen=True)
class DefaultCorpus:
    """The files of the default corpus: `files` hold every paper, `fetched` (the stored icml2025, when
    fetched) fills in what they lack."""

    files: tuple[Path, ...]
    fetched: tuple[Path, ...] = ()

    @property
    def all_files(self) -> list[Path]:
        return [*self.files, *self.fetched]


def default_corpus() -> DefaultCorpus:
    """The bundled list and seed files, with the stored icml2025 on top once `corpus fetch` stored it."""
    stored = stored_path(DEFAULT_NAME)
    return DefaultCorpus(files=(BUNDLED_ICML2025, *sorted(BUNDLED_SEEDS.glob("*.txt"))),
                         fetched=(stored,) if stored.is_file() else ())


def fetch_summary(counts: dict[str, int]) -> str:
    """How the fetch sits on the list, in a line: papers it enriched, papers the list lacked."""
    enriched, added = counts.get("enriched", 0), counts.get("added", 0)
    more = f", {_papers(added)} added that the list lacked" if added else ""
    return (f"corpus: the bundled ICML 2025 list, {_papers(enriched)} enriched by the fetched {DEFAULT_NAME}"
            f"{more} (`zotrec corpus remove {DEFAULT_NAME}`: the list alone)")


def _papers(count: int) -> str:
    return f"{count:,} paper{'' if count == 1 else 's'}"


@dataclass
class Enriched:
    """The listed papers with the fetched ones on them, and what that did."""

    papers: list[Paper]
    enriched: int = 0  # listed papers that took something from a fetched paper
    added: int = 0  # fetched papers that matched no listed paper
    repeated: int = 0  # fetched papers that matched a listed paper another fetched paper had already matched


def identity_keys(paper: Paper) -> list[str]:
    """The keys that name one paper across sources, the most reliable first."""
    keys = [f"id:{paper.id}"]
    for name in _ID_FIELDS:
        value = paper.metadata.get(name)
        if isinstance(value, str) and value.strip():
            keys.append(f"{name}:{value.strip()}")
    if paper.doi:
        keys.append(f"doi:{doi_key(paper.doi)}")
    if not paper.title_derived and (title := title_key(paper.title)):
        keys.append(f"title:{title}")
    return keys


def enrich_by_id(listed: Sequence[Paper], fetched: Sequence[Paper]) -> Enriched:
    """Each fetched paper fills what its listed paper lacks (the list's own values stay); the rest are added."""
    index: dict[str, int] = {}
    for position, paper in enumerate(listed):
        if not paper.title_derived:  # an untitled seed is matched by its text later (enrich.py)
            for key in identity_keys(paper):
                index.setdefault(key, position)
    result = Enriched(list(listed))
    matched: set[int] = set()
    for paper in fetched:
        found = next((index[key] for key in identity_keys(paper) if key in index), None)
        if found is None:
            result.papers.append(paper)
            result.added += 1
            for key in identity_keys(paper):
                index.setdefault(key, len(result.papers) - 1)
            matched.add(len(result.papers) - 1)
            continue
        if found in matched:
            result.repeated += 1
            continue
        matched.add(found)
        filled = fill_in(result.papers[found], paper)
        if filled is not None:
            result.papers[found] = filled
            result.enriched += 1
    return result


def fill_in(listed: Paper, fetched: Paper) -> Paper | None:
    """`listed` with what only `fetched` knows (abstract, authors, links, presentation…), or None if nothing."""
    changes: dict = {}
    if listed.abstract is None and fetched.abstract:
        changes["abstract"] = fetched.abstract
    if not listed.authors and fetched.authors:
        changes["authors"] = fetched.authors
    for name in ("url", "doi", "venue", "year"):
        if not getattr(listed, name) and getattr(fetched, name):
            changes[name] = getattr(fetched, name)
    extra = {key: value for key, value in fetched.metadata.items()
             if key not in _NOT_COPIED and listed.metadata.get(key) in (None, "", [])}
    if not changes and not extra:
        return None
    return replace(listed, **changes, metadata={**listed.metadata, **extra})
