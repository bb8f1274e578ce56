"""`zotrec history` as text or JSON: the runs, the papers shown in them, each created paper's fate, and the
ratings given on `zotrec serve`'s page."""

from __future__ import annotations

import json
from dataclasses import asdict

from recommender.formats.output import safe_json, safe_text
from recommender.words import plural
from zotero_bridge.feedback.memory import Memory
from zotero_bridge.feedback.ratings import WORDS, rated_libraries, read_ratings


def render_history(memory: Memory, library: str | None, runs: int, fmt: str) -> str:
    """The history as text for a terminal or as JSON; its titles and steering texts came from a corpus, so
    they pass `safe_text` (`safe_json`) like every other output."""
    libraries = [library] if library else sorted({*memory.libraries(), *rated_libraries(memory)})
    listed = [run for name in libraries for run in memory.runs(name)[:runs]]
    papers = {name: memory.papers(name) for name in libraries}
    rated = {name: read_ratings(memory, name) for name in libraries}
    if fmt == "json":
        return safe_json(json.dumps({
            "file": str(memory.path),
            "runs": [{"run": r[0], "library": r[1], "at": r[2], "collection": r[3],
                      "steering": memory.steering(r[0]),
                      "papers": [asdict(s) for s in memory.shown(r[0])]} for r in listed],
            "papers": [{"library": name, **asdict(p)} for name, found in papers.items() for p in found.values()],
            "ratings": [{"library": name, **asdict(r)} for name, found in rated.items() for r in found.values()],
        }, ensure_ascii=False, indent=2) + "\n")
    if not libraries:
        return f"zotrec has not written to any library yet ({memory.path}).\n"
    lines = [f"History in {memory.path}"]
    for name in libraries:
        found = papers[name]
        counts = {fate: sum(p.fate == fate for p in found.values()) for fate in ("kept", "dismissed", "untouched")}
        lines.append(f"\n{name}: {plural(len(found), 'paper')} created · "
                     + ", ".join(f"{n} {f}" for f, n in counts.items()))
        for paper in sorted(found.values(), key=lambda p: (p.fate, p.title)):
            why = f" ({paper.why})" if paper.why else (
                f" ({plural(paper.untouched_runs, 'run')})" if paper.untouched_runs else "")
            lines.append(f"  {paper.fate:<10} {paper.title}{why}")
        if rated[name]:
            lines.append(f"  rated on the page: {plural(len(rated[name]), 'paper')}")
            for rating in sorted(rated[name].values(), key=lambda r: r.at, reverse=True):
                lines.append(f"    {WORDS[rating.rating]:<15} {rating.title} ({rating.at})")
        for run_id, _, at, collection, count in memory.runs(name)[:runs]:
            trashed = sum(shown.action == "trash" for shown in memory.shown(run_id))
            lines.append(f"  run {run_id} · {at} · \"{collection}\" · {plural(count, 'paper')}"
                         + (f" · {trashed} to the trash" if trashed else ""))
            steered = steering_line(memory.steering(run_id))
            if steered:
                lines.append(f"      {steered}")
            for shown in memory.shown(run_id):
                rank = f"#{shown.rank}" if shown.rank else "  "
                lines.append(f"      {shown.action:<7} {rank:>4}  {shown.title}")
    return safe_text("\n".join(lines)) + "\n"


def steering_line(steering: dict | None) -> str:
    """'steered: prefer "…"; avoid "…"; recent items weighted (half-life 30 days)', or '' for an unsteered run."""
    if not steering:
        return ""
    parts = []
    for name in ("prefer", "avoid"):
        texts = [str(text) for text in steering.get(name) or []]
        if texts:
            parts.append(f"{name} " + ", ".join(f'"{text}"' for text in texts))
    half_life = steering.get("recent_half_life")
    if isinstance(half_life, (int, float)):
        parts.append(f"recent items weighted (half-life {half_life:g} days)")
    return "steered: " + "; ".join(parts) if parts else ""
