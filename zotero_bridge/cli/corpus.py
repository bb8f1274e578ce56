"""`zotrec corpus fetch|list|info`: the stored corpora."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from zotero_bridge.cli.common import friendly_errors, log


@click.group("corpus")
def corpus_group() -> None:
    """Fetch, list and inspect paper corpora; `--corpus NAME` then uses a stored one.

    \b
    Example:
        zotrec corpus fetch icml2025
        zotrec reading-list --library examples/library.bib --corpus icml2025
    """


@corpus_group.command("fetch")
@click.argument("name")
@click.option("--from", "sources", multiple=True, metavar="URL|PATH",
              help="Fetch from here instead: a PMLR .bib URL or file, an OpenReview API base URL, a saved "
                   "OpenReview .json answer, or a corpus file. Repeat to merge.")
@click.option("--force", is_flag=True, help="Replace the stored corpus even if the new one is much smaller.")
@friendly_errors
def corpus_fetch_command(name, sources, force):
    """Download a venue's papers and store them under NAME: icml2025, pmlr:vNNN or openreview:VENUE_ID.

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
    """
    import os

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
@click.argument("corpus", metavar="NAME|PATH")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly_errors
def corpus_info_command(corpus, fmt):
    """Counts for a stored corpus or corpus file: papers, with abstracts, with authors, duplicates, source, date.

    \b
    Example:
        zotrec corpus info icml2025
        zotrec corpus info papers.jsonl --format json
    """
    from recommender.corpus.catalog import describe_corpus

    click.echo(_corpus_infos_text([describe_corpus(corpus)], fmt), nl=False)


def _corpus_infos_text(infos, fmt: str) -> str:
    import dataclasses
    import json

    rows = [{k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(i).items()} for i in infos]
    if fmt == "json":
        return json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    return "\n\n".join("\n".join(f"{key.replace('_', ' ')}: {value}" for key, value in row.items())
                       for row in rows) + "\n"
