"""Where a ranking is made: one library (its items, the user's feedback, steering) against one corpus →
the ranked list with every reason. `zotrec reading-list`, `score`, `sync` (its ranking step) and `daily` call
`rank`; `evaluate` and `train` score with the same per-user signals (recommender/scoring/signals.py). The
shipped Recommender for a corpus is built by `build.shipped_recommender`. The caches live outside the maths:
a `ScoringCaches` value is handed in (none in tests of the maths)."""

from recommender.pipeline.rank import Library, RankOptions, rank

__all__ = ["Library", "RankOptions", "rank"]
