"""`zotrec score`: many libraries (one user each) against one corpus, to files."""

from __future__ import annotations

import click

from zotero_bridge.cli.common import (
    AGGREGATION_HELP,
    DEFAULT_AGGREGATION,
    friendly_errors,
    load_model,
    log,
    run_inputs,
    scoring,
)
from zotero_bridge.cli.steering import steering_options


@click.command("score")
@click.option("--libraries", "library_paths", multiple=True, required=True, metavar="PATH",
              help="A library file (.bib/.ris/.json/.jsonl/.sqlite) or a folder of them; each file is one user, "
                   "named by its file stem. Repeat, or list more paths after the options (shell globs work).")
@click.argument("more_libraries", nargs=-1, metavar="[PATH]...")
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH|NAME",
              help="Corpus file(s) or a named corpus. Default (also the name icml2025): the bundled ICML 2025 list, enriched by a fetch.")
@click.option("--model", "model_path", metavar="PATH|none",
              help="A collaborative model (.npz from `zotrec train`). Default: the shipped one; 'none': content only.")
@click.option("--aggregation", default=DEFAULT_AGGREGATION, show_default=True, help=AGGREGATION_HELP + ".")
@click.option("--features", type=click.Choice(["tfidf", "dense", "hybrid"]), default=None,
              help="Text features, as in reading-list. Default: the best measured one that is installed.")
@click.option("-n", "--top", "top_n", type=click.IntRange(min=0), default=20, show_default=True,
              help="Papers per user; 0 writes every (user, paper) score.")
@click.option("-o", "--out", "output", metavar="FILE", help="Write rows to FILE (resumable) instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv", show_default=True)
@click.option("--group-summary", is_flag=True,
              help="Also rank papers by how many users have them in their top K (FILE.group.csv beside --out).")
@click.option("--overwrite", is_flag=True, help="Start --out afresh instead of resuming it.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (users are split between them).")
@click.option("--scheduler", metavar="ADDRESS|local",
              help="Run on a Dask cluster ('local': one of --jobs workers); --out is then a folder of part "
                   "files. Needs the dask extra; see docs/distributed.md.")
@click.option("--dashboard", is_flag=True, help="With --scheduler local: serve Dask's dashboard on 127.0.0.1:8787.")
@steering_options
@click.pass_context
@friendly_errors
def score_command(ctx, library_paths, more_libraries, corpus_paths, model_path, aggregation, features, top_n,
                  output, fmt, group_summary, overwrite, jobs, scheduler, dashboard, steering):
    """Score many libraries (one user each) against one corpus: rows of user, rank, id, title, score, reasons.

    Each user's ranking is exactly `zotrec reading-list` on that library. A re-run with the same
    --out skips users already written; a library that cannot be read is reported and skipped.

    \b
    Example:
        zotrec score --libraries lab/ --corpus icml2025 -n 20 --out lab-scores.csv --group-summary
    """
    from recommender import progress

    progress.step("Reading the libraries")  # a line on a terminal before the slow imports
    from recommender.features.dense import choose_features
    from zotero_bridge.cli.batch import BatchRequest, run_batch, summary_text

    features = choose_features(features)
    aggregation, model = scoring(aggregation, load_model(model_path, features))
    request = BatchRequest([*library_paths, *more_libraries], model=model,
                           aggregation=aggregation, features=features, top_n=top_n,
                           output=output, fmt=fmt, inputs=run_inputs(corpus_paths, model_path),
                           group_summary=group_summary, overwrite=overwrite, jobs=jobs, scheduler=scheduler,
                           show_progress=progress.enabled(), steering=steering, dashboard=dashboard)
    summary = run_batch(corpus_paths, request)
    report, failures = summary_text(summary)
    log.info("%s", report)  # -q silences the report; failures are errors and always shown
    if failures:
        log.error("%s", failures)
    if summary.failures and not summary.scored and not summary.resumed:
        ctx.exit(1)
