"""A library's interests, named for people: its collections when it has several of a fair size, else
clusters of its item rows (average linkage on a seeded sample, the number of clusters chosen by silhouette).

Functions of plain arrays and strings, deterministic for a given input; the re-ranking that gives each
interest its share of the list is facets.py. A 10,000-item library costs one sample's similarity matrix
(at most SAMPLE² floats) and one pass of its rows against the centroids.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recommender.features.base import dense_part
from recommender.scoring.linkage import average_linkage, cuts
from recommender.scripts import CJK_RUN

MAX_INTERESTS = 10  # more than a top 20 can show side by side
MIN_COLLECTION_ITEMS = 3  # a collection with fewer items is not an interest of its own
MIN_FILED_SHARE = 0.5  # collections are the interests only when they hold at least half the items
MIN_CLUSTER_ITEMS = 2  # a cluster of one item is an outlier, not an interest
MIN_CLUSTER_SHARE = 0.02  # nor is a cluster of under 2 % of the library
MIN_SILHOUETTE = 0.15  # below it no split is better than one interest (docs/evaluation.md, "Interests")
UNRELATED_SILHOUETTE = 0.10  # ... unless the clusters are unrelated fields (issue 33: a diffuse field hid three)
UNRELATED_SIMILARITY = 0.08  # unrelated: no two clusters' items are this similar on average
SAMPLE = 1500  # rows the number of clusters is chosen on
SVD_DIMENSIONS = 64  # sparse (tf-idf) rows are clustered in this many latent dimensions
SEED = 0
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
_PATH_SEPARATOR = re.compile(r"(?<!\\)/")
# A hyphenated compound ("chain-of-thought", "medium-range", "k-means") is one term of a name, not its parts.
_COMPOUND = re.compile(r"\w+(?:[-\u2010\u2011]\w+)+")
_HYPHENS = re.compile(r"[-\u2010\u2011]")
_WORD_SPLIT = re.compile(r"[ \-]")
# BibTeX/TeX markup in a title ("{T}he {E}xtended {M}ind", "\\emph{...}"): a name shows none of it.
_TEX_MARKUP = re.compile(r"\\[a-zA-Z]+\s*(?=\{)|[{}]")


@dataclass(frozen=True)
class Interests:
    """Each profile item's interest (an index into `names`) and the interests' names."""

    labels: np.ndarray
    names: tuple[str, ...]
    source: str  # "collections", "clusters" or "one" (nothing to separate)

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.labels, minlength=len(self.names))


def library_interests(collections: Sequence[Sequence[str]], titles: Sequence[str], rows, *,
                      seed: int = SEED) -> Interests:
    """The profile's interests: its collections when they fit (collection_labels), else clusters of `rows`."""
    filed = collection_labels(collections)
    if filed is not None:
        labels, names = filed
        return Interests(join_unfiled(labels, rows), names, "collections")
    labels = cluster_labels(rows, seed=seed)
    if labels.max(initial=0) == 0:
        return Interests(np.zeros(len(titles), dtype=np.int64), ("",), "one")
    # a large library is named from the titles it is clustered on, and each cluster's first
    named = np.union1d(_sample(len(titles), seed), np.unique(labels, return_index=True)[1])
    central = central_items(dense_part(rows)[named], labels[named])
    return Interests(labels, cluster_names([titles[i] for i in named], labels[named], central=central), "clusters")


def central_items(points, labels: np.ndarray) -> np.ndarray:
    """Each cluster's most central row (the most similar to its mean row; ties: the first), a position in
    `points` (dense or sparse rows, as the library's features give them)."""
    central = np.zeros(labels.max() + 1, dtype=np.int64)
    for label in range(len(central)):
        members = np.flatnonzero(labels == label)
        block = points[members]
        closeness = np.asarray(block @ np.asarray(block.mean(axis=0)).ravel()).ravel()
        central[label] = members[int(np.argmax(closeness))]
    return central


def collection_labels(collections: Sequence[Sequence[str]]) -> tuple[np.ndarray, tuple[str, ...]] | None:
    """Each item's collection (-1: none of the chosen ones) and the chosen collections' paths, or None when the
    library is not organised in at least two collections of MIN_COLLECTION_ITEMS that hold MIN_FILED_SHARE of it.

    An item in several collections goes to the largest (a collection left with too few items is dropped);
    with more than MAX_INTERESTS collections the paths are cut to their top level first, then only the
    largest are kept.
    """
    for depth in (None, 1):
        paths = [sorted({_cut(path, depth) for path in item if path.strip()}) for item in collections]
        counts = Counter(path for item in paths for path in item)
        chosen = sorted((path for path, count in counts.items() if count >= MIN_COLLECTION_ITEMS),
                        key=lambda path: (-counts[path], path))
        if len(chosen) <= MAX_INTERESTS:
            break
    chosen = chosen[:MAX_INTERESTS]
    while len(chosen) >= 2:
        place = {path: rank for rank, path in enumerate(chosen)}  # rank 0 is the largest
        labels = np.array([min((place[path] for path in item if path in place), default=-1) for item in paths],
                          dtype=np.int64)
        sizes = np.bincount(labels[labels >= 0], minlength=len(chosen))
        if sizes.min() >= MIN_COLLECTION_ITEMS:
            return (labels, tuple(chosen)) if np.mean(labels >= 0) >= MIN_FILED_SHARE else None
        # a collection whose items went to larger ones is dropped
        chosen = [path for path, size in zip(chosen, sizes) if size >= MIN_COLLECTION_ITEMS]
    return None


def _cut(path: str, depth: int | None) -> str:
    return path if depth is None else "/".join(_PATH_SEPARATOR.split(path)[:depth])


def join_unfiled(labels: np.ndarray, rows) -> np.ndarray:
    """Items outside the chosen collections (-1) join the collection whose mean row is closest."""
    unfiled = np.flatnonzero(labels < 0)
    if not len(unfiled):
        return labels
    points = _dense(rows)
    centroids = np.vstack([points[labels == label].mean(axis=0) for label in range(labels.max() + 1)])
    labels = labels.copy()
    labels[unfiled] = np.argmax(points[unfiled] @ _unit(centroids).T, axis=1)
    return labels


def cluster_labels(rows, *, seed: int = SEED, max_clusters: int = MAX_INTERESTS) -> np.ndarray:
    """Each row's cluster, 0 … k−1 by size (largest first), or all 0 when no split is better than none.

    Average-linkage clustering (cosine) of a seeded sample of at most SAMPLE rows; the cut is the one with
    the best silhouette, at least MIN_SILHOUETTE (UNRELATED_SILHOUETTE for clusters that are unrelated), after
    clusters under MIN_CLUSTER_SHARE of the sample (at least MIN_CLUSTER_ITEMS) join the nearest larger one;
    every row then joins its nearest cluster centroid.
    """
    n = rows.shape[0]
    single = np.zeros(n, dtype=np.int64)
    if n < 2 * MIN_CLUSTER_ITEMS:
        return single
    sample = _sample(n, seed)
    # Dense rows: only the sample is made unit now, every row once the SAMPLE² matrices are gone (a
    # 10,000-row library's unit copy is 15 MB); sparse rows need every row for their latent basis.
    points = _dense(rows, seed) if _is_sparse(dense_part(rows)) else None
    chosen = points[sample] if points is not None else _dense(dense_part(rows)[sample])
    tree = average_linkage(_distances(chosen))  # its float64 copy replaces the float32 matrix
    distances = _distances(chosen)  # the same product again, for the silhouettes
    smallest = max(MIN_CLUSTER_ITEMS, math.ceil(MIN_CLUSTER_SHARE * len(sample)))
    best, best_score = None, UNRELATED_SILHOUETTE
    for cut in cuts(tree, range(2, max_clusters + 1)):
        labels = _outliers_joined(chosen, cut - 1, smallest)
        if labels.max() < 1:
            continue
        score = silhouette(distances, labels)
        if score > best_score + 1e-9 and (score > MIN_SILHOUETTE + 1e-9 or unrelated(distances, labels)):
            best, best_score = labels, score
    del distances
    if best is None:
        return single
    centroids = _unit(np.vstack([chosen[best == label].mean(axis=0) for label in range(best.max() + 1)]))
    points = points if points is not None else _dense(rows, seed)
    return _by_size(np.argmax(points @ centroids.T, axis=1))


def unrelated(distances: np.ndarray, labels: np.ndarray) -> bool:
    """Whether no two clusters' items are on average more similar than UNRELATED_SIMILARITY (cosine): separate
    fields, whatever the spread inside each lowers the silhouette to."""
    members = np.eye(labels.max() + 1, dtype=distances.dtype)[labels]
    sizes = members.sum(axis=0).astype(np.float64)
    totals = (members.T @ distances).astype(np.float64) @ members  # k × k summed distances, no n × n copy
    similarity = 1.0 - totals / np.outer(sizes, sizes)
    np.fill_diagonal(similarity, -np.inf)
    return bool(similarity.max() <= UNRELATED_SIMILARITY)


def _distances(points: np.ndarray) -> np.ndarray:
    """Cosine distances of unit rows, clipped at 0, zero on the diagonal (computed in place: one matrix)."""
    distances = points @ points.T
    np.subtract(1.0, distances, out=distances)
    np.maximum(distances, 0.0, out=distances)
    np.fill_diagonal(distances, 0.0)
    return distances


def _outliers_joined(points: np.ndarray, labels: np.ndarray, smallest: int) -> np.ndarray:
    """Clusters with fewer than `smallest` rows joined to the nearest larger cluster's centroid; renumbered."""
    sizes = np.bincount(labels)
    large = np.flatnonzero(sizes >= smallest)
    if not len(large):
        return np.zeros_like(labels)
    centroids = _unit(np.vstack([points[labels == label].mean(axis=0) for label in large]))
    joined = np.searchsorted(large, labels)
    small = sizes[labels] < smallest
    joined[small] = np.argmax(points[small] @ centroids.T, axis=1)
    return joined


def silhouette(distances: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette for a precomputed distance matrix (scikit-learn's silhouette_score(metric="precomputed"),
    written here because importing scikit-learn costs more than a whole warm run)."""
    k = labels.max() + 1
    members = np.eye(k, dtype=distances.dtype)[labels]
    sizes = members.sum(axis=0)
    totals = distances @ members  # (points, clusters): summed distance to each cluster
    own = sizes[labels] - 1
    inside = np.where(own > 0, totals[np.arange(len(labels)), labels] / np.maximum(own, 1), 0.0)
    totals[np.arange(len(labels)), labels] = np.inf
    nearest = (totals / sizes).min(axis=1)
    widths = np.maximum(inside, nearest)
    values = np.divide(nearest - inside, widths, out=np.zeros_like(widths), where=(own > 0) & (widths > 0))
    return float(values.mean())


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


def _by_size(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered 0 … by cluster size, largest first (ties: the lower old label), empty ones dropped."""
    sizes = np.bincount(labels)
    order = sorted(np.flatnonzero(sizes), key=lambda label: (-sizes[label], label))
    renumber = np.zeros(len(sizes), dtype=np.int64)
    renumber[order] = np.arange(len(order))
    return renumber[labels]


def _sample(n: int, seed: int) -> np.ndarray:
    """At most SAMPLE of n positions, seeded, in order."""
    if n <= SAMPLE:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=SAMPLE, replace=False))


def _dense(rows, seed: int = SEED) -> np.ndarray:
    """Unit rows to cluster: dense rows as they are (hybrid rows: their dense part); sparse (tf-idf) rows in the
    SVD_DIMENSIONS leading latent dimensions of a sample's terms that two of its items share, so the basis stays
    small. The latent basis comes from the eigenvectors of the sample's Gram matrix (LAPACK's eigh), not ARPACK:
    the same rows give the same clusters on every run (ARPACK's ±4e-7 drifts flipped near-tied clusters)."""
    rows = dense_part(rows)  # hybrid rows (features/base.py): their MiniLM part
    if not _is_sparse(rows):
        return _unit(np.asarray(rows, dtype=np.float32))
    from scipy import sparse

    rows = sparse.csr_matrix(rows, dtype=np.float32)
    n = rows.shape[0]
    sample = rows[_sample(n, seed)]
    shared = np.flatnonzero(np.bincount(sample.indices, minlength=rows.shape[1]) >= 2)
    rank = min(SVD_DIMENSIONS, sample.shape[0] - 1, len(shared) - 1)
    if rank < 1:
        return _unit(rows[:, shared].toarray())
    sample = sample[:, shared]
    values, vectors = np.linalg.eigh((sample @ sample.T).toarray().astype(np.float64))  # ascending
    top = np.argsort(-values, kind="stable")[:rank]
    top = top[values[top] > 1e-12]
    basis = np.asarray(sample.T @ (vectors[:, top] / np.sqrt(values[top])))  # terms × rank: the right singular vectors
    return _unit(np.asarray(rows[:, shared] @ basis, dtype=np.float32))


def _is_sparse(rows) -> bool:
    """Whether rows are a scipy sparse matrix, without importing scipy (0.4 s) for dense rows: no sparse
    matrix exists before scipy.sparse is imported."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(rows)


def _unit(points: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(points, axis=1, keepdims=True)
    return points / np.maximum(norms, 1e-12)
