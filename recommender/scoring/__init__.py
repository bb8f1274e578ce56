"""Scoring: feature rows → per-paper scores (aggregation over the library's items, the hybrid
blend) → ranked Recommendations with reasons (ranking). Steps 3–4 of the pipeline. Imports
features and the vocabulary; never corpus fetching, batch or evaluation.
"""
