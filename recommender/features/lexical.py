"""zotrec's one tf-idf: hashed word n-grams, sublinear tf, smooth idf, unit-length rows, without scikit-learn.

The rows equal scikit-learn's HashingVectorizer(alternate_sign=False, norm=None, stop_words="english",
strip_accents="unicode") + TfidfTransformer(sublinear_tf=True) array for array (tests/test_lexical.py
checks it on real titles and abstracts): the same analyzer, MurmurHash3 (mmh3) and float32 arithmetic.
Importing scikit-learn would cost more CPU than a whole warm content score, so it is not imported here.
One departure: runs of Han, kana and Hangul are split into character pairs (`words`), where scikit-learn keeps
a whole unspaced sentence as one token; text without them is analysed exactly as before.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from recommender.scripts import CJK_RUN

if TYPE_CHECKING:
    from scipy import sparse

N_FEATURES = 1 << 20
NGRAMS = (1, 2)
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_INT_MIN = -(1 << 31)

# scikit-learn's ENGLISH_STOP_WORDS (tests/test_lexical.py checks they are the same).
ENGLISH_STOP_WORDS = frozenset("""
    a about above across after afterwards again against all almost alone along already also although
    always am among amongst amoungst amount an and another any anyhow anyone anything anyway anywhere
    are around as at back be became because become becomes becoming been before beforehand behind being
    below beside besides between beyond bill both bottom but by call can cannot cant co con could
    couldnt cry de describe detail do done down due during each eg eight either eleven else elsewhere
    empty enough etc even ever every everyone everything everywhere except few fifteen fifty fill find
    fire first five for former formerly forty found four from front full further get give go had has
    hasnt have he hence her here hereafter hereby herein hereupon hers herself him himself his how
    however hundred i ie if in inc indeed interest into is it its itself keep last latter latterly least
    less ltd made many may me meanwhile might mill mine more moreover most mostly move much must my
    myself name namely neither never nevertheless next nine no nobody none noone nor not nothing now
    nowhere of off often on once one only onto or other others otherwise our ours ourselves out over own
    part per perhaps please put rather re same see seem seemed seeming seems serious several she should
    show side since sincere six sixty so some somehow someone something sometime sometimes somewhere
    still such system take ten than that the their them themselves then thence there thereafter thereby
    therefore therein thereupon these they thick thin third this those though three through throughout
    thru thus to together too top toward towards twelve twenty two un under until up upon us very via
    was we well were what whatever when whence whenever where whereafter whereas whereby wherein
    whereupon wherever whether which while whither who whoever whole whom whose why will with within
    without would yet you your yours yourself yourselves
""".split())


def _strip_accents(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def words(text: str, stop_words: frozenset[str] = ENGLISH_STOP_WORDS) -> list[str]:
    """scikit-learn's word rule: lower case, accents stripped, `\\w\\w+` tokens, stop words dropped; a run of
    Han, kana or Hangul, written without spaces between words, becomes its overlapping character pairs."""
    if text.isascii() or not CJK_RUN.search(text):
        return _words(text, stop_words)
    tokens, last = [], 0
    for run in CJK_RUN.finditer(text):
        tokens += _words(text[last:run.start()], stop_words)
        tokens += character_pairs(unicodedata.normalize("NFC", run.group()))
        last = run.end()
    return tokens + _words(text[last:], stop_words)


def _words(text: str, stop_words: frozenset[str]) -> list[str]:
    return [word for word in _TOKEN.findall(_strip_accents(text.lower())) if word not in stop_words]


def character_pairs(run: str) -> list[str]:
    """A CJK run's overlapping character pairs ("深度学习" → 深度, 度学, 学习); a lone character stays whole.
    Pairs are the usual unit for Chinese retrieval without a word segmenter (most words are two characters)."""
    if len(run) < 2:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)]


def ngrams(tokens: list[str], ngram_range: tuple[int, int] = NGRAMS) -> list[str]:
    """The word n-grams of `tokens` for n in `ngram_range` (as scikit-learn joins them, with one space)."""
    low, high = ngram_range
    grams = list(tokens) if low == 1 else []
    for n in range(max(low, 2), high + 1):
        grams += [" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
    return grams


def _bucket(token: str, hash32, n_features: int) -> int:
    value = hash32(token, 0, True)
    if value == _INT_MIN:  # scikit-learn's rule for abs(-2**31)
        return (2147483647 - (n_features - 1)) % n_features
    return abs(value) % n_features


def hashed_counts(texts: Sequence[str], analyze: Callable[[str], list[str]],
                  n_features: int = N_FEATURES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counts float32, bucket indices int32, indptr int32) per text, indices sorted within a row, as
    HashingVectorizer(norm=None, alternate_sign=False) after sum_duplicates."""
    import mmh3

    hash32, cache = mmh3.hash, {}
    buckets, lengths = [], np.zeros(len(texts), dtype=np.int64)
    for row, text in enumerate(texts):
        grams = analyze(text)
        lengths[row] = len(grams)
        for gram in grams:
            bucket = cache.get(gram)
            if bucket is None:
                bucket = cache[gram] = _bucket(gram, hash32, n_features)
            buckets.append(bucket)
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    keys, counts = np.unique(rows * n_features + np.asarray(buckets, dtype=np.int64), return_counts=True)
    indptr = np.zeros(len(texts) + 1, dtype=np.int32)
    np.cumsum(np.bincount(keys // n_features, minlength=len(texts)), out=indptr[1:])
    return counts.astype(np.float32), (keys % n_features).astype(np.int32), indptr


def _row_norms(squares: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Per-row sums of float32 squares, added one by one in float64 as scikit-learn's l2 loop adds
    them (numpy's own sums are pairwise: other roundings)."""
    lengths, starts = np.diff(indptr), indptr[:-1]
    total = np.zeros(len(lengths), dtype=np.float64)
    for position in range(int(lengths.max(initial=0))):
        rows = np.flatnonzero(lengths > position)
        total[rows] += squares[starts[rows] + position]
    return np.sqrt(total)


class LexicalIndex:
    """idf over `len(idf)` hash buckets (sublinear tf, smooth idf, l2 rows), fitted on corpus texts.

    `tokenize` replaces scikit-learn's word rule (enrich.py stems words); n-grams are made from its tokens.
    """

    def __init__(self, idf: np.ndarray, stop_words: Sequence[str] = ENGLISH_STOP_WORDS,
                 ngram_range: tuple[int, int] = NGRAMS, tokenize: Callable[[str], list[str]] | None = None) -> None:
        idf = np.asarray(idf)
        self.idf = idf if idf.dtype in (np.float32, np.float64) else idf.astype(np.float32)
        self.stop_words = frozenset(stop_words)
        self.ngram_range = tuple(int(n) for n in ngram_range)
        self.tokenize = tokenize

    @property
    def n_features(self) -> int:
        return len(self.idf)

    def analyze(self, text: str) -> list[str]:
        tokens = self.tokenize(text) if self.tokenize is not None else words(text, self.stop_words)
        return ngrams(tokens, self.ngram_range)

    @classmethod
    def fit(cls, corpus_texts: Sequence[str], stop_words: Sequence[str] = ENGLISH_STOP_WORDS, *,
            n_features: int = N_FEATURES, ngram_range: tuple[int, int] = NGRAMS,
            tokenize: Callable[[str], list[str]] | None = None) -> LexicalIndex:
        return cls._fitted(corpus_texts, stop_words, n_features, ngram_range, tokenize)[0]

    @classmethod
    def fit_transform(cls, corpus_texts: Sequence[str], stop_words: Sequence[str] = ENGLISH_STOP_WORDS, *,
                      n_features: int = N_FEATURES) -> tuple[LexicalIndex, sparse.csr_matrix]:
        """`fit(texts)` and its `transform(texts)`, the same values, each text analysed once, not twice."""
        index, counts = cls._fitted(corpus_texts, stop_words, n_features, NGRAMS, None)
        return index, index._rows(*counts)

    @classmethod
    def _fitted(cls, corpus_texts, stop_words, n_features, ngram_range, tokenize):
        """The fitted index and the corpus's hashed counts it was fitted on (fit_transform weighs them next)."""
        index = cls(np.zeros(n_features, dtype=np.float32), stop_words, ngram_range, tokenize)
        counts = hashed_counts(corpus_texts, index.analyze, n_features)
        df = np.bincount(counts[1], minlength=n_features).astype(np.float32) + np.float32(1.0)
        idf = np.full_like(df, len(corpus_texts) + 1, dtype=np.float32) / df
        np.log(idf, out=idf)
        idf += np.float32(1.0)
        index.idf = idf
        return index, counts

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """Unit-length tf-idf rows (float32 CSR)."""
        return self._rows(*hashed_counts(texts, self.analyze, self.n_features))

    def _rows(self, counts: np.ndarray, indices: np.ndarray, indptr: np.ndarray) -> sparse.csr_matrix:
        from scipy import sparse

        np.log(counts, out=counts)
        counts += np.float32(1.0)
        counts *= self.idf[indices]  # a float64 idf (an old model file) is multiplied in float64, as scikit-learn did
        norms = _row_norms(counts * counts, indptr)
        per_entry = np.repeat(norms, np.diff(indptr))
        nonzero = per_entry != 0.0
        counts[nonzero] = (counts[nonzero].astype(np.float64) / per_entry[nonzero]).astype(np.float32)
        return sparse.csr_matrix((counts, indices, indptr), shape=(len(indptr) - 1, self.n_features))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The idf of the buckets the corpus uses (the rest share one value), for np.savez."""
        default = self.idf.max()  # the idf of a bucket no corpus text uses
        used = np.flatnonzero(self.idf != default).astype(np.int32)
        return {"idf_buckets": used, "idf_values": self.idf[used], "idf_default": np.array(default)}

    @classmethod
    def from_arrays(cls, arrays, stop_words: Sequence[str] = ENGLISH_STOP_WORDS,
                    n_features: int = N_FEATURES) -> LexicalIndex:
        idf = np.full(n_features, arrays["idf_default"], dtype=np.asarray(arrays["idf_values"]).dtype)
        idf[arrays["idf_buckets"]] = arrays["idf_values"]
        return cls(idf, stop_words)
