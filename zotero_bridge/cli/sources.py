"""`zotrec sources`: what the library already reads (the feeds it follows in Zotero, its journals, arXiv
categories, bioRxiv/medRxiv subjects), as ready-to-paste `--corpus` options (recommender/corpus/suggest.py); and
`daily --corpus auto`, which follows the top of that list."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence

import click

from zotero_bridge.cli.common import friendly_errors, read_sources, source_options, source_settings

AUTO = "auto"


@click.command("sources")
@source_options
@click.option("-n", "--top", "top_n", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many sources to list.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@friendly_errors
def sources_command(libraries, library_id, library_type, api_key, endpoint, top_n, fmt):
    """Propose what to follow: the journals, arXiv categories and bioRxiv/medRxiv subjects your items come from.

    Each line is a `--corpus` option for `zotrec daily` or `reading-list`, with how many library items point
    there, the most first. A journal whose feed zotrec knows gets `feed:URL`, any other `openalex:issn:ISSN`.

    \b
    Example:
        zotrec sources --library ~/Zotero/zotero.sqlite
    """
    from recommender.corpus.suggest import suggest_sources

    read = read_sources(libraries, source_settings(library_id, library_type, api_key, endpoint))
    found = [*followed_feeds(libraries), *suggest_sources(read.items)]
    if fmt == "json":
        from recommender.formats.output import safe_json

        rows = [{"option": s.option, "label": s.label, "count": s.count, "kind": s.kind} for s in found[:top_n]]
        click.echo(safe_json(json.dumps(rows, ensure_ascii=False, indent=2)))
        return
    click.echo(render_sources(found[:top_n], len(read.items), len(found)), nl=False)


def render_sources(found, items: int, total: int) -> str:
    """One line per source: the option, pasteable as it is, then '# label: N items'."""
    import shutil

    from recommender.formats.output import safe_text
    from recommender.words import plural

    if not found:
        return (f"# None of the {plural(items, 'library item')} names a journal (with its ISSN), an arXiv "
                "category or a bioRxiv/medRxiv subject.\n")
    lines = [f"# What {plural(items, 'library item')} come from, as --corpus options for `zotrec daily`:"]
    options = [f"--corpus {shlex.quote(s.option)}" if s.option else "" for s in found]
    width = min(max(len(option) for option in options), 60)
    columns = max(40, shutil.get_terminal_size(fallback=(100, 24)).columns)
    for suggestion, option in zip(found, options):
        comment = f"# {suggestion.label}: {plural(suggestion.count, 'item')}"
        if not option:
            comment += " (add its ISSN to an item to follow it)"
        line = f"{option:<{width}}  {comment}" if option else comment
        lines.append(safe_text(line if len(line) <= columns or len(option) >= columns else line[:columns - 1] + "…"))
    if total > len(found):
        lines.append(f"# … and {total - len(found)} more (-n {total} lists them all)")
    return "\n".join(lines) + "\n"


def followed_feeds(libraries: Sequence[str]) -> list:
    """`zotero:feeds` first when a zotero.sqlite given as --library follows feeds (its count: their unread items)."""
    from recommender.corpus.suggest import SourceSuggestion
    from recommender.words import plural
    from zotero_bridge.sources.dispatch import parse_library_spec
    from zotero_bridge.sources.feeds import FEEDS_SCHEME, feed_papers, feeds_database
    from zotero_bridge.sources.sqlite import read_sqlite_feeds

    if not any(parse_library_spec(spec).kind == "zotero:sqlite" for spec in libraries):
        return []
    found = read_sqlite_feeds(feeds_database(libraries))
    if not found.feeds:
        return []
    from recommender.scoring.owned import CorpusKeys

    unread = feed_papers(found).papers
    new = len(unread) - int(CorpusKeys(unread).owned(found.library.items).sum())  # as zotero:feeds ranks them
    return [SourceSuggestion(FEEDS_SCHEME, f"the {plural(len(found.feeds), 'feed')} you follow in Zotero, unread",
                             new, "zotero-feeds")]


def with_auto_corpora(corpora: Sequence[str], libraries: Sequence[str], settings, top: int = 3) -> list[str]:
    """`corpora` with `auto` replaced by the library's top suggestions that daily can fetch, said in a line."""
    if AUTO not in corpora:
        return list(corpora)
    import logging

    from recommender.corpus.suggest import auto_corpora, suggest_sources
    from recommender.streams import STREAMS
    from zotero_bridge.errors import SourceError

    def can_follow(option: str) -> bool:  # a stream with an adapter (recommender/streams.py)
        return option.partition(":")[0] in STREAMS

    feeds = [s.option for s in followed_feeds(libraries) if s.count]
    chosen = feeds + auto_corpora(suggest_sources(read_sources(libraries, settings).items), can_follow, top)
    if not chosen:
        raise SourceError("--corpus auto: the library names no source daily can follow yet (see `zotrec sources "
                          "--library …`); give one with --corpus")
    logging.getLogger("zotrec").info("--corpus auto: %s (from what the library reads)", ", ".join(chosen))
    return list(dict.fromkeys(option for spec in corpora for option in (chosen if spec == AUTO else [spec])))
