"""Author names → matching keys, so "Mitrovi\\'{c}, Slobodan", "Slobodan Mitrović" and "S. Mitrovic" meet.

A key is the folded last word of the family name and the folded first given name (`NameKey`). Two
keys match when the family words are equal and the given names agree: equal, or one of them only
an initial that starts the other ("J. Smith" ~ "John Smith"). Folding: TeX and PMLR's TeX-to-Unicode
leftovers repaired (text.clean_text), accents dropped (NFKD), case folded, the letters NFKD leaves
whole (ı ł ø đ æ œ þ ð) spelled in ASCII, apostrophes dropped ("D’Amour" = "DAmour"), suffixes
(Jr., III) dropped, a hyphenated given name joined ("Wei-Lin" = "Weilin"). Keeping the last word of
the family name lets particles and double surnames meet however a source split them
("Van Der Schaar" / "van der Schaar, Mihaela", "Abella, Álvaro Rodríguez" / "Álvaro Rodríguez Abella").

Collision risk: an initial matches every given name it starts, and one name is often several people
(the ICML 2025 list has 13 papers by "Bo Li"); the reasons name the author as the paper spells it, so
the user can tell. Names that
differ only beyond the first given name ("Jean Pierre" / "Jean-Pierre" → "jean" / "jeanpierre") or
in transliteration ("Müller" / "Mueller") do not meet.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from recommender.items import Creator
from recommender.text import clean_text

# Zotero creator roles that wrote the item (editors, translators, series editors and the authors of a
# containing book are not its authors: a proceedings' editors would otherwise "write" every paper in it).
AUTHOR_ROLES = frozenset({"author", "contributor", "programmer", "inventor", "presenter", "podcaster",
                          "cartographer", "artist", "director", "performer"})
_SPELLED = str.maketrans({"ı": "i", "ł": "l", "ø": "o", "đ": "d", "æ": "ae", "œ": "oe", "þ": "th", "ð": "d",
                          "ħ": "h", "ŧ": "t"})
_APOSTROPHES = re.compile(r"[’'ʼ`´‘]")
_SEPARATORS = re.compile(r"[^\w\-]+")  # periods, commas, spaces, braces left over
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
_TEX_HINT = re.compile(r"[\\{}$<]")  # what clean_text would change in an ASCII name


class NameKey(NamedTuple):  # a tuple, hashed in C: a big library has tens of thousands of creators
    """The matching form of one person's name: family = last word of the family name, given = first
    given name ("" when none: institutions, mononyms), a single letter when only an initial is known."""

    family: str
    given: str

    def matches(self, other: NameKey) -> bool:
        """Same person as far as names tell: equal family words, given names equal or an initial of each other."""
        return self.family == other.family and given_names_agree(self.given, other.given)


def given_names_agree(one: str, other: str) -> bool:
    """Equal, or one is a single letter that starts the other; "" agrees only with ""."""
    if one == other:
        return True
    if not one or not other:
        return False
    return (len(one) == 1 and other.startswith(one)) or (len(other) == 1 and one.startswith(other))


def fold(text: str) -> str:
    """Lower-case ASCII-like letters for matching: TeX repaired, accents and apostrophes dropped."""
    if not text.isascii() or _TEX_HINT.search(text):  # plain ASCII names (most) skip the Unicode passes
        text = unicodedata.normalize("NFKD", clean_text(text).casefold())
        text = "".join(char for char in text if not unicodedata.combining(char)).translate(_SPELLED)
    return _APOSTROPHES.sub("", text.casefold())


def _words(folded: str) -> list[str]:
    """Words of folded text without suffixes; a hyphen joins the parts of one word ("wei-lin" → "weilin")."""
    words = [word.replace("-", "").replace("_", "") for word in _SEPARATORS.split(folded)]
    return [word for word in words if word and word not in _SUFFIXES]


@lru_cache(maxsize=1 << 16)
def name_key(given: str, family: str) -> NameKey | None:
    """The key of a name given in two parts; None when neither part has a letter or digit."""
    family_words = _words(fold(family).replace("-", " "))
    given_words = _words(fold(given))
    if not family_words:  # "Plato" filed as a given name only
        family_words, given_words = given_words[-1:], given_words[:-1]
    if not family_words:
        return None
    return NameKey(family_words[-1], given_words[0] if given_words else "")


def split_name(name: str) -> tuple[str, str]:
    """(given, family) of one name string: "Last, First" (BibTeX, Zotero exports), else "First … Last"."""
    if not name.isascii() or _TEX_HINT.search(name):
        name = clean_text(name)
    last, comma, first = name.partition(",")
    if comma:
        rest, comma2, first2 = first.partition(",")  # "Clancy, Jr., David"
        if comma2 and not _words(fold(rest)):
            first = first2
        return first.strip(), last.strip()
    words = name.split()
    while len(words) > 1 and fold(words[-1]).strip(".") in _SUFFIXES:  # "David Clancy Jr."
        words.pop()
    return " ".join(words[:-1]), " ".join(words[-1:])


def string_key(name: str) -> NameKey | None:
    """The key of a name in one string (corpus authors: "Slobodan Mitrović", "A. Mancisidor, Rogelio")."""
    given, family = split_name(name)
    return name_key(given, family)


def creator_key(creator: Creator) -> NameKey | None:
    """The key of a Zotero creator: two fields, or one field (read like a corpus author's string)."""
    if creator.first.strip():
        return name_key(creator.first, creator.last)
    return string_key(creator.last)


def is_author(creator: Creator) -> bool:
    """Whether the creator wrote the item (not an editor or translator; see AUTHOR_ROLES)."""
    return (creator.creator_type or "author") in AUTHOR_ROLES
