"""Scoring: feature rows → per-paper scores → ranked Recommendations with reasons.

`ranking.py` holds the Recommender, the one scoring path; each signal it fuses is a function of plain
arrays: the content topK (`aggregation.py`), the tf-idf topK (`aggregation.sparse_top_values`), the
per-user linear model (`learned.py`, in the collaborative adapter's space of `adapter.py` when the
model says so) and the collaborative score; `fusion.py` weighs them. Caches are kept apart: the
prepared corpus (`prepared.py`) and the kept library state (`incremental.py`). Imports features and
the vocabulary; never corpus fetching, batch or evaluation.
"""
