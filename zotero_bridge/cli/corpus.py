"""`zotrec corpus fetch|list|info|remove`: the stored corpora, and the default one they enrich."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from zotero_bridge.cli.common import friendly_errors, log


@click.group("corpus")
def corpus_group() -> None:
    """Fetch, list, inspect and remove paper corpora; `--corpus NAME` then uses a stored one.

    Without --corpus, zotrec ranks the bundled ICML 2025 list; a fetched icml2025 enriches it (abstracts,
    links, presentation types) and never replaces it.

    \b
    Example:
        zotrec corpus fetch icml2025
        zotrec reading-list --library examples/library.bib --corpus icml2025
    """


@corpus_group.command("fetch")
@click.argument("name")
@click.option("--from", "sources", multiple=True, metavar="URL|PATH",
              help="Fetch from here instead: a PMLR .bib URL or file, an OpenReview API base URL, a saved "
                   "OpenReview .json answer, a corpus file, or a stream's saved answer or API URL (arxiv: "
                   "Atom). Repeat to merge.")
@click.option("--force", is_flag=True, help="Replace the stored corpus even if the new one is much smaller.")
@click.option("--days", type=click.IntRange(1, 90), default=None, metavar="N",
              help="Streams (arxiv:…) only: keep the papers of the last N days, counted from today (default 7).")
@friendly_errors
def corpus_fetch_command(name, sources, force, days):
    """Download a venue's papers and store them under NAME: icml2025, pmlr:vNNN, openreview:VENUE_ID, or a
    stream: arxiv:CATEGORY[,CATEGORY…], feed:URL, biorxiv:SUBJECT, medrxiv:SUBJECT, pubmed:QUERY or
    openalex:FILTER (docs/streams.md).

    The PMLR volume BibTeX (titles, authors, abstracts, OpenReview ids; no login) is the corpus.
    OpenReview adds presentation types when it answers: it wants a login, read from
    OPENREVIEW_USERNAME and OPENREVIEW_PASSWORD (or OPENREVIEW_TOKEN); without one the PMLR
    papers are stored and one line says what was skipped. An interrupted fetch resumes where it
    stopped; a failed one keeps the stored corpus.

    \b
    Example:
        zotrec corpus fetch icml2025
        zotrec corpus fetch pmlr:v235
        zotrec corpus fetch openreview:NeurIPS.cc/2025/Conference
        zotrec corpus fetch icml2025 --from icml25.bib
        zotrec corpus fetch arxiv:cs.LG,stat.ML --days 7
        zotrec corpus fetch medrxiv:radiology

    A stream (arxiv:…) is its source's new and updated papers of the last --days, brought up to date
    incrementally (only papers not stored yet are added; a new version replaces its paper), paused as the
    service asks (arXiv: 3 s between requests); --from takes a saved answer (arXiv: Atom) or an API URL.
    """
    import os

    from recommender.corpus.stream import DEFAULT_DAYS
    from recommender.streams import stream_source

    stream = stream_source(name)
    if stream is not None:
        fetch_stream_logged(stream, sources, days or DEFAULT_DAYS)
        return
    if days is not None:
        raise click.UsageError("--days is for stream corpora (arxiv:…)")

    from recommender.corpus.fetch import FetchSettings, OpenReviewLogin, fetch_corpus

    show = sys.stderr.isatty() and logging.getLogger().level < logging.ERROR
    login = OpenReviewLogin(username=os.environ.get("OPENREVIEW_USERNAME", ""),
                            password=os.environ.get("OPENREVIEW_PASSWORD", ""),
                            token=os.environ.get("OPENREVIEW_TOKEN", ""))
    report = fetch_corpus(name, sources, FetchSettings(show_progress=show), force=force, login=login)
    counts = report.counts
    log.info(f"Saved {report.papers:,} papers to {report.path}: {counts['with_abstracts']:,} with abstracts, "
             f"{counts['with_authors']:,} with authors, {counts['with_presentation']:,} with a presentation "
             f"type, {counts['duplicates_dropped']:,} duplicates dropped, {counts['skipped']:,} skipped "
             f"({report.stats.requests} requests, {report.seconds:.1f} s).")
    from recommender.corpus.default import DEFAULT_NAME

    if report.path.stem == DEFAULT_NAME:
        from recommender.corpus.catalog import describe_default

        info = describe_default()
        log.info(f"The default corpus (the bundled ICML 2025 list with it): {info.papers:,} papers, "
                 f"{info.with_abstracts:,} with abstracts; {info.enriched_by_fetch:,} enriched by this fetch"
                 + (f", {info.added_by_fetch:,} added (not in the bundled list)." if info.added_by_fetch else "."))


def fetch_stream_logged(stream, sources, days: int):
    """Fetch one stream corpus, saying what it stored in one line and what it left out in one line each."""
    from recommender.corpus.http import FetchSettings
    from recommender.corpus.stream import fetch_stream, left_out_lines, summary

    if hasattr(stream, "use_key"):  # OpenAlex, PubMed: the key from the environment, config or keyring
        from zotero_bridge.zotero_api.service_keys import service_key

        stream.use_key(*service_key(stream.prefix))
    show = sys.stderr.isatty() and logging.getLogger().level < logging.ERROR
    report = fetch_stream(stream, sources, FetchSettings(show_progress=show, page_size=stream.page_size), days=days)
    log.info(summary(report))
    for line in left_out_lines(report):
        log.warning(line[:1].upper() + line[1:] + ".")
    return report


@corpus_group.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly_errors
def corpus_list_command(fmt):
    """List the stored corpora with their counts, source and fetch date.

    \b
    Example:
        zotrec corpus list --format json
    """
    from recommender.corpus.catalog import list_corpora
    from recommender.corpus.store import corpora_dir

    infos = list_corpora()
    if not infos and fmt == "table":
        click.echo(f"No stored corpus in {corpora_dir()} yet; try `zotrec corpus fetch icml2025`.")
        return
    click.echo(_corpus_infos_text(infos, fmt), nl=False)


@corpus_group.command("info")
@click.argument("corpus", metavar="[NAME|PATH]", required=False)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly_errors
def corpus_info_command(corpus, fmt):
    """Counts for a stored corpus or corpus file: papers, with abstracts, with authors, duplicates, source, date.

    Without NAME|PATH: the default corpus (the bundled ICML 2025 list, with how many papers a fetched
    icml2025 enriched and added).

    \b
    Example:
        zotrec corpus info
        zotrec corpus info icml2025
        zotrec corpus info papers.jsonl --format json
    """
    from recommender.corpus.catalog import describe_corpus, describe_default

    info = describe_corpus(corpus) if corpus else describe_default()
    click.echo(_corpus_infos_text([info], fmt), nl=False)


@corpus_group.command("remove")
@click.argument("name")
@friendly_errors
def corpus_remove_command(name):
    """Delete the stored corpus NAME; `corpus remove icml2025` makes the default the bundled list alone again.

    \b
    Example:
        zotrec corpus remove icml2025
        zotrec corpus remove arxiv:cs.LG
    """
    from recommender.corpus.default import DEFAULT_NAME
    from recommender.corpus.store import remove_stored
    from recommender.streams import stream_source
    from zotero_bridge.render.words import plural

    stream = stream_source(name)
    removed = remove_stored(stream.name if stream else name)
    back = "; without --corpus zotrec ranks the bundled ICML 2025 list alone again" if name == DEFAULT_NAME else ""
    log.info(f"Removed the stored corpus '{name}' ({plural(len(removed.papers), 'paper')}, fetched "
             f"{removed.header.get('fetched_at', '?')}){back}.")


def _corpus_infos_text(infos, fmt: str) -> str:
    import dataclasses
    import json

    from recommender.formats.output import safe_json, safe_text

    # a corpus file's header (its source, its name) is the file's text: no escape sequence reaches the terminal
    rows = [{k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(i).items()} for i in infos]
    if fmt == "json":
        return safe_json(json.dumps(rows, ensure_ascii=False, indent=2)) + "\n"
    return "\n\n".join("\n".join(f"{key.replace('_', ' ')}: {safe_text(value)}" for key, value in row.items()
                                 if value is not None) for row in rows) + "\n"
