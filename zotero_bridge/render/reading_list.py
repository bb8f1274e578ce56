"""Recommendations and library listings → text: table, Markdown, HTML, JSON, JSON Lines, CSV."""

from __future__ import annotations

from recommender.errors import SettingError
import csv
import io
import json
import re
import shutil
from collections import Counter
from collections.abc import Sequence
from typing import Any

from recommender.formats.output import safe_json, safe_text, spreadsheet_safe
from recommender.formats.rows import REASON_COLUMNS, reason_keys
from recommender.items import LibraryItem, Recommendation, Skipped
from recommender.words import capitalised, more_reasons
from zotero_bridge.render.html_page import ListContext, render_html_page, steering
from zotero_bridge.render.safe import markdown_link, markdown_text, safe_url
from zotero_bridge.render.words import plural

READING_LIST_FORMATS = ("table", "markdown", "html", "json", "jsonl", "csv")
SCORE_DECIMALS = 4


def recommendation_row(rec: Recommendation) -> dict[str, Any]:
    """The stable JSON shape of one recommendation (other tools read it; add keys, never rename)."""
    paper = rec.paper
    row = {
        "rank": rec.rank,
        "id": paper.id,
        "title": paper.title,
        "score": round(rec.score, SCORE_DECIMALS),
        "match": rec.match,
        "authors": list(paper.authors),
        "year": paper.year,
        "venue": paper.venue,
        "url": paper.url or None,
        "doi": paper.doi or None,
        "abstract": paper.abstract,
        "title_derived": paper.title_derived,
        "reasons": [
            {"key": r.item_key, "title": r.item_title, "similarity": round(r.similarity, SCORE_DECIMALS)}
            for r in rec.reasons
        ],
    }
    if rec.feedback:  # only when the user's feedback moved this paper: other rows keep their old bytes
        row["feedback"] = list(rec.feedback)
    if rec.weak:  # only below the weak bar (recommender/scoring/match.py, is_weak), like "feedback"
        row["weak"] = True
    row.update(reason_keys(rec))  # interest, author_reasons, steer_reasons: only when present
    return row


def match_text(rec: Recommendation) -> str:
    """'98% match', '28% match (weak)' below the weak bar, or '' for a paper without reasons."""
    return "" if rec.match is None else f"{rec.match}% match" + (" (weak)" if rec.weak else "")


def reasons_text(rec: Recommendation) -> str:
    return "; ".join(f"{r.item_title} ({r.similarity:.2f})" for r in rec.reasons)


def render_recommendations(recs: Sequence[Recommendation], fmt: str, *, title: str = "Reading list",
                           context: ListContext | None = None, width: int | None = None,
                           hyperlinks: bool = False) -> str:
    """Render a ranked list in `fmt` (one of READING_LIST_FORMATS); the table fits `width` columns
    (default: the terminal's, or $COLUMNS) and, with `hyperlinks` (a terminal: `stdout_hyperlinks`), its links
    are OSC 8 hyperlinks to the whole URL."""
    if fmt == "json":
        return safe_json(json.dumps([recommendation_row(r) for r in recs], ensure_ascii=False, indent=2) + "\n")
    if fmt == "jsonl":
        return safe_json("".join(json.dumps(recommendation_row(r), ensure_ascii=False) + "\n" for r in recs))
    if fmt == "csv":
        return _csv(recs)
    if fmt == "markdown":
        return _markdown(recs, title, context)
    if fmt == "html":
        return render_html_page(recs, title, context)
    if fmt == "table":
        return _table(recs, title, width, context, hyperlinks)
    raise SettingError(f"unknown format '{fmt}'")


def feedback_text(rec: Recommendation) -> str:
    """What the user's feedback did to this paper ('like 'X', which you kept; …'), one line."""
    return "; ".join(rec.feedback)


def _csv(recs: Sequence[Recommendation]) -> str:
    """A `match` column (after `score`) only when some paper has one; `feedback`, `interest`, `author_reasons` and
    `steer_reasons` columns appended, each only when some paper carries it, so lists made without them keep the
    columns (and bytes) they always had."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    with_match = any(rec.match is not None for rec in recs)
    extra = [(name, cell) for name, cell in (("feedback", feedback_text), *REASON_COLUMNS)
             if any(cell(rec) for rec in recs)]
    writer.writerow(["rank", "id", "title", "score"] + (["match"] if with_match else [])
                    + ["authors", "year", "url", "reasons"] + [name for name, _ in extra])
    for rec in recs:
        row = recommendation_row(rec)
        match = ["" if rec.match is None else rec.match] if with_match else []
        cells = [row["rank"], row["id"], row["title"], row["score"], *match, "; ".join(row["authors"]),
                 row["year"] or "", row["url"] or "", reasons_text(rec)]
        writer.writerow([spreadsheet_safe(cell) for cell in cells + [cell(rec) for _, cell in extra]])
    return out.getvalue()


def _authors_short(authors: Sequence[str], limit: int = 3) -> str:
    return ", ".join(authors[:limit]) + (" et al." if len(authors) > limit else "")


def _markdown(recs: Sequence[Recommendation], title: str, context: ListContext | None = None) -> str:
    lines = [f"# {markdown_text(title)}", ""]
    steered = steering(context or ListContext())
    if steered:  # only issue 25's lines: a list made without them keeps its old header
        lines += [f"- {name}: {markdown_text(value)}" for name, value in steered] + [""]
    for rec in recs:
        paper = rec.paper
        match = f"{match_text(rec)} · " if rec.match is not None else ""
        lines.append(f"{rec.rank}. **{markdown_link(paper.title, paper.url)}** — {match}score {rec.score:.3f}")
        if paper.authors:
            lines.append(f"   {markdown_text(_authors_short(paper.authors))}")
        if rec.reasons:
            lines.append(f"   Because you saved: {markdown_text(reasons_text(rec))}")
        lines += [f"   {markdown_text(capitalised(line))}" for line in more_reasons(rec)]
        if rec.feedback:
            lines.append(f"   Feedback: {markdown_text(feedback_text(rec))}")
        lines.append("")
    return "\n".join(lines)


def _rich_to_text(renderable: Any, width: int | None = None, hyperlinks: bool = False) -> str:
    """Plain text; with `hyperlinks`, a terminal's text (OSC 8 links, and the bold and italic that come with it)."""
    from rich.console import Console

    width = width or terminal_width()
    console = Console(file=io.StringIO(), width=max(40, width), force_terminal=hyperlinks, legacy_windows=False,
                      color_system="standard" if hyperlinks else None)
    console.print(renderable)
    return console.file.getvalue()


def stdout_hyperlinks() -> bool:
    """Whether stdout is a terminal to send OSC 8 hyperlinks to (rich's test: a tty, not TERM=dumb, not the old
    Windows console); a terminal without OSC 8 ignores them and shows the short link text."""
    from rich.console import Console

    console = Console()
    return console.is_terminal and not console.is_dumb_terminal and not console.legacy_windows


def terminal_width() -> int:
    """$COLUMNS when it is a positive whole number (a bad value is one warning naming it), else the terminal's."""
    from recommender.environment import positive_number

    return int(positive_number("COLUMNS", shutil.get_terminal_size(fallback=(100, 24)).columns, int))


def _table(recs: Sequence[Recommendation], title: str, width: int | None, context: ListContext | None = None,
           hyperlinks: bool = False) -> str:
    from rich.markup import escape
    from rich.style import Style
    from rich.table import Table
    from rich.text import Text

    width = max(40, width or terminal_width())
    heading = "\n".join([_plain(title)] + [f"{name}: {_plain(value)}" for name, value in steering(context or ListContext())])
    table = Table(title=escape(heading), show_lines=True)
    numbers = [max(1, len(str(max((rec.rank for rec in recs), default=1)))), len("match"),
               max((len(f"{rec.score:.3f}") for rec in recs), default=5)]
    for name, number_width in zip(("#", "match", "score"), numbers, strict=True):
        table.add_column(name, justify="right", no_wrap=True, width=number_width)
    paper_width, because = _text_widths(width - (1 + 3 * 5) - sum(numbers), recs)
    table.add_column("paper", overflow="fold", width=paper_width)
    table.add_column("because you saved", overflow="fold", width=because)
    for rec in recs:
        paper = rec.paper
        link = Style(link=safe_url(paper.url)) if hyperlinks and safe_url(paper.url) else None
        body = Text(_plain(paper.title), style=link or "")
        body.append(f"\n{_plain(_authors_short(paper.authors))}" if paper.authors else "")
        if paper.url:
            body.append("\n")
            body.append(_plain(_link_text(paper.url, paper_width)), style=link or "")
        why = [f"{_plain(r.item_title)} ({r.similarity:.2f})" for r in rec.reasons]
        why += [_plain(line) for line in more_reasons(rec)]
        why += [f"feedback: {_plain(line)}" for line in rec.feedback]
        match = Text("" if rec.match is None else f"{rec.match}%" + ("*" if rec.weak else ""),
                     style="dim" if rec.weak else "")  # * and dimmed: below the weak bar ("Weak match" above)
        table.add_row(str(rec.rank), match, f"{rec.score:.3f}", body, Text("\n".join(why)))
    return _rich_to_text(table, width, hyperlinks)


def _text_widths(room: int, recs: Sequence[Recommendation]) -> tuple[int, int]:
    """The paper and reason columns share `room` 3:2, the paper column never narrower than its longest link
    (so a link is never cut mid-id) while the reasons keep at least 12 columns."""
    longest_link = max((len(_plain(_short_url(rec.paper.url))) for rec in recs), default=0)
    paper = max(room * 3 // 5, min(longest_link, room - 12))
    return max(10, paper), max(8, room - paper)


def _link_text(url: str, room: int) -> str:
    """The link as `_short_url` writes it when it fits `room` columns, else a short id that does
    ('OpenReview GUDnecJdJU'): a link folded mid-id is neither readable nor clickable."""
    short = _short_url(url)
    if len(short) <= room:
        return short
    match = re.search(r"openreview\.net/(?:forum|pdf)\?id=([^&#\s]+)", url)
    if match:
        return f"OpenReview {match.group(1)}"
    host, _, rest = short.partition("/")
    tail = [part for part in re.split(r"[/?&=#]", rest) if part][-1:]
    # 'icml.cc 46523', else the id alone ('han25a.html'), else the site: whole words, never a piece of one
    return next((label for label in (" ".join([host, *tail]), *tail) if len(label) <= room), host)


def _short_url(url: str) -> str:
    """A link without its scheme: 'openreview.net/forum?id=…' fits a narrow column unbroken (terminals
    still recognise it), where the full https:// form would be folded over two lines."""
    for prefix in ("https://", "http://"):
        if url.startswith(prefix):
            return url[len(prefix):].removeprefix("www.")
    return url


def _plain(text: str) -> str:
    """Terminal-safe: no control characters or bidi overrides (an escape sequence in a title must not reach
    the terminal)."""
    return safe_text(text or "")


def library_row(item: LibraryItem) -> dict[str, Any]:
    return {
        "key": item.key,
        "type": item.item_type,
        "title": item.title,
        "creators": [c.name for c in item.creators],
        "year": item.year,
        "doi": item.doi or None,
        "url": item.url or None,
        "date_added": item.date_added or None,
        "tags": list(item.tags),
        "collections": list(item.collections),
        "has_abstract": bool(item.abstract),
    }


def skipped_summary(skipped: Sequence[Skipped]) -> dict[str, int]:
    """Counts of skipped entries by reason ('note': 3, 'in the trash': 1, …)."""
    return dict(Counter("unparseable entry" if s.unreadable else s.reason for s in skipped))


SKIPPED_KINDS_SHOWN = 3  # a summary line names this many kinds of skipped entry, then counts the rest
SKIPPED_REASON_CHARS = 60  # a reason (an item type a file made up, say) is cut there in the summary


def skipped_text(skipped: Sequence[Skipped]) -> str:
    """The skipped entries on one short line: '3 note, 1 in the trash', or with many kinds (200 made-up item
    types made one 30 KB line) the commonest few and 'and 197 entries of 197 other kinds'."""
    counts = list(skipped_summary(skipped).items())
    if len(counts) > SKIPPED_KINDS_SHOWN:
        counts.sort(key=lambda pair: -pair[1])  # stable: among equals, the order they came in
    parts = [f"{n} {reason if len(reason) <= SKIPPED_REASON_CHARS else reason[:SKIPPED_REASON_CHARS - 1] + '…'}"
             for reason, n in counts[:SKIPPED_KINDS_SHOWN]]
    rest = counts[SKIPPED_KINDS_SHOWN:]
    if rest:
        parts.append(f"and {plural(sum(n for _, n in rest), 'entry', 'entries')} of "
                     f"{plural(len(rest), 'other kind')}")
    return ", ".join(parts)


def render_library(items: Sequence[LibraryItem], skipped: Sequence[Skipped], fmt: str,
                   width: int | None = None) -> str:
    """What was read, as JSON or a table `width` columns wide (default: the terminal's, $COLUMNS, or a fixed
    width on a pipe)."""
    if fmt == "json":
        payload = {
            "items": [library_row(i) for i in items],
            "skipped": [{"where": s.where, "reason": s.reason} for s in skipped],
            "summary": {"items": len(items), "skipped": skipped_summary(skipped)},
        }
        return safe_json(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    from zotero_bridge.render.library_table import render_table

    text = render_table(items, plural(len(items), "item"), _plain, width)
    text += "Skipped: " + _plain(skipped_text(skipped) or "nothing") + "\n"
    return text
