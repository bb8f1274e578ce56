"""Which texts are written in a script the English encoder cannot read, and which runs of text are CJK.

MiniLM's WordPiece vocabulary (recommender/data/minilm/tokenizer.json) has whole words only in Latin letters:
every other script is spelt letter by letter, and most Han characters are [UNK] (tests/test_scripts.py checks
the list below against the vocabulary). A text most of whose letters are in such scripts gets a row that says
little about its topic (docs/evaluation.md, "Non-English libraries"), so it is matched on its words instead.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

# The first word of a letter's Unicode name → its script, for the scripts the encoder spells letter by letter.
UNREAD_SCRIPTS = {
    "CJK": "Han", "HIRAGANA": "Hiragana", "KATAKANA": "Katakana", "HANGUL": "Hangul", "CYRILLIC": "Cyrillic",
    "GREEK": "Greek", "ARABIC": "Arabic", "HEBREW": "Hebrew", "DEVANAGARI": "Devanagari", "BENGALI": "Bengali",
    "GURMUKHI": "Gurmukhi", "GUJARATI": "Gujarati", "TAMIL": "Tamil", "TELUGU": "Telugu", "KANNADA": "Kannada",
    "MALAYALAM": "Malayalam", "SINHALA": "Sinhala", "THAI": "Thai", "LAO": "Lao", "TIBETAN": "Tibetan",
    "MYANMAR": "Myanmar", "KHMER": "Khmer", "GEORGIAN": "Georgian", "ARMENIAN": "Armenian", "ETHIOPIC": "Ethiopic",
    "MONGOLIAN": "Mongolian", "BOPOMOFO": "Bopomofo",
}
# A text is unread when at least this share of its letters is in those scripts: an English title with a Greek
# letter or two stays read, a Chinese title with an English acronym ("基于BERT的文本分类", 7 of 11) does not.
UNREAD_SHARE = 0.3
# Han, kana, Hangul (and the CJK compatibility forms): written without spaces between words, so the lexical
# signal splits their runs into overlapping character pairs (recommender/features/lexical.py).
CJK_RUN = re.compile("[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                     "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\U00020000-\U0003134f]+")


@lru_cache(maxsize=8192)
def letter_script(char: str) -> str | None:
    """The script of a letter the encoder spells letter by letter ("Han", "Cyrillic", …); None for any other
    character (a Latin letter, a digit, a symbol)."""
    if char.isascii() or not char.isalpha():
        return None
    return UNREAD_SCRIPTS.get(unicodedata.name(char, "").split(" ", 1)[0])


# The characters a letter of an unread script may be (all but ASCII, Latin-1 and Latin Extended, Latin Extended
# Additional, the punctuation and symbol blocks and the mathematical letters): a text with none is read at once.
@lru_cache(maxsize=1)
def _maybe_unread() -> re.Pattern:
    """Compiled at the first text that is not ASCII; written as the complement of the blocks above: the same
    characters as the ranges U+0370-1DFF, U+1F00-1FFF, U+2C00-1D3FF and U+1D800-10FFFF (every code point checked),
    which took ~6 ms to compile; this ~1 ms, and it searches no slower."""
    return re.compile("[^\x00-\u036f\u1e00-\u1eff\u2000-\u2bff\U0001d400-\U0001d7ff]")


def unread_script(text: str) -> str | None:
    """The main unread script of `text` when at least UNREAD_SHARE of its letters are in unread scripts; else None."""
    if text.isascii() or not _maybe_unread().search(text):
        return None
    scripts: Counter[str] = Counter()
    letters = 0
    for char in text:
        if char.isalpha():
            letters += 1
            script = letter_script(char)
            if script is not None:
                scripts[script] += 1
    unread = sum(scripts.values())
    if not letters or unread < UNREAD_SHARE * letters:
        return None
    return scripts.most_common(1)[0][0]


def unread_texts(texts: Iterable[str]) -> dict[str, int]:
    """How many of `texts` are unread, by main script (most first); empty when every text is read."""
    found = Counter(script for script in map(unread_script, texts) if script is not None)
    return dict(found.most_common())


def unread_notice(counts: dict[str, int], total: int) -> str | None:
    """The one line a run says about its unread library items; None when there are none."""
    if not counts:
        return None
    unread = sum(counts.values())
    one = unread == 1
    return (f"{unread} of {total} library {'item' if total == 1 else 'items'} {'is' if one else 'are'} in "
            f"{', '.join(counts)}, which the English text encoder (MiniLM) cannot read: "
            f"{'it is' if one else 'they are'} matched on {'its' if one else 'their'} words and characters "
            f"instead (tf-idf), so only corpus papers in the same script can match {'it' if one else 'them'}")


def library_notice(texts: Iterable[str]) -> str | None:
    """unread_notice for a library's item texts (those without text left out): what every command warns once."""
    texts = [text for text in texts if text.strip()]
    return unread_notice(unread_texts(texts), len(texts))
