"""recommender/scoring/linkage.py gives scipy's average linkage and maxclust cut exactly (the merges, their
heights and sizes, and each observation's cluster number), on cosine distances like the interests' and on
rounded points full of ties."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from recommender.scoring.linkage import average_linkage, cut_into, cuts


def cosine_distances(points: np.ndarray) -> np.ndarray:
    """As interests.cluster_labels makes them: float32, clipped at 0, a zero diagonal (not symmetric to the
    bit)."""
    points = points / np.maximum(np.linalg.norm(points, axis=1, keepdims=True), 1e-12)
    distances = np.clip(1.0 - points @ points.T, 0.0, None)
    np.fill_diagonal(distances, 0.0)
    return distances


@pytest.mark.parametrize("seed", range(40))
def test_the_tree_and_every_cut_are_scipys(seed):
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(2, 90)), int(rng.integers(1, 9))
    points = rng.standard_normal((n, width)).astype(np.float32)
    if seed % 2:
        points = np.round(points)  # many equal distances: the tie rules must be scipy's too
    distances = cosine_distances(points)
    expected = linkage(squareform(distances, checks=False), method="average")
    tree = average_linkage(distances)
    assert np.array_equal(tree, expected)
    for k in range(1, 13):
        assert np.array_equal(cut_into(tree, k), fcluster(expected, k, criterion="maxclust"))


def test_a_sample_as_large_as_the_interests_take_is_scipys():
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((6, 48))
    points = (centres[rng.integers(0, 6, 1500)] + 0.8 * rng.standard_normal((1500, 48))).astype(np.float32)
    distances = cosine_distances(points)
    expected = linkage(squareform(distances, checks=False), method="average")
    tree = average_linkage(distances)
    assert np.array_equal(tree, expected)
    for k in range(2, 11):
        assert np.array_equal(cut_into(tree, k), fcluster(expected, k, criterion="maxclust"))


def test_cutting_one_tree_at_several_counts_gives_each_cut():
    rng = np.random.default_rng(11)
    distances = cosine_distances(rng.standard_normal((200, 6)).astype(np.float32))
    tree = average_linkage(distances)
    assert [cut.tolist() for cut in cuts(tree, [3, 1, 200, 7])] == [
        fcluster(tree, k, criterion="maxclust").tolist() for k in (3, 1, 200, 7)]
