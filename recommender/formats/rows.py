"""What issue 25's reasons add to a row: JSON keys and CSV cells, one shape for the reading list and the score
files. Each is there only when the paper has it, so a list made without them keeps its old bytes."""

from __future__ import annotations

from typing import Any

from recommender.items import Recommendation
from recommender.words import author_reason, steer_reason

DECIMALS = 4  # the similarity rounding of every zotrec row


def reason_keys(rec: Recommendation) -> dict[str, Any]:
    """`interest`, `author_reasons` [{name, library_items}] and `steer_reasons` [{text, similarity}], each only
    when present (added after the older keys: a JSON row gains keys, never renames one)."""
    keys: dict[str, Any] = {}
    if rec.interest:
        keys["interest"] = rec.interest
    if rec.author_reasons:
        keys["author_reasons"] = [{"name": a.name, "library_items": a.library_items} for a in rec.author_reasons]
    if rec.steer_reasons:
        keys["steer_reasons"] = [{"text": s.text, "similarity": round(s.similarity, DECIMALS)}
                                 for s in rec.steer_reasons]
    return keys


def author_reasons_text(rec: Recommendation) -> str:
    """'by Jane Doe — 4 papers in your library; by …', one CSV cell."""
    return "; ".join(author_reason(reason) for reason in rec.author_reasons)


def steer_reasons_text(rec: Recommendation) -> str:
    """'matches your preference "…" (0.62); …', one CSV cell."""
    return "; ".join(steer_reason(reason) for reason in rec.steer_reasons)


REASON_COLUMNS = (("interest", lambda rec: rec.interest), ("author_reasons", author_reasons_text),
                  ("steer_reasons", steer_reasons_text))  # (CSV column, its cell) in the order files append them
