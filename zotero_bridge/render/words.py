"""Counts in words: '1 item', '2 items' — one rule for every count zotrec prints (recommender/words.py, where
the score files and the Zotero notes can use it too)."""

from __future__ import annotations

from recommender.words import plural

__all__ = ["plural"]
