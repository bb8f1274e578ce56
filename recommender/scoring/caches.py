"""What a ranking may reuse between runs, handed to the Recommender from outside for one call (the pipeline
builds it: recommender/pipeline/build.py); None, as in the tests of the maths, computes everything.

The signals never look a cache up themselves: they take `corpus_memo` (arrays derived from the corpus alone,
kept beside a prepared corpus) and the kept library state (`library_state()`: a fresh
incremental.IncrementalScorer for this corpus and aggregation, its file in the store) as values of this one
object. `keep_encoder`: leave a neural encoder loaded after the library's rows are made (batch scoring
reuses it for the next user); otherwise it is freed before scoring, so its buffers never add to the peak.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Memo = Callable[[str, Callable[[], dict[str, np.ndarray]]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class ScoringCaches:
    corpus_memo: Memo | None = None
    library_state: Callable[[], object] | None = None
    library_memo: Memo | None = None  # arrays derived from the library alone (its interests), by their key
    keep_encoder: bool = False


NO_CACHES = ScoringCaches()
