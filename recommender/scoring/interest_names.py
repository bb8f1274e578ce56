"""Names of a library's interests from their items' titles (issue 39): the phrases that set a cluster apart
from the rest of the library, whole hyphenated compounds, never a generic or academic-prose word alone.

Pure functions of strings and label arrays; interests.py finds the interests and calls `cluster_names`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from recommender.scripts import CJK_RUN

LABEL_TERMS = 2
PHRASE_PREFERENCE = 0.5  # a word pair replaces its word when at least half as distinctive (issue 39)
SHORT_TITLE_WORDS = 6  # an interest with no shared term is named by its most central title, cut to this

# Words in most titles of any field, the prose of academic titles and of book lists ("edition", "volume"):
# never a name on their own (stop words are dropped already); inside a phrase they stay ("active learning").
GENERIC_WORDS = frozenset("""
    analysis approach approaches based data deep learning method methods model models network networks
    neural new paper problem problems results study toward towards using
    active aimed aims algorithm algorithms application applications applied approach assessment case cases
    comparison comparative design designs development developing effect effects efficient evaluation
    evidence finding framework frameworks general guide handbook impact improved improving introduction large
    novel overview performance perspective perspectives practical principles rate rates review role scheme
    schemes simple survey system systems techniques theory tool tools tutorial understanding use via
    anniversary book books chapter edited edition editions hardcover lecture lectures notes paperback press
    proceedings reprint revised textbook unabridged vol volume volumes workbook
    一种 分析 基于 学习 应用 技术 数据 方法 模型 深度 研究 神经 算法 网络 问题
""".split())
# Chinese particles ("of", "and"): a character pair holding one spans two words, never a name (lexical.py pairs).
_PARTICLES = frozenset("的与和及")
# A hyphenated compound ("chain-of-thought", "medium-range", "k-means") is one term of a name, not its parts.
_COMPOUND = re.compile(r"\w+(?:[-\u2010\u2011]\w+)+")
_HYPHENS = re.compile(r"[-\u2010\u2011]")
_WORD_SPLIT = re.compile(r"[ \-]")
# BibTeX/TeX markup in a title ("{T}he {E}xtended {M}ind", "\\emph{...}"): a name shows none of it.
_TEX_MARKUP = re.compile(r"\\[a-zA-Z]+\s*(?=\{)|[{}]")


def cluster_names(titles: Sequence[str], labels: np.ndarray, terms: int = LABEL_TERMS,
                  central: Sequence[int] | None = None) -> tuple[str, ...]:
    """A short name per cluster from the title phrases that set it apart from the rest of the library (issue
    39): a term's weight is the share of the cluster's titles using it times log(share inside / share outside)
    (smoothed by one title), so a term the rest of the library uses as much weighs nothing; phrases of up to
    two words, plurals folded, a pair preferred to its word when PHRASE_PREFERENCE as distinctive (and to two
    picked words it joins), generic, academic-prose and book-list words (GENERIC_WORDS) never alone; a
    hyphenated compound is one word, never a fragment of it ("chain-of-thought", not "thought"), and TeX
    braces are stripped. Only terms two of its titles share name a cluster; a cluster with none is named by
    its most central title (`central[label]`, a position in `titles`; default its first), cut to
    SHORT_TITLE_WORDS words and quoted; one without any word "topic N"."""
    spelled = [_terms(title, fragments=False) for title in titles]
    folded = {gram: _folded(gram) for item in spelled for gram in item}
    grams = [{folded[gram] for gram in item} for item in spelled]
    frequency = Counter(gram for item in grams for gram in item)
    n = len(titles)
    names = []
    for label in range(labels.max() + 1):
        members = np.flatnonzero(labels == label)
        inside = Counter(gram for member in members for gram in grams[member])
        surface = Counter(gram for member in members for gram in spelled[member])
        shown = {}
        for gram, count in sorted(surface.items(), key=lambda pair: (-pair[1], pair[0])):
            shown.setdefault(folded[gram], gram)
        rest, smooth = max(n - len(members), 1), 1.0 / max(n, 1)
        weight = {}
        for gram, count in inside.items():
            share = count / len(members)
            contrast = math.log((share + smooth) / ((frequency[gram] - count) / rest + smooth))
            if (count >= min(2, len(members)) and contrast > 0
                    and not set(gram.split(" ")) <= _GENERIC_FOLDED):
                weight[gram] = share * contrast
        picked = _distinctive(weight, terms)
        if picked:
            names.append(", ".join(shown[gram] for gram in picked))
        else:
            first = int(central[label]) if central is not None else int(members[0])
            names.append(_short_title(titles[first]) if spelled[first] else f"topic {label + 1}")
    return _unique(names)


def _short_title(title: str) -> str:
    """A title as a name: its first SHORT_TITLE_WORDS words, TeX braces stripped, quoted."""
    words = _plain(title).split()
    cut = " ".join(words[:SHORT_TITLE_WORDS]) + ("\u2026" if len(words) > SHORT_TITLE_WORDS else "")
    return f"\u201c{cut}\u201d"


def _distinctive(weight: dict[str, float], terms: int) -> list[str]:
    """The `terms` best terms by weight, a pair in place of its word when nearly as good, none overlapping;
    two single words that are a pair of the titles are named by that pair, the next term in the free place."""
    picked: list[str] = []
    for word in sorted(weight, key=lambda gram: (-weight[gram], -gram.count(" "), gram)):
        gram = word
        while True:  # "time series" rather than "series"
            longer = [other for other in weight if other.count(" ") > gram.count(" ") and _contains(other, gram)]
            best = max(longer, key=lambda other: (weight[other], other), default=None)
            if best is None or weight[best] < PHRASE_PREFERENCE * weight[gram]:
                break
            gram = best
        joined = _joined(picked[-1], word, weight) if picked else None
        if joined and not any(_overlap(joined, other) for other in picked[:-1]):
            picked[-1] = joined  # "programming, languages" → "programming languages" (and the next term)
            continue
        if gram in picked or any(_overlap(gram, other) for other in picked):
            continue
        picked.append(gram)
        if len(picked) == terms:
            break
    return picked


def _joined(first: str, second: str, weight: dict[str, float]) -> str | None:
    """Two single words that are a pair of the cluster's titles (either order) as that pair, else None."""
    if " " in first or " " in second:
        return None
    pairs = [pair for pair in (f"{first} {second}", f"{second} {first}") if pair in weight]
    return max(pairs, key=lambda pair: (weight[pair], pair), default=None)


def _contains(phrase: str, part: str) -> bool:
    """Whether `part` is a run of `phrase`'s words (or, CJK run together, of its characters)."""
    if CJK_RUN.fullmatch(phrase) and CJK_RUN.fullmatch(part):
        return part in phrase
    return f" {part} " in f" {phrase} "


def _plain(title: str) -> str:
    """A title without its BibTeX/TeX braces and markup commands ("{E}xtended" → "Extended")."""
    return _TEX_MARKUP.sub("", title) if "{" in title or "}" in title else title


def _terms(title: str, fragments: bool = True) -> list[str]:
    """A title's words and adjacent word pairs, by zotrec's tf-idf word rule, TeX braces stripped first; no
    pair spans a stop word. A hyphenated compound is one word ("chain-of-thought", "medium-range"): no pair
    holds a part of it, and its parts are words of the title only with `fragments` (a title on protein-protein
    interactions holds "protein"), never a term that names (`cluster_names` asks fragments=False)."""
    from recommender.features.lexical import ENGLISH_STOP_WORDS, _strip_accents, words

    text, tokens, parts, last = _plain(title), [], [], 0
    for compound in _COMPOUND.finditer(text):
        tokens += words(text[last:compound.start()], frozenset())
        if CJK_RUN.search(compound.group()):
            tokens += words(compound.group(), frozenset())
        else:
            tokens.append(_HYPHENS.sub("-", _strip_accents(compound.group().lower())))
            parts += words(compound.group())
        last = compound.end()
    tokens += words(text[last:], frozenset())
    stop = {token for token in tokens if token in ENGLISH_STOP_WORDS or (CJK_RUN.match(token) and _PARTICLES & set(token))}
    kept = [token for token in tokens if token not in stop]
    pairs = [_pair(a, b) for a, b in zip(tokens, tokens[1:]) if a not in stop and b not in stop]
    return kept + pairs + (parts if fragments else [])


def _pair(first: str, second: str) -> str:
    """Two adjacent terms as one: words with a space, overlapping CJK character pairs run together (检测, 测算 → 检测算)."""
    if first[-1:] == second[:1] and CJK_RUN.fullmatch(first) and CJK_RUN.fullmatch(second):
        return first + second[1:]
    return f"{first} {second}"


def _folded(gram: str) -> str:
    """A term with its plurals folded ('flows' → 'flow') and its hyphens spaces ('spike-sorting' counts as
    'spike sorting'), the key terms are counted under."""
    return " ".join(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
                    for word in _WORD_SPLIT.split(gram))


_GENERIC_FOLDED = frozenset(_folded(word) for word in GENERIC_WORDS)


def _overlap(gram: str, other: str) -> bool:
    """Two terms share a word, a compound's parts counted ("protein", "protein-protein"), or, CJK run together
    by `_pair`, one holds the other."""
    if CJK_RUN.fullmatch(gram) and CJK_RUN.fullmatch(other):
        return gram in other or other in gram
    return bool(set(_WORD_SPLIT.split(gram)) & set(_WORD_SPLIT.split(other)))


def _unique(names: list[str]) -> tuple[str, ...]:
    seen: Counter = Counter()
    out = []
    for name in names:
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return tuple(out)
