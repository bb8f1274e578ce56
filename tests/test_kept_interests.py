"""The library's interests kept by its digest (recommender/scoring/kept_interests.py): a run on the same library
gets the interests a fresh clustering gives, without clustering again (issue 38)."""

from __future__ import annotations

import numpy as np
import pytest

from recommender.pipeline.build import _library_memo
from recommender.scoring import kept_interests as kept_module
from recommender.scoring.interests import library_interests
from recommender.scoring.kept_interests import kept_interests
from tests.test_interests import blobs


@pytest.fixture
def clusterings(monkeypatch, tmp_path):
    """How often library_interests ran, the kept values in this test's cache folder."""
    monkeypatch.setenv("ZOTREC_CACHE_DIR", str(tmp_path / "cache"))
    calls = []
    real = kept_module.library_interests

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(kept_module, "library_interests", counted)
    return calls


def same(first, second) -> bool:
    return (np.array_equal(first.labels, second.labels) and first.labels.dtype == second.labels.dtype
            and first.names == second.names and first.source == second.source)


@pytest.mark.parametrize("filed", [False, True])
def test_kept_interests_equal_fresh_ones_and_skip_the_clustering(clusterings, filed):
    rows, _ = blobs([14, 9, 7])
    rows = rows.astype(np.float32)
    titles = [f"graph neural networks {n}" if n % 3 else f"protein folding {n}" for n in range(len(rows))]
    collections = [["Lab/Graphs" if n % 2 else "Lab/Proteins"] for n in range(len(rows))] if filed else \
        [[] for _ in rows]
    fresh = library_interests(collections, titles, rows)
    first = kept_interests(collections, titles, rows, _library_memo)
    again = kept_interests(collections, titles, rows, _library_memo)
    assert len(clusterings) == 1 and same(first, fresh) and same(again, fresh)
    assert fresh.source == ("collections" if filed else "clusters")
    other = rows.copy()
    other[0, 0] += 0.5  # another library: clustered afresh
    kept_interests(collections, titles, other, _library_memo)
    assert len(clusterings) == 2


def test_without_a_memo_or_on_sparse_rows_nothing_is_kept(clusterings):
    from scipy import sparse

    rows, _ = blobs([8, 8])
    titles, collections = [f"t{n}" for n in range(len(rows))], [[] for _ in rows]
    for given, memo in ((rows, None), (sparse.csr_matrix(rows), _library_memo), (sparse.csr_matrix(rows), _library_memo)):
        kept_interests(collections, titles, given, memo)
    assert len(clusterings) == 3
