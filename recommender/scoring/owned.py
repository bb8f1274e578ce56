"""Which corpus papers a user already has: the same DOI, URL or normalised title as a library item."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from recommender.items import LibraryItem, Paper
from recommender.text import ascii_key, doi_key, title_key, url_key



class CorpusKeys:
    """The corpus's DOI, URL and title keys, computed once, so "which papers does this user
    already own" costs O(library), not O(corpus), per user."""

    def __init__(self, corpus: Sequence[Paper]) -> None:
        self.size = len(corpus)
        self.by_doi: dict[str, list[int]] = {}
        self.by_url: dict[str, list[int]] = {}
        self.by_title: dict[str, list[int]] = {}
        self._shared: list[set[int]] | None = None
        for index, paper in enumerate(corpus):
            if paper.doi:
                self.by_doi.setdefault(doi_key(paper.doi), []).append(index)
            if paper.url:
                self.by_url.setdefault(url_key(paper.url), []).append(index)
            if not paper.title_derived:
                self.by_title.setdefault(title_key(paper.title), []).append(index)

    def to_json(self) -> dict:
        return {"size": self.size, "doi": self.by_doi, "url": self.by_url, "title": self.by_title}

    @classmethod
    def from_json(cls, data: dict) -> CorpusKeys:
        keys = cls([])
        keys.size, keys.by_doi, keys.by_url, keys.by_title = data["size"], data["doi"], data["url"], data["title"]
        return keys

    def same_paper(self, indices: Iterable[int]) -> set[int]:
        """The corpus papers sharing a DOI, URL or title key with one of `indices` (those included): the same
        paper listed twice (a preprint and its proceedings version), by the rule for what a user owns."""
        if self._shared is None:  # the keys more than one paper holds, found once
            self._shared = [{int(member) for member in group}
                            for index in (self.by_doi, self.by_url, self.by_title)
                            for key, group in index.items() if key and len(group) > 1]
        wanted = {int(index) for index in indices}
        found = set(wanted)
        for group in self._shared:
            if not wanted.isdisjoint(group):
                found |= group
        return found

    def find(self, doi: str = "", url: str = "", title: str = "") -> int | None:
        """The corpus paper a saved item is, by the same rule as `owned`: DOI, then URL, then normalised
        title (a title made from an abstract never matches); None when none is."""
        for key, index in ((doi and doi_key(doi), self.by_doi), (url and url_key(url), self.by_url),
                           (title and fast_title_key(title), self.by_title)):
            if key and key in index:
                return index[key][0]
        return None

    def owned(self, library: Sequence[LibraryItem]) -> np.ndarray:
        """True for corpus papers the user already has: same DOI, URL or normalised title."""
        mask = np.zeros(self.size, dtype=bool)
        dois = {doi_key(item.doi) for item in library if item.doi}
        urls = {url_key(item.url) for item in library if item.url}
        titles = {fast_title_key(item.title) for item in library if item.title} - {""}
        for keys, index in ((dois, self.by_doi), (urls, self.by_url), (titles, self.by_title)):
            for key in keys & index.keys():
                mask[index[key]] = True
        return mask


def fast_title_key(title: str) -> str:
    """recommender.text.title_key, without its clean-up passes for plain ASCII titles with no TeX
    (there they change nothing a key keeps): a 10,000-item library's keys in a few ms."""
    if title.isascii() and "\\" not in title and "$" not in title and "<" not in title:
        return ascii_key(title)
    return title_key(title)


def owned_mask(library: Sequence[LibraryItem], corpus: Sequence[Paper]) -> np.ndarray:
    """True for corpus papers the user already has: same DOI, URL or normalised title."""
    return CorpusKeys(corpus).owned(library)
