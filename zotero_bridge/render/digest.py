"""A reading list as an e-mail digest: a plain-text part and an HTML part with the same papers, reasons and links.

The HTML part is the reading list's own HTML page (zotero_bridge/render/html_page.py: escaped, http(s) links
only); the plain part lists each paper with its link and every reason line the other formats show.
"""

from __future__ import annotations

from collections.abc import Sequence

from recommender.formats.output import safe_text
from recommender.items import Recommendation
from recommender.words import capitalised, more_reasons
from zotero_bridge.render.safe import safe_url


def why_lines(rec: Recommendation) -> list[str]:
    """Every reason a paper was picked, one line each, as the Markdown list words them."""
    from zotero_bridge.render.reading_list import reasons_text

    lines = [f"Because you saved: {reasons_text(rec)}"] if rec.reasons else []
    return lines + [capitalised(line) for line in more_reasons(rec)]


def digest_text(recs: Sequence[Recommendation], title: str, header: Sequence[tuple[str, str]] = ()) -> str:
    """The plain-text part: a title, the header lines, then each paper with its authors, link and reasons."""
    lines = [safe_text(title), "=" * min(72, len(title)), ""]
    lines += [f"{name}: {safe_text(value)}" for name, value in header]
    if header:
        lines.append("")
    if not recs:
        lines.append("No new papers today.")
    for rec in recs:
        paper = rec.paper
        lines.append(f"{rec.rank}. {safe_text(paper.title)}")
        if paper.authors:
            lines.append(f"   {safe_text(', '.join(paper.authors[:6]))}{' et al.' if len(paper.authors) > 6 else ''}")
        link = safe_url(paper.url)
        if link:
            lines.append(f"   {link}")
        lines += [f"   {safe_text(line)}" for line in why_lines(rec)]
        lines.append("")
    return "\n".join(lines) + "\n"
