"""Untitled abstracts (the seed format) → the titled papers they are, matched against a fuller corpus.

A wrong merge is worse than none: it would show one paper's title over another's abstract. So a
seed is merged only when the evidence is clear, and otherwise stays a separate untitled entry:

1. a candidate with an abstract whose text is nearly the same (cosine ≥ 0.9), or
2. the title's own name ("ConfPO: …") found word for word in the abstract, for one title only, or
3. abstract-to-title tf-idf similarity that stands out: the best title is far above the rest
   (gap measured in standard deviations of all the seed's scores) *and* covers its own title's
   words well. Measured on ICML 2025: wrong-paper candidates stay below half of the threshold.

Assignment is one-to-one: a title claimed by two seeds goes to neither. Before any of that, a seed
whose match is known (the bundled ICML 2025 seeds, venues.seed_matches) goes to its paper.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from recommender.features.lexical import ENGLISH_STOP_WORDS, LexicalIndex
from recommender.items import Paper

log = logging.getLogger(__name__)

SAME_ABSTRACT = 0.9
NAME_MIN_SHARE = 0.6  # a named title must still score ≥ 60 % of the best title
NAME_MIN_COVERAGE = 0.3
EVIDENCE_THRESHOLD = 2.5  # gap (in standard deviations) × title coverage
MIN_CANDIDATES = 20
_CHUNK = 512
_BUCKETS = 1 << 22  # hashed words and word pairs; few collisions among a corpus's titles and abstracts
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s", "ly")
_WORD = re.compile(r"[a-z0-9]+")
_TITLE_NAME = re.compile(r"^\s*([^\s:]{3,})\s*:")
_IGNORED_NAMES = {"Position", "Review", "Survey"}


@dataclass(frozen=True)
class Match:
    """A seed paper matched to a titled paper, and on what evidence."""

    seed: int
    target: int
    method: str
    evidence: float


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _tokens(text: str) -> list[str]:
    """Lower-case words of two or more letters or digits, stop words dropped, crudely stemmed."""
    words = _WORD.findall(text.lower())
    return [_stem(w) for w in words if len(w) > 1 and w not in ENGLISH_STOP_WORDS]


def match_untitled(seeds: Sequence[Paper], candidates: Sequence[Paper]) -> list[Match]:
    """One-to-one matches of untitled abstracts (`seeds`) to titled `candidates`; unclear ones left out."""
    seeds_with_text = [i for i, s in enumerate(seeds) if s.abstract]
    if not seeds_with_text or len(candidates) < MIN_CANDIDATES:
        return []
    titles = [c.title for c in candidates]
    abstracts = [seeds[i].abstract or "" for i in seeds_with_text]
    index = LexicalIndex.fit(titles + abstracts, n_features=_BUCKETS, tokenize=_tokens)
    title_rows = index.transform(titles)
    abstract_rows = index.transform(abstracts)
    context = _Context(titles, abstracts, candidates, index, title_rows, abstract_rows)
    proposals: list[Match] = []
    for start in range(0, len(abstracts), _CHUNK):
        scores = (abstract_rows[start:start + _CHUNK] @ title_rows.T).toarray()
        for offset, row in enumerate(scores):
            position = start + offset
            found = context.decide(position, row)
            if found:
                proposals.append(Match(seeds_with_text[position], found[0], found[1], found[2]))
    return _one_to_one(proposals)


class _Context:
    """What the decision rules need about all candidates, computed once."""

    def __init__(self, titles, abstracts, candidates, index, title_rows, abstract_rows) -> None:
        self.abstracts = abstracts
        self.seed_rows, self.title_rows = abstract_rows, title_rows  # a row's buckets: its words and word pairs
        # how rare a title word is among titles, to weigh how much of a title an abstract covers
        self.title_idf = LexicalIndex.fit(titles, n_features=_BUCKETS, tokenize=_tokens).idf
        names = [(m.group(1) if (m := _TITLE_NAME.match(t)) else None) for t in titles]
        name_counts = Counter(n for n in names if n)
        self.names = {n: i for i, n in enumerate(names)
                      if n and name_counts[n] == 1 and n not in _IGNORED_NAMES}
        with_abstract = [i for i, c in enumerate(candidates) if c.abstract]
        self.with_abstract = with_abstract
        self.candidate_abstract_rows = index.transform([candidates[i].abstract for i in with_abstract]) \
            if with_abstract else None

    def coverage(self, position: int, target: int) -> float:
        """Share of the title's (idf-weighted) words and word pairs that the abstract contains."""
        grams, abstract_grams = _buckets(self.title_rows, target), _buckets(self.seed_rows, position)
        weights = self.title_idf[grams].astype(np.float64)
        total = weights.sum()
        return float(weights[np.isin(grams, abstract_grams)].sum() / total) if total else 0.0

    def decide(self, position: int, row: np.ndarray) -> tuple[int, str, float] | None:
        abstract = self.abstracts[position]
        same = self._same_abstract(position)
        if same is not None:
            return same
        best = int(np.argmax(row))
        if row[best] <= 0:
            return None
        words = set(re.findall(r"[\w.-]*\w", abstract))
        named = [self.names[w] for w in words if w in self.names]
        if len(named) == 1 and row[named[0]] >= NAME_MIN_SHARE * row[best] \
                and self.coverage(position, named[0]) >= NAME_MIN_COVERAGE:
            return named[0], "title name in abstract", float(row[named[0]])
        runner_up = float(np.partition(row, -2)[-2])
        spread = float(row.std()) or 1.0
        evidence = (float(row[best]) - runner_up) / spread * self.coverage(position, best)
        if evidence >= EVIDENCE_THRESHOLD:
            return best, "abstract-title similarity", evidence
        return None

    def _same_abstract(self, position: int) -> tuple[int, str, float] | None:
        if self.candidate_abstract_rows is None:
            return None
        scores = (self.seed_rows[position] @ self.candidate_abstract_rows.T).toarray()[0]
        best = int(np.argmax(scores))
        if scores[best] >= SAME_ABSTRACT:
            return self.with_abstract[best], "same abstract", float(scores[best])
        return None


def _buckets(rows, row: int) -> np.ndarray:
    return rows.indices[rows.indptr[row]:rows.indptr[row + 1]]


def _one_to_one(proposals: list[Match]) -> list[Match]:
    claims = Counter(m.target for m in proposals)
    for match in proposals:
        if claims[match.target] > 1:
            log.info("Two untitled abstracts point at the same paper (#%d); neither is merged", match.target)
    return [m for m in proposals if claims[m.target] == 1]


def merge_seed(seed: Paper, listed: Paper, match: Match) -> Paper:
    """The listed paper (id, title, authors, links) with the seed's abstract when it has none."""
    metadata = {**seed.metadata, **listed.metadata, "matched_by": match.method,
                "matched_abstract_id": seed.id}
    return replace(listed, abstract=listed.abstract or seed.abstract, title_derived=False,
                   venue=listed.venue or seed.venue, metadata=metadata)


def enrich_untitled(papers: Sequence[Paper], known: Mapping[str, str] | None = None) -> tuple[list[Paper], int]:
    """Merge untitled entries into the titled papers they are; the rest stay as they are.

    `known` (seed id → paper id; default the bundled seeds' matches) decides first, where both papers
    are here; the other untitled entries are matched by their text. Returns the new list (merged papers
    in the titled paper's place) and how many were merged.
    """
    from recommender.corpus.venues import seed_matches

    known = seed_matches() if known is None else known
    seeds = [i for i, p in enumerate(papers) if p.title_derived]
    titled = [i for i, p in enumerate(papers) if not p.title_derived]
    if not seeds or not titled:
        return list(papers), 0
    position = {papers[i].id: n for n, i in enumerate(titled)}
    listed = _one_to_one([Match(n, position[known[papers[i].id]], "known match", 1.0)
                          for n, i in enumerate(seeds) if known.get(papers[i].id) in position])
    claimed = {m.target for m in listed}
    rest = [n for n in range(len(seeds)) if n not in {m.seed for m in listed}]
    free = [n for n in range(len(titled)) if n not in claimed]
    guessed = match_untitled([papers[seeds[n]] for n in rest], [papers[titled[n]] for n in free])
    matches = listed + [Match(rest[m.seed], free[m.target], m.method, m.evidence) for m in guessed]
    result = list(papers)
    absorbed = set()
    for match in matches:
        seed_index, target_index = seeds[match.seed], titled[match.target]
        result[target_index] = merge_seed(papers[seed_index], papers[target_index], match)
        absorbed.add(seed_index)
    if rest:  # the bundled seeds' known matches are no news
        log.info("Matched %d of %d untitled abstracts to titled papers", len(matches), len(seeds))
    return [p for i, p in enumerate(result) if i not in absorbed], len(matches)
