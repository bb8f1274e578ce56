"""A reading list as an e-mail digest, written for a mailbox: a plain-text part and an HTML part, the same papers.

Both number the papers 1..N (the mail's own order, never the ranks before seen papers left) and put the
papers first: on a phone the first title is in the first screen, and the library, model and "where this comes
from" come below the list. The HTML is what mail clients render: inline styles only, no layout that needs
CSS (no tables, floats or flex), numbers in the text (not an <ol> whose own numbers would double), so it reads
right with styles off. The library is named, never its local path. Hints name only options the running
command has. Text goes through the shared safe functions (recommender/formats/output.safe_text,
render/safe.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath, PureWindowsPath

from recommender.formats.output import safe_text
from recommender.items import Recommendation
from recommender.words import capitalised, more_reasons, plural
from zotero_bridge.render.safe import html_link, html_text, safe_url

_SCHEME = re.compile(r"^(?:zotero:sqlite:|[A-Za-z][A-Za-z0-9+.-]+:(?![\\/]))")  # zotero:web, feed:…; not C:\\
FONT = "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
MUTED = "color:#555555"


def why_lines(rec: Recommendation) -> list[str]:
    """Every reason a paper was picked, one line each, as the Markdown list words them."""
    from zotero_bridge.render.reading_list import reasons_text

    lines = [f"Because you saved: {reasons_text(rec)}"] if rec.reasons else []
    weak = [f"Weak match ({rec.match}%): nothing in the library is close"] if rec.weak else []
    return lines + [capitalised(line) for line in more_reasons(rec)] + weak


def library_name(library: str) -> str:
    """A library (or corpus) as a mail or feed names it: a file by its name, never its folder
    ('zotero.sqlite'); a source named by a scheme ('zotero:web', 'arxiv:cs.LG', 'feed:https://…') as given."""
    names = []
    for part in (p.strip() for p in str(library or "").split(", ")):
        scheme = _SCHEME.match(part)
        prefix, rest = (part[:scheme.end()], part[scheme.end():]) if scheme else ("", part)
        if prefix == "zotero:sqlite:" or not prefix:  # a file, alone or in a zotero:sqlite:PATH
            rest = PureWindowsPath(rest).name if "\\" in rest else PurePath(rest).name or rest
        if part:
            names.append(prefix + rest)
    return ", ".join(names)


def digest_header(context, *, seen_hint: str = "") -> list[tuple[str, str]]:
    """The header lines below the list: what steered it, then where it comes from. `seen_hint` replaces the
    list's own "--include-seen" hint with the running command's words ('' drops the seen line's advice)."""
    from zotero_bridge.render.html_page import steering

    lines = []
    for name, value in steering(context):
        if name == "Seen":
            count = context.seen_left_out
            value = f"{plural(count, 'paper')} shown on an earlier day left out" + (f" ({seen_hint})" if seen_hint
                                                                                     else "")
        lines.append((name, value))
    where = [("Library", library_name(context.library)), ("Corpus", library_name(context.corpus)),
             ("Features", context.features), ("Model", context.model)]
    return lines + [(name, value) for name, value in where if value]


def digest_text(recs: Sequence[Recommendation], title: str, header: Sequence[tuple[str, str]] = ()) -> str:
    """The plain-text part: a title, each paper numbered 1..N with its authors, link and reasons, then the
    header lines ("where this comes from")."""
    lines = [safe_text(title), "=" * min(72, len(title)), ""]
    if not recs:
        lines += ["No new papers today.", ""]
    for number, rec in enumerate(recs, 1):
        paper = rec.paper
        lines.append(f"{number}. {safe_text(paper.title)}")
        if paper.authors:
            lines.append(f"   {_authors(paper.authors)}")
        link = safe_url(paper.url)
        if link:
            lines.append(f"   {link}")
        lines += [f"   {safe_text(line)}" for line in why_lines(rec)]
        lines.append("")
    if header:
        lines += ["--", "Where this comes from:"] + [f"{name}: {safe_text(value)}" for name, value in header]
    return "\n".join(lines).rstrip("\n") + "\n"


def digest_html(recs: Sequence[Recommendation], title: str, header: Sequence[tuple[str, str]] = (),
                subtitle: str = "") -> str:
    """The HTML part: one narrow column, inline styles, the papers first (numbered in the text), then "where
    this comes from". Every text and link goes through render/safe.py."""
    body = [f'<h1 style="{FONT};font-size:20px;line-height:1.25;margin:0 0 4px 0">{html_text(title)}</h1>']
    count = f"{plural(len(recs), 'paper')}" + (f" · {subtitle}" if subtitle else "")
    body.append(f'<p style="{FONT};{MUTED};font-size:14px;margin:0 0 16px 0">{html_text(count)}</p>')
    if not recs:
        body.append(f'<p style="{FONT};font-size:16px">No new papers today.</p>')
    for number, rec in enumerate(recs, 1):
        body.append(_paper_html(number, rec))
    if header:
        rows = "".join(f"<br>{html_text(name)}: {html_text(value)}" for name, value in header)
        body.append('<hr style="border:0;border-top:1px solid #dddddd;margin:24px 0 12px 0">'
                    f'<p style="{FONT};{MUTED};font-size:13px;line-height:1.5;margin:0">'
                    f"<strong>Where this comes from</strong>{rows}</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html_text(title)}</title></head>\n"
            f'<body style="margin:0;padding:12px;background:#ffffff;color:#1a1a1a">\n'
            f'<div style="max-width:640px;margin:0 auto">\n' + "\n".join(body) + "\n</div>\n</body></html>\n")


def _paper_html(number: int, rec: Recommendation) -> str:
    paper = rec.paper
    link = html_link(paper.title, paper.url, style="color:#1a4d99;text-decoration:none")
    parts = [f'<p style="{FONT};font-size:17px;line-height:1.3;margin:0"><strong>{number}. {link}</strong></p>']
    if paper.authors:
        parts.append(f'<p style="{FONT};{MUTED};font-size:14px;margin:2px 0 0 0">{html_text(_authors(paper.authors))}'
                     "</p>")
    for line in why_lines(rec):
        parts.append(f'<p style="{FONT};font-size:14px;line-height:1.4;margin:4px 0 0 0">{html_text(line)}</p>')
    pdf = safe_url((paper.metadata or {}).get("pdf_url"))
    if pdf:
        parts.append(f'<p style="{FONT};font-size:14px;margin:4px 0 0 0">'
                     f'{html_link("PDF", pdf, style="color:#1a4d99")}</p>')
    return '<div style="margin:0 0 20px 0">' + "".join(parts) + "</div>"


def _authors(authors: Sequence[str]) -> str:
    return safe_text(", ".join(authors[:6])) + (" et al." if len(authors) > 6 else "")
