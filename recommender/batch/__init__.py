"""Batch scoring: many libraries against one corpus, resumable CSV/JSONL output, and the Dask runner.

Sits on top of scoring (one Recommender for all users); nothing below imports it.
"""
