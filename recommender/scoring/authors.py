"""The author signal: corpus papers by people who wrote items in the library, and the reasons that say so.

A paper's author strength is log2(1 + n), n being how many library items share an author with it
(1 item → 1, 3 → 2, 7 → 3), at most MAX_STRENGTH: items, not authors, so five co-authors of one saved
paper count as that one paper. The ranking adds AUTHOR_WEIGHT × strength in units of the run's own
score spread, after the fused score, so the step means the same for every scoring form. Only each
author's PAPERS_PER_AUTHOR best-scored papers get that author's part: a prolific author cannot fill
the top of the list. Weight and cap: docs/evaluation.md, "Authors".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recommender.features.authors import NameKey, creator_key, given_names_agree, is_author, string_key
from recommender.items import AuthorReason, LibraryItem, Paper

AUTHOR_WEIGHT = 1.0  # score spreads added per unit of author strength (one library item shares an author)
MAX_STRENGTH = 3.0  # strength saturates at 7 library items sharing an author with the paper
PAPERS_PER_AUTHOR = 2  # papers of one author that get that author's part (their best-scored ones)


def author_index_arrays(papers: Sequence[Paper]) -> dict[str, np.ndarray]:
    """Every corpus author's key as plain arrays (kept beside a prepared corpus): family, given, paper, position."""
    family, given, paper, position = [], [], [], []
    for number, item in enumerate(papers):
        for place, name in enumerate(item.authors):
            key = string_key(name)
            if key is not None:
                family.append(key.family)
                given.append(key.given)
                paper.append(number)
                position.append(place)
    return {"family": np.array(family, dtype=str), "given": np.array(given, dtype=str),
            "paper": np.array(paper, dtype=np.int32), "position": np.array(position, dtype=np.int32)}


class AuthorIndex:
    """The corpus authors' keys, one entry per (paper, author position), and the entries of each family name."""

    def __init__(self, family: np.ndarray, given: np.ndarray, paper: np.ndarray, position: np.ndarray) -> None:
        self.family, self.given, self.paper, self.position = family, given, paper, position
        self._families, self._givens = family.tolist(), given.tolist()  # keys are made for matched families only
        self.by_family: dict[str, list[int]] = defaultdict(list)
        for entry, name in enumerate(self._families):
            self.by_family[name].append(entry)

    def key(self, entry: int) -> NameKey:
        """The name key of one entry."""
        return NameKey(self._families[entry], self._givens[entry])

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> AuthorIndex:
        return cls(arrays["family"], arrays["given"], arrays["paper"], arrays["position"])


@dataclass(frozen=True, slots=True)
class AuthorMatch:
    """One author of one corpus paper who also wrote library items."""

    paper: int  # the paper's index in the corpus
    position: int  # the author's place in paper.authors
    items: frozenset[int]  # the library items (by index) listing a name that matches this author
    key: NameKey  # the corpus author's key: one person across the corpus, for the per-author cap

    @property
    def library_items(self) -> int:
        return len(self.items)


class AuthorMatches:
    """Every corpus author found in one library, and per paper its matches (the most-saved first)."""

    def __init__(self, matches: Sequence[AuthorMatch] = ()) -> None:
        self.matches = tuple(matches)
        grouped: dict[int, list[AuthorMatch]] = defaultdict(list)
        for match in self.matches:
            grouped[match.paper].append(match)
        self.by_paper = {paper: tuple(sorted(found, key=lambda match: (-match.library_items, match.position)))
                         for paper, found in grouped.items()}

    def strengths(self, scores: np.ndarray, owned: np.ndarray, per_author: int = PAPERS_PER_AUTHOR,
                  limit: float = MAX_STRENGTH) -> np.ndarray:
        """Each paper's author strength: log2(1 + the library items that share an author with it), an author
        counting only on their `per_author` best-scored unowned papers."""
        by_author: dict[NameKey, list[AuthorMatch]] = defaultdict(list)
        for match in self.matches:
            if not owned[match.paper]:
                by_author[match.key].append(match)
        shared: dict[int, set[int]] = defaultdict(set)
        for found in by_author.values():
            found.sort(key=lambda match: (-scores[match.paper], match.paper))
            for match in found[:per_author]:
                shared[match.paper] |= match.items
        strength = np.zeros(len(scores))
        for paper, items in shared.items():
            strength[paper] = np.log2(1 + len(items))
        return np.minimum(strength, limit)

    def reasons(self, paper_index: int, paper: Paper) -> tuple[AuthorReason, ...]:
        """The paper's authors found in the library, the most-saved first (then in the paper's order)."""
        return tuple(AuthorReason(name=paper.authors[match.position], library_items=match.library_items)
                     for match in self.by_paper.get(paper_index, ()))


def library_authors(items: Sequence[LibraryItem]) -> dict[str, dict[str, set[int]]]:
    """family → given → the library items (by index) whose authors have that key."""
    found: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for number, item in enumerate(items):
        for creator in item.creators:
            key = creator_key(creator) if is_author(creator) else None
            if key is not None:
                found[key.family][key.given].add(number)
    return found


def match_authors(index: AuthorIndex, items: Sequence[LibraryItem]) -> AuthorMatches:
    """The corpus authors who wrote library items, with how many items each (initials meet full names)."""
    library = library_authors(items)
    found: dict[NameKey, frozenset[int]] = {}
    matches = []
    papers, positions = index.paper.tolist(), index.position.tolist()
    for family, givens in library.items():
        for entry in index.by_family.get(family, ()):
            key = index.key(entry)
            if key not in found:
                found[key] = _items_of(givens, key.given)
            if found[key]:
                matches.append(AuthorMatch(papers[entry], positions[entry], found[key], key))
    return AuthorMatches(matches)


def _items_of(givens: dict[str, set[int]], given: str) -> frozenset[int]:
    """The items under one family name whose given names agree with `given` (features/authors.py's rule)."""
    if len(given) > 1:  # the same name, or its initial
        return frozenset(givens.get(given, set()) | givens.get(given[0], set()))
    return frozenset().union(*(items for name, items in givens.items() if given_names_agree(name, given)))


def with_authors(scores: np.ndarray, matches: AuthorMatches, owned: np.ndarray, weight: float = AUTHOR_WEIGHT,
                 per_author: int = PAPERS_PER_AUTHOR) -> np.ndarray:
    """The scores plus weight × author strength, in units of the scores' spread over the unowned papers."""
    if not matches.matches or weight <= 0:
        return scores
    candidates = scores[~owned]
    spread = float(candidates.std()) if candidates.size > 1 else 0.0
    return scores + weight * (spread if spread > 0 else 1.0) * matches.strengths(scores, owned, per_author)
