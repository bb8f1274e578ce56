"""The reading list as one self-contained HTML page (no external assets, no scripts): read on a phone or a desk.

Every string from the corpus or the library is escaped (`safe.html_text`); links are http(s) only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from recommender.items import Paper, Recommendation
from recommender.words import capitalised, days, more_reasons
from zotero_bridge.render.safe import html_link, html_text
from zotero_bridge.render.words import plural

TOPICS_SHOWN = 8
AUTHORS_SHOWN = 6

_STYLE = """
:root{--fg:#1d1d1f;--muted:#5f6368;--line:#e3e3e6;--accent:#9b1c1c;--bar:#c2410c;--bg:#fff;--card:#fafafa}
@media (prefers-color-scheme:dark){:root{--fg:#e8e8ea;--muted:#a0a4ab;--line:#33353a;--accent:#f08a8a;
--bar:#fb923c;--bg:#16171a;--card:#1e2024}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:60rem;margin:0 auto;padding:1.25rem}
header h1{font-size:1.6rem;margin:.2rem 0 .4rem;overflow-wrap:anywhere}
.meta{color:var(--muted);font-size:.9rem;margin:0;display:flex;flex-wrap:wrap;gap:.25rem 1.2rem}
.meta b{color:var(--fg);font-weight:600;overflow-wrap:anywhere}
.topics{margin:1rem 0 1.5rem;padding:.8rem 1rem;border:1px solid var(--line);border-radius:.5rem;background:var(--card)}
.topics h2{font-size:.95rem;margin:0 0 .5rem}
.topic{display:grid;grid-template-columns:minmax(0,1fr) 7rem 2rem;gap:.6rem;align-items:center;font-size:.85rem}
.topic span:first-child{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.track{display:block;height:.55rem;background:var(--line);border-radius:.3rem;overflow:hidden}
.fill{height:100%;background:var(--bar)}
ol.papers{list-style:none;padding:0;margin:0}
.paper{border-top:1px solid var(--line);padding:1rem 0;display:grid;grid-template-columns:2.6rem minmax(0,1fr);gap:.2rem .8rem}
.rank{font-size:1.3rem;font-weight:700;color:var(--muted);text-align:right}
.paper h2{font-size:1.08rem;margin:0;line-height:1.35;overflow-wrap:anywhere}
.paper h2 a{color:var(--accent);text-decoration:none}.paper h2 a:hover{text-decoration:underline}
.authors{margin:.2rem 0;color:var(--muted);font-size:.92rem;overflow-wrap:anywhere}
.tags{display:flex;flex-wrap:wrap;gap:.35rem;align-items:center;font-size:.8rem;margin:.3rem 0}
.tag{border:1px solid var(--line);border-radius:1rem;padding:0 .55rem;max-width:100%;overflow-wrap:anywhere}
.score{display:inline-flex;align-items:center;gap:.4rem;color:var(--muted)}
.score .track{display:inline-block;width:5rem}
.links a{margin-right:.8rem;font-size:.9rem;color:var(--accent)}
details{margin:.35rem 0}summary{cursor:pointer;color:var(--muted);font-size:.9rem}
details p{margin:.4rem 0;font-size:.95rem;overflow-wrap:anywhere}
.why{font-size:.9rem;margin:.3rem 0 0}.why ul{margin:.2rem 0;padding-left:1.1rem}
.why li{overflow-wrap:anywhere}.why ul.also{list-style:"→ ";margin-top:.35rem}
.meta.steer{margin-top:.3rem}.sim{color:var(--muted);font-variant-numeric:tabular-nums}
footer{color:var(--muted);font-size:.8rem;margin-top:2rem}
@media (max-width:30rem){main{padding:.8rem}.paper{grid-template-columns:1.8rem minmax(0,1fr)}
.rank{font-size:1.05rem}.topic{grid-template-columns:minmax(0,1fr) 4rem 1.6rem}
.topic span:first-child{white-space:normal;display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical}
.topic+.topic{margin-top:.3rem}}
"""

PAGE_STYLE = _STYLE  # the reading list's look, which zotrec serve's page builds on (serve/static/triage.css)


@dataclass
class ListContext:
    """What the list was ranked from, for the page header (all optional)."""

    library: str = ""
    corpus: str = ""
    features: str = ""
    model: str = ""
    created: str = field(default_factory=lambda: date.today().isoformat())
    library_items: int | None = None
    prefer: tuple[str, ...] = ()  # --prefer texts that steered the ranking
    avoid: tuple[str, ...] = ()  # --avoid texts
    recency_half_life: float | None = None  # days; None: every library item counts the same
    interests: tuple[str, ...] = ()  # the library's interests the list covers, largest first
    unserved: tuple[str, ...] = ()  # interests with no paper in this corpus good enough for a seat (facets.py)
    seen_left_out: int = 0  # arXiv papers shown on an earlier day, left out (zotero_bridge/feedback/seen.py)
    weak: str = ""  # which shown picks are below the weak bar, in words (recommender/scoring/match.py, weak_picks_line)


def steering(context: ListContext) -> list[tuple[str, str]]:
    """The header lines issue 25 adds, as (label, plain text): what steered the ranking and the interests it
    covers. Empty for a list made without them, so its header (every format's) keeps its old bytes."""
    lines = []
    if context.prefer:
        lines.append(("Prefer", "; ".join(f'"{text}"' for text in context.prefer)))
    if context.avoid:
        lines.append(("Avoid", "; ".join(f'"{text}"' for text in context.avoid)))
    if context.recency_half_life is not None:
        lines.append(("Recency", f"a library item counts half after {days(context.recency_half_life)}"))
    if context.interests:
        lines.append(("Interests", " · ".join(context.interests)))
    if context.unserved:
        lines.append(("No good paper", "this corpus has none for " + " · ".join(context.unserved)))
    if context.weak:
        lines.append(("Weak match", context.weak))
    if context.seen_left_out:
        lines.append(("Seen", f"{plural(context.seen_left_out, 'paper')} shown on an earlier day left out "
                              "(--include-seen shows them)"))
    return lines


def presentation(paper: Paper) -> str:
    """'Oral', 'Spotlight', 'Poster', 'Position'… only where the corpus row says so (OpenReview's
    presentation type, a `status` or `track` field); never guessed from a link, so '' when unknown."""
    meta = paper.metadata or {}
    for key in ("presentation", "status", "track"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip().title()
    return ""


_PMLR_PAGE = re.compile(r"^(https://proceedings\.mlr\.press/v\d+/)([A-Za-z0-9_-]+)\.html$")


def _pdf_url(meta: dict) -> object:
    """The PDF on PMLR's own site (next to the paper's page) where the corpus names a PMLR page, else the
    PDF link as the corpus gives it (the bundled list's is a raw GitHub file that browsers download)."""
    page = _PMLR_PAGE.match(meta.get("pmlr_url") or "") if isinstance(meta.get("pmlr_url"), str) else None
    return f"{page[1]}{page[2]}/{page[2]}.pdf" if page else meta.get("pdf_url")


def _links(paper: Paper) -> str:
    meta = paper.metadata or {}
    targets = (("PMLR", meta.get("pmlr_url")), ("PDF", _pdf_url(meta)), ("OpenReview", meta.get("openreview_url")),
               ("ICML page", meta.get("icml_virtual_url")))
    links = [html_link(label, url) for label, url in targets
             if isinstance(url, str) and html_link(label, url) != label]
    if paper.doi:
        links.append(html_link("DOI", f"https://doi.org/{paper.doi}"))
    return f'<div class="links">{"".join(links)}</div>' if links else ""


def paper_links(paper: Paper) -> str:
    """The paper's links (PMLR, PDF, OpenReview, ICML page, DOI) as the reading list shows them: http(s) only."""
    return _links(paper)


def _bar(fraction: float, label: str = "") -> str:
    width = max(0.0, min(1.0, fraction)) * 100
    return (f'<span class="track" role="img" aria-label="{html_text(label)}">'
            f'<span class="fill" style="width:{width:.0f}%;display:block"></span></span>')


def _topics(recs: Sequence[Recommendation]) -> str:
    """Which library items the list leans on: how many recommended papers each one explains."""
    counts = Counter(reason.item_title for rec in recs for reason in rec.reasons[:3])
    if not counts:
        return ""
    top = counts.most_common(TOPICS_SHOWN)
    most = top[0][1]
    rows = "".join(f'<div class="topic"><span title="{html_text(name)}">{html_text(name)}</span>'
                   f'{_bar(n / most, plural(n, "paper"))}<span class="sim">{n}</span></div>' for name, n in top)
    return (f'<section class="topics"><h2>Where this list comes from: the items in your library that explain '
            f'the most papers</h2>{rows}</section>')


def _paper(rec: Recommendation, best: float) -> str:
    paper = rec.paper
    authors = list(paper.authors[:AUTHORS_SHOWN]) + (["et al."] if len(paper.authors) > AUTHORS_SHOWN else [])
    tags = [f'<span class="tag">{html_text(t)}</span>' for t in (paper.venue, presentation(paper),
                                                                   str(paper.year or "")) if t]
    tags.append(f'<span class="score">score {rec.score:.3f} {_bar(rec.score / best if best > 0 else 0, "score")}</span>')
    abstract = (f"<details><summary>Abstract</summary><p>{html_text(paper.abstract)}</p></details>"
                if paper.abstract else "")
    reasons = "".join(f'<li>{html_text(r.item_title)} <span class="sim">({r.similarity:.2f})</span></li>'
                      for r in rec.reasons)
    weak = ' class="match weak" title="below the weak-match bar"' if rec.weak else ' class="match"'
    shown = f'{rec.match}% match' + (" (weak)" if rec.weak else "")
    because = "Because you saved:" if rec.match is None else f'<b{weak}>{shown}</b> · because you saved:'
    also = "".join(f"<li>{html_text(capitalised(line))}</li>" for line in more_reasons(rec))
    also = f'<ul class="also">{also}</ul>' if also else ""
    why = (f'<div class="why">{because}<ul>{reasons}</ul>{also}</div>' if reasons
           else f'<div class="why">{also}</div>' if also else "")
    learned = "".join(f"<li>{html_text(line)}</li>" for line in rec.feedback)
    why += f'<div class="why">Feedback:<ul>{learned}</ul></div>' if learned else ""
    derived = ' <small>(title from the abstract)</small>' if paper.title_derived else ""
    return (f'<li class="paper"><div class="rank">{rec.rank}</div><div>'
            f'<h2>{html_link(paper.title, paper.url)}{derived}</h2>'
            + (f'<p class="authors">{html_text(", ".join(authors))}</p>' if authors else "")
            + f'<div class="tags">{"".join(tags)}</div>{_links(paper)}{abstract}{why}</div></li>')


def _meta_spans(pairs: Sequence[tuple[str, str]]) -> str:
    return "".join(f"<span>{name}: <b>{html_text(value)}</b></span>" for name, value in pairs)


def render_html_page(recs: Sequence[Recommendation], title: str, context: ListContext | None = None) -> str:
    context = context or ListContext()
    meta = [("Library", context.library + (f" ({plural(context.library_items, 'item')})" if context.library_items else "")),
            ("Corpus", context.corpus), ("Features", context.features), ("Model", context.model or "content only"),
            ("Made", context.created)]
    header = f'<p class="meta">{_meta_spans([(name, value) for name, value in meta if value])}</p>'
    steered = steering(context)
    header += f'<p class="meta steer">{_meta_spans(steered)}</p>' if steered else ""
    best = max((rec.score for rec in recs), default=0.0)
    papers = "\n".join(_paper(rec, best) for rec in recs) or "<p>No papers to recommend.</p>"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{html_text(title)}</title><style>{_STYLE}</style></head>\n<body><main>"
        f'<header><h1>{html_text(title)}</h1>{header}</header>\n'
        f'{_topics(recs)}\n<ol class="papers">\n{papers}\n</ol>'
        "<footer>Made by zotrec. Scores compare papers within this list only.</footer></main></body></html>\n"
    )
