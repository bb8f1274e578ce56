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
from recommender.scoring.interest_names import cluster_names
from recommender.scoring.linkage import average_linkage, cuts

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
_PATH_SEPARATOR = re.compile(r"(?<!\\)/")


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
