"""Counts and reasons in words: one phrasing for every output (table, Markdown, HTML, CSV, exports, score
files, Zotero notes), so a reason reads the same wherever the user meets it.

Here, not in zotero_bridge, because the score files (recommender/batch) and the Zotero notes (zotero_api, which
may import only this top room) use the same words. Escaping is each output's job: these are plain text.
"""

from __future__ import annotations

from recommender.items import AuthorReason, Recommendation, SteerReason


def plural(count: int, noun: str, many: str | None = None) -> str:
    """'1 paper', '3 papers', '0 papers'; `many` for a plural that is not noun + 's' ('1 library', '2 libraries')."""
    return f"{count} {noun if count == 1 else (many or noun + 's')}"


def days(value: float) -> str:
    """'1 day', '180 days', '0.5 days' (a half-life need not be whole)."""
    return f"{value:g} {'day' if value == 1 else 'days'}"


def interest_reason(interest: str) -> str:
    """'for your interest: normalizing flows'."""
    return f"for your interest: {interest}"


def author_reason(reason: AuthorReason) -> str:
    """'by Jane Doe — 4 papers in your library'."""
    return f"by {reason.name} — {plural(reason.library_items, 'paper')} in your library"


def steer_reason(reason: SteerReason) -> str:
    """'matches your preference "sparse attention" (0.62)'."""
    return f'matches your preference "{reason.text}" ({reason.similarity:.2f})'


def more_reasons(rec: Recommendation) -> list[str]:
    """Issue 25's reasons beyond the saved items, in the order every output shows them: the interest the paper
    serves, the authors the library has, the --prefer texts it matches. Empty for a list made without them."""
    return (([interest_reason(rec.interest)] if rec.interest else [])
            + [author_reason(reason) for reason in rec.author_reasons]
            + [steer_reason(reason) for reason in rec.steer_reasons])


def capitalised(text: str) -> str:
    """The first letter upper-cased, for a reason that starts a line ('By Jane Doe — …')."""
    return text[:1].upper() + text[1:]
