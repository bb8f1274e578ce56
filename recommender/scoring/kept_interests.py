"""A library's interests (interests.py) kept by the library's digest: its rows, titles and collections, so a
run on the same library (a day with nothing new) skips the clustering (docs/performance.md, issue 38).

`memo(key, compute)` is the caches' library memo (caches.py, kept by the store); the value is the Interests'
arrays, names as JSON. Sparse or hybrid rows are clustered every run (no digest of them is kept).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from recommender.scoring.interests import SEED, Interests, library_interests

FORMAT = 3  # 2: titles and collections digested as one JSON text (a tenth of the per-part walk's time);
# 3: as its UTF-8 bytes (a text is digested through its repr: 6 -> 1 ms for 10,000 titles)
_CODE = (Path(__file__).with_name("interests.py"), Path(__file__).with_name("interest_names.py"),
         Path(__file__).with_name("linkage.py"),
         Path(__file__).parents[1] / "features" / "base.py", Path(__file__).parents[1] / "scripts.py",
         Path(__file__))


def kept_interests(collections: Sequence[Sequence[str]], titles: Sequence[str], rows, memo=None, *,
                   seed: int = SEED) -> Interests:
    """library_interests(collections, titles, rows), through `memo` when the rows are one dense array."""
    if memo is None or not isinstance(rows, np.ndarray):
        return library_interests(collections, titles, rows, seed=seed)
    from recommender.store.keys import code_fingerprint, digest

    words = json.dumps([list(titles), [list(item) for item in collections]], ensure_ascii=False)
    key = digest(FORMAT, code_fingerprint(*_CODE), seed, rows, words.encode("utf-8", "surrogatepass"))
    computed: list[Interests] = []

    def compute() -> dict[str, np.ndarray]:
        computed.append(library_interests(collections, titles, rows, seed=seed))
        return _arrays(computed[0])

    arrays = memo(key, compute)
    if computed:
        return computed[0]
    try:
        return _interests(arrays, len(titles))
    except (KeyError, ValueError, TypeError):  # kept by another shape of this code: computed afresh
        return library_interests(collections, titles, rows, seed=seed)


def _arrays(interests: Interests) -> dict[str, np.ndarray]:
    text = json.dumps({"names": list(interests.names), "source": interests.source}, ensure_ascii=False)
    return {"labels": np.asarray(interests.labels, dtype=np.int64),
            "names": np.frombuffer(text.encode("utf-8"), dtype=np.uint8)}


def _interests(arrays: dict[str, np.ndarray], items: int) -> Interests:
    meta = json.loads(bytes(np.asarray(arrays["names"], dtype=np.uint8)).decode("utf-8"))
    labels = np.asarray(arrays["labels"], dtype=np.int64)
    names = tuple(str(name) for name in meta["names"])
    if labels.shape != (items,) or (items and not 0 <= labels.min() <= labels.max() < len(names)):
        raise ValueError("kept interests do not fit this library")
    return Interests(labels, names, str(meta["source"]))
