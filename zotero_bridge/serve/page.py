"""The triage page's HTML: the reading list's paper (title, authors, venue, links, abstract folded, match and
reasons) with the four actions, every corpus and library text escaped and every link http(s) only by the
reading list's own rules (render/safe.py, render/html_page.py). No inline script or style: the page's
behaviour and look are its own files (static/), as its Content-Security-Policy demands."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

from recommender.items import Recommendation
from recommender.words import capitalised, more_reasons
from zotero_bridge.render.html_page import AUTHORS_SHOWN, paper_links, presentation
from zotero_bridge.render.safe import html_link, html_text

BUTTONS = (("save", "Save", "s"), ("not", "Not for me", "x"), ("more", "More like this", "m"), ("later", "Later", "l"))


def paper_card(rec: Recommendation, position: int, csrf: str, interest: str = "", source: str = "") -> str:
    paper = rec.paper
    authors = list(paper.authors[:AUTHORS_SHOWN]) + (["et al."] if len(paper.authors) > AUTHORS_SHOWN else [])
    shown = (paper.venue, presentation(paper), str(paper.year or ""))
    tags = [f'<span class="tag">{html_text(t)}</span>' for t in shown if t]
    if rec.match is not None:
        tags.append(f'<span class="match"><meter min="0" max="100" value="{int(rec.match)}"></meter> '
                    f'{int(rec.match)}% match' + (' (weak)' if rec.weak else '') + '</span>')
    if rec.interest:
        tags.append(f'<span class="tag interest">{html_text(rec.interest)}</span>')
    abstract = (f"<details><summary>Abstract</summary><p>{html_text(paper.abstract)}</p></details>"
                if paper.abstract else "")
    reasons = "".join(f'<li>{html_text(r.item_title)} <span class="sim">({r.similarity:.2f})</span></li>'
                      for r in rec.reasons)
    also = "".join(f"<li>{html_text(capitalised(line))}</li>" for line in (*more_reasons(rec), *rec.feedback))
    why = (f'<div class="why">Because you saved:<ul>{reasons}</ul></div>' if reasons else "") + \
          (f'<ul class="why also">{also}</ul>' if also else "")
    hidden = "".join(f'<input type="hidden" name="{name}" value="{html_text(value)}">'
                     for name, value in (("csrf", csrf), ("id", paper.id), ("interest", interest), ("source", source)))
    buttons = "".join(f'<button type="submit" name="action" value="{value}" class="act {value}" '
                      f'aria-keyshortcuts="{key}" title="{label} ({key})">{label} <kbd>{key}</kbd></button>'
                      for value, label, key in BUTTONS)
    return (f'<li class="paper" data-id="{html_text(paper.id)}" id="p{position}">'
            f'<div class="rank">{position}</div><div class="body">'
            f'<h2>{html_link(paper.title, paper.url)}</h2>'
            + (f'<p class="authors">{html_text(", ".join(authors))}</p>' if authors else "")
            + f'<div class="tags">{"".join(tags)}</div>{paper_links(paper)}{abstract}{why}'
            f'<form class="actions" method="post" action="/act">{hidden}{buttons}</form></div></li>')


def paper_list(recs: Sequence[Recommendation], csrf: str, interest: str = "", source: str = "") -> str:
    """The list's items (what the script puts back after each click), or one line when nothing is left."""
    if not recs:
        return '<li class="empty">No papers left to show here. Change the filter, or come back tomorrow.</li>'
    return "\n".join(paper_card(rec, position, csrf, interest, source) for position, rec in enumerate(recs, start=1))


def _choice(name: str, label: str, options: Sequence[str], chosen: str) -> str:
    every = f'<option value="">Every {label.lower()}</option>'
    listed = "".join(f'<option value="{html_text(o)}"{" selected" if o == chosen else ""}>{html_text(o)}</option>'
                     for o in options)
    return f'<label>{label} <select name="{name}">{every}{listed}</select></label>'


def render_page(recs: Sequence[Recommendation], *, csrf: str, library: str, corpus: str, interests: Sequence[str],
                sources: Sequence[str], interest: str = "", source: str = "", said: str = "") -> str:
    """The whole page: header (what is ranked, the filter), the list, the keys."""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<meta name="csrf" content="{html_text(csrf)}">'
        '<title>zotrec · reading list</title><link rel="stylesheet" href="/static/triage.css">'
        '<script src="/static/triage.js" defer></script></head>\n<body><main>'
        '<header><h1>Reading list</h1>'
        f'<p class="meta"><span>Library: <b>{html_text(library)}</b></span>'
        f'<span>Corpus: <b>{html_text(corpus)}</b></span></p>'
        f'<form class="filter" method="get" action="/">{_choice("interest", "Interest", interests, interest)}'
        f'{_choice("source", "Source", sources, source)}<button type="submit">Filter</button></form>'
        '<p class="keys">Keys: <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>s</kbd> save · <kbd>x</kbd> not for me · '
        '<kbd>m</kbd> more like this · <kbd>l</kbd> later</p>'
        f'<p id="said" role="status" aria-live="polite">{html_text(said)}</p></header>\n'
        f'<ol class="papers" id="papers">\n{paper_list(recs, csrf, interest, source)}\n</ol>'
        '<footer>zotrec on this computer only. Every click is remembered and moves the next list.</footer>'
        '</main></body></html>\n')


def filter_query(interest: str, source: str) -> str:
    """'?interest=…&source=…' for the page's address after a click without the script ('' when unfiltered)."""
    query = urlencode({key: value for key, value in (("interest", interest), ("source", source)) if value})
    return f"?{query}" if query else ""
