"""Average-linkage clustering and its cut into at most k clusters, step for step as scipy computes them
(scipy.cluster.hierarchy.linkage(method="average") and fcluster(criterion="maxclust")), in numpy.

Why not scipy.cluster itself: importing it cost a warm run more than all the clustering (docs/performance.md,
issue 31). The same nearest-neighbour chain, Lance–Williams update in float64, tie rules, stable sort,
relabelling, cut and cluster numbering: tests/test_linkage.py checks the results equal scipy's exactly.
"""

from __future__ import annotations

import numpy as np


def average_linkage(distances: np.ndarray) -> np.ndarray:
    """The (n−1) × 4 linkage matrix of a square distance matrix (scipy's layout and labels).

    Only the upper triangle is read, as scipy's squareform does (a BLAS product A·Aᵀ need not be symmetric
    to the last bit), and it is kept as scipy keeps it: condensed, in float64 (half a square matrix)."""
    n = distances.shape[0]
    starts = np.zeros(n, dtype=np.int64)  # where row i's pairs (i, j > i) begin in the condensed form
    starts[1:] = np.cumsum(np.arange(n - 1, 0, -1))
    packed = np.empty(n * (n - 1) // 2)
    for i in range(n - 1):
        packed[starts[i]:starts[i] + n - i - 1] = distances[i, i + 1:]
    del distances  # a caller that passed a temporary gets its memory back now
    above = starts - np.arange(n) - 1  # pair (j, x) for j < x sits at above[j] + x

    def row(x: int) -> np.ndarray:
        """Cluster x's distances to every cluster (inf to itself and to merged-away ones)."""
        values = np.empty(n)
        np.take(packed, above[:x] + x, out=values[:x])
        values[x] = np.inf
        values[x + 1:] = packed[starts[x]:starts[x] + n - x - 1]
        return values

    def store(x: int, values: np.ndarray) -> None:
        packed[above[:x] + x] = values[:x]
        packed[starts[x]:starts[x] + n - x - 1] = values[x + 1:]

    size = np.ones(n, dtype=np.int64)
    merges = np.empty((n - 1, 4))
    chain: list[int] = []
    for k in range(n - 1):
        if not chain:
            chain.append(int(np.flatnonzero(size > 0)[0]))
        while True:  # follow nearest neighbours until two are each other's nearest
            x = chain[-1]
            distances_x = row(x)
            y = int(np.argmin(distances_x))  # the first of equal minima, as scipy's scan
            if len(chain) > 1:
                previous = chain[-2]
                if not distances_x[y] < distances_x[previous]:  # the previous link wins a tie (no cycles)
                    y = previous
                    break
            chain.append(y)
        current = distances_x[y]
        del chain[-2:]
        x, y = min(x, y), max(x, y)
        nx, ny = int(size[x]), int(size[y])
        merges[k] = (x, y, current, nx + ny)
        size[x], size[y] = 0, nx + ny
        # the Lance–Williams update on whole rows: merged-away clusters (and the diagonal) are inf and stay so
        store(y, (nx * row(x) + ny * row(y)) / (nx + ny))
        store(x, np.full(n, np.inf))
    merges = merges[np.argsort(merges[:, 2], kind="mergesort")]
    _relabel(merges, n)
    return merges


def _relabel(merges: np.ndarray, n: int) -> None:
    """Children named by the clusters they hold after the sort (scipy's union-find labelling), in place."""
    parent = list(range(2 * n - 1))
    sizes = [1] * (2 * n - 1)

    def find(node: int) -> int:
        root = node
        while parent[root] != root:
            root = parent[root]
        while parent[node] != root:
            parent[node], node = root, parent[node]
        return root

    for step in range(n - 1):
        a, b = find(int(merges[step, 0])), find(int(merges[step, 1]))
        merges[step, 0], merges[step, 1] = min(a, b), max(a, b)
        label = n + step
        parent[a] = parent[b] = label
        sizes[label] = sizes[a] + sizes[b]
        merges[step, 3] = sizes[label]


def cut_into(merges: np.ndarray, max_clusters: int) -> np.ndarray:
    """Each observation's flat cluster, 1 … k with k ≤ max_clusters, as fcluster(criterion="maxclust")."""
    return next(cuts(merges, [max_clusters]))


def cuts(merges: np.ndarray, cluster_counts):
    """cut_into for each of `cluster_counts`, the tree walked once for them all."""
    n = merges.shape[0] + 1
    times = _visiting_times(merges, n)
    parents = np.full(2 * n - 1, n - 1, dtype=np.int64)  # each node's merge index (the root's: past the end)
    parents[merges[:, :2].astype(np.int64)] = np.arange(n - 1)[:, None]
    heights = np.maximum.accumulate(merges[:, 2])  # sorted merges: each one's highest distance below it
    for max_clusters in cluster_counts:
        if max_clusters >= n:
            yield np.arange(1, n + 1, dtype=np.int32)
            continue
        lower, upper = -1, n - 1
        while upper - lower > 1:  # the lowest threshold with at most max_clusters clusters
            middle = (lower + upper) >> 1
            clusters = n - int(np.count_nonzero(heights <= heights[middle]))
            lower, upper = (middle, upper) if clusters > max_clusters else (lower, middle)
        below = int(np.count_nonzero(heights <= heights[upper]))  # the merges inside clusters: a prefix
        # a cluster starts at a node inside the cut whose parent is not (a leaf: whose parent is not);
        # scipy numbers the clusters in the order its walk meets those starts
        nodes = np.arange(2 * n - 1)
        starts = (parents >= below) & ((nodes < n) | (nodes - n < below))
        first = np.sort(times[starts])
        yield (np.searchsorted(first, times[:n], side="right")).astype(np.int32)


def _visiting_times(merges: np.ndarray, n: int) -> np.ndarray:
    """When scipy's depth-first walk (fcluster's) meets each node: an inner node on its first visit, a leaf
    when its parent numbers its leaf children (after the parent's inner children); one clock for both."""
    children = merges[:, :2].astype(np.int64).tolist()
    times = np.zeros(2 * n - 1, dtype=np.int64)
    visited = bytearray(2 * n - 1)
    stack, clock = [2 * n - 2], 0
    while stack:
        node = stack[-1]
        left, right = children[node - n]
        if not visited[node]:
            visited[node] = 1
            times[node], clock = clock, clock + 1
        if left >= n and not visited[left]:
            stack.append(left)
            continue
        if right >= n and not visited[right]:
            stack.append(right)
            continue
        for leaf in (left, right):
            if leaf < n:
                times[leaf], clock = clock, clock + 1
        stack.pop()
    return times
