"""The shapes that flow through zotrec: library items in, papers scored, recommendations out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Creator:
    """One creator of a library item, in Zotero's two-field form (or a single `name`)."""

    last: str
    first: str = ""
    creator_type: str = "author"

    @property
    def name(self) -> str:
        """'First Last', or just the last name for single-field creators (institutions)."""
        return f"{self.first} {self.last}".strip() if self.first else self.last


@dataclass(frozen=True, slots=True)
class LibraryItem:
    """One regular item read from a user's Zotero library (any source: file, sqlite, API).

    `collections` holds full collection paths such as "Thesis/Chapter 2".
    `version` is the Zotero object version when the source has one (Web/local API, sqlite).
    """

    key: str
    title: str
    item_type: str = "journalArticle"
    abstract: str = ""
    creators: tuple[Creator, ...] = ()
    doi: str = ""
    url: str = ""
    date: str = ""
    year: int | None = None
    date_added: str = ""
    tags: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    extra: str = ""
    version: int | None = None
    library: str = ""
    publication: str = ""  # the journal, proceedings or book it appeared in (Zotero's publicationTitle)
    issn: str = ""

    @property
    def text(self) -> str:
        """The text the content model reads: title and abstract."""
        return f"{self.title}. {self.abstract}".strip() if self.abstract else self.title


@dataclass(frozen=True, slots=True)
class Paper:
    """One corpus entry: a candidate paper to recommend.

    `abstract` is None when the source had none (title-only scoring).
    `title_derived` is True when the title was made from the abstract's first words.
    `metadata` keeps every extra key the source had (OpenReview id, PDF URL, …).
    """

    id: str
    title: str
    abstract: str | None = None
    authors: tuple[str, ...] = ()
    url: str = ""
    doi: str = ""
    year: int | None = None
    venue: str = ""
    title_derived: bool = False
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def text(self) -> str:
        """The text the content model reads: title (unless derived) and abstract."""
        if self.abstract is None:
            return self.title
        if self.title_derived:
            return self.abstract
        return f"{self.title}. {self.abstract}"


@dataclass(frozen=True, slots=True)
class Reason:
    """A library item that drove a recommendation, with its similarity to the paper."""

    item_key: str
    item_title: str
    similarity: float


@dataclass(frozen=True, slots=True)
class AuthorReason:
    """An author of the paper who also wrote items in the library (issue 25's author signal)."""

    name: str  # as the corpus paper spells it
    library_items: int  # how many library items list this author


@dataclass(frozen=True, slots=True)
class SteerReason:
    """A `--prefer` text the paper is close to, with the similarity that counted."""

    text: str
    similarity: float


@dataclass(frozen=True, slots=True)
class Recommendation:
    """A scored corpus paper with the library items that explain it (best first)."""

    paper: Paper
    score: float
    reasons: tuple[Reason, ...] = ()
    rank: int = 0
    feedback: tuple[str, ...] = ()  # what the user's earlier actions did to it ("less like 'X', which you removed")
    match: int | None = None  # 0–100 for people (recommender/scoring/match.py); None when not calibrated
    weak: bool = False  # its best reason is below the weak-list bar (recommender/scoring/match.py, is_weak)
    interest: str = ""  # the library interest (collection or topic cluster) this paper serves; "" when none
    author_reasons: tuple[AuthorReason, ...] = ()  # its authors who appear in the library
    steer_reasons: tuple[SteerReason, ...] = ()  # the --prefer texts it matches


@dataclass(frozen=True, slots=True)
class Skipped:
    """An entry a reader left out, and why (shown to the user, never dropped silently). `unreadable`: the
    reader could not read it (broken syntax, a field of the wrong type), as opposed to an entry left out by
    rule (a note, the trash, a duplicate, an empty one)."""

    where: str
    reason: str
    unreadable: bool = False
