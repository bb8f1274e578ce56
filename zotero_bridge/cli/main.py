"""The `zotrec` command line: options in, one library call, rendered result out.

Heavy modules (numpy, scikit-learn, pyzotero) are imported inside commands so that
`zotrec --help` stays fast.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from pathlib import Path

import click

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
DEFAULT_COLLECTION_NAME = "Recommended · ICML 2025"
# recommender.profile.DEFAULT_AGGREGATION, repeated so --help needs no numpy (a test keeps them equal)
DEFAULT_AGGREGATION = "top5"

log = logging.getLogger("zotrec")


class _StderrFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        prefix = "Warning: " if record.levelno >= logging.WARNING else ""
        return prefix + record.getMessage()


def _setup_logging(quiet: bool, verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_StderrFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.ERROR if quiet else logging.INFO)
    for noisy in ("httpx", "httpx2", "httpcore", "urllib3", "implicit", "pylatexenc"):
        logging.getLogger(noisy).setLevel(logging.ERROR)


def friendly_errors(command):
    """Turn the library's own errors into one `Error: …` line and exit status 1."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        from recommender.errors import RecommenderError

        try:
            return command(*args, **kwargs)
        except RecommenderError as error:
            raise click.ClickException(str(error)) from None
        except (ValueError, OSError) as error:
            raise click.ClickException(str(error)) from None

    return wrapper


def source_options(command):
    """--library SOURCE… and the Zotero settings that the zotero:* sources read."""
    options = [
        click.option("--library", "libraries", multiple=True, required=True, metavar="SOURCE",
                     help="A Zotero export (.bib/.ris/.json/.jsonl), a zotero.sqlite path, "
                          "zotero:web, zotero:local or zotero:sqlite. Repeat to merge."),
        click.option("--library-id", envvar="ZOTERO_LIBRARY_ID", help="Zotero user or group id (zotero:web)."),
        click.option("--library-type", envvar="ZOTERO_LIBRARY_TYPE", type=click.Choice(["user", "group"]),
                     default=None, help="user (default) or group (zotero:web)."),
        click.option("--api-key", envvar="ZOTERO_API_KEY", help="Zotero API key (zotero:web); prefer the env var."),
        click.option("--endpoint", envvar="ZOTERO_API_ENDPOINT", metavar="URL",
                     help="Zotero API base URL (default the public API)."),
        click.option("--group", metavar="NAME|ID", envvar="ZOTERO_GROUP", expose_value=False,
                     callback=lambda ctx, _param, value: ctx.meta.__setitem__("zotrec.group", value),
                     help="Read this group library instead of My Library (zotero:sqlite, zotero:local)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _source_settings(library_id, library_type, api_key, endpoint):
    from zotero_bridge.sources import SourceOptions

    return SourceOptions(library_id=library_id, library_type=library_type or "user",
                         api_key=api_key, endpoint=endpoint, group=click.get_current_context().meta.get("zotrec.group"))


def _read_library(libraries, settings):
    from zotero_bridge.sources import read_library

    read = read_library(libraries, settings)
    if read.skipped:
        from zotero_bridge.render import skipped_summary

        summary = ", ".join(f"{n} {reason}" for reason, n in skipped_summary(read.skipped).items())
        log.info("Skipped %d entries: %s", len(read.skipped), summary)
        for skipped in read.skipped:
            if "could not be parsed" in skipped.reason or "broken" in skipped.reason or "JSON" in skipped.reason:
                log.warning("%s: %s", skipped.where, skipped.reason)
    return read


def default_corpus_paths() -> list[Path]:
    """The bundled example corpus: the ICML 2025 seed abstracts shipped with zotrec."""
    folder = Path(__file__).resolve().parent.parent / "recommender" / "data" / "icml2025_seeds"
    return sorted(folder.glob("*.txt"))


def _load_corpus(corpus_paths):
    from recommender.corpus import load_corpus

    paths = list(corpus_paths) or default_corpus_paths()
    loaded = load_corpus(paths)
    for skipped in loaded.skipped:
        log.warning("%s: %s", skipped.where, skipped.reason)
    title_only = sum(paper.abstract is None for paper in loaded.papers)
    if title_only:
        log.info("%d of %d corpus papers have no abstract: they are scored on their titles.",
                 title_only, len(loaded.papers))
    return loaded.papers


def _load_model(model_path: str | None):
    """The collaborative model at `model_path`, or None (content-only scoring, said once on stderr)."""
    if not model_path:
        log.info("No --model given: scoring on content only (train one with `zotrec train`).")
        return None
    from recommender.collaborative import CollaborativeModel

    model = CollaborativeModel.load(model_path)
    log.info("Hybrid scoring with %s (trained on %s).", model_path, model.provenance.get("data", "unknown data"))
    return model


def _write_output(text: str, output: str | None) -> None:
    if output in (None, "-"):
        click.echo(text, nl=False)
        return
    path = Path(output)
    if path.exists() and not path.is_file():  # /dev/null, a FIFO: write in place, never rename over it
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    temporary = path.with_name(f".{path.name}.tmp{os.getpid()}")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
    log.info("Wrote %s", path)


def _profile_for(items, collection: str | None):
    """Items in the named collection (or any sub-collection of it); a clear error if none."""
    if not collection:
        return None
    wanted = collection.strip("/").casefold()
    chosen = [
        item for item in items
        if any(path.casefold() == wanted or path.casefold().startswith(wanted + "/")
               or path.rsplit("/", 1)[-1].casefold() == wanted for path in item.collections)
    ]
    if not chosen:
        known = sorted({path for item in items for path in item.collections})
        hint = f" (collections: {', '.join(known[:10])})" if known else " (this library has no collections)"
        raise click.ClickException(f"no items in collection '{collection}'{hint}")
    return chosen


@click.group(context_settings=CONTEXT)
@click.version_option(package_name="zotrec", prog_name="zotrec")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
@click.option("-v", "--verbose", is_flag=True, help="Debug messages on stderr.")
def cli(quiet: bool, verbose: bool) -> None:
    """zotrec recommends new papers (ICML 2025 first) from your Zotero library.

    \b
    Example:
        zotrec reading-list --library examples/library.bib
    """
    _setup_logging(quiet, verbose)


@cli.command("reading-list")
@source_options
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH|NAME",
              help="Corpus file(s) (seed .txt, .jsonl, .json, .csv, .bib) or a stored corpus such as icml2025 "
                   "(`zotrec corpus fetch`). Default: the bundled ICML 2025 seeds.")
@click.option("-n", "--top", "top_n", type=click.IntRange(min=0), default=20, show_default=True,
              help="How many papers; 0 means every corpus paper.")
@click.option("--collection", help="Build the profile from this collection only (e.g. 'Thesis/Chapter 2').")
@click.option("--aggregation", default=DEFAULT_AGGREGATION, show_default=True,
              help="How item similarities combine: max, mean or topK (mean of the K best).")
@click.option("--features", type=click.Choice(["tfidf", "dense", "hybrid"]), default=None,
              help="Text features: tfidf, dense (MiniLM embeddings, cached; needs the 'embeddings' "
                   "extra) or hybrid (both). Default: the best measured one that is installed.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "html", "json", "jsonl", "csv",
                                                   "bibtex", "ris", "csljson"]),
              default="table", show_default=True,
              help="bibtex, ris and csljson make a file to import into Zotero (File → Import…), no API key needed.")
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
@click.option("--model", "model_path", metavar="PATH",
              help="A collaborative model (.npz from `zotrec train`): scores become the hybrid. Default: content only.")
@friendly_errors
def reading_list(libraries, library_id, library_type, api_key, endpoint, corpus_paths, top_n, collection,
                 aggregation, features, fmt, output, model_path):
    """Rank the corpus for your library and print a reading list with reasons.

    \b
    Example:
        zotrec reading-list --library examples/library.bib -n 10 --format markdown
        zotrec reading-list --library ~/Zotero/zotero.sqlite --format ris -o icml2025.ris
    """
    from recommender.embeddings import choose_features
    from recommender.profile import parse_aggregation
    from recommender.ranking import Recommender
    from zotero_bridge.render import render_recommendations

    parse_aggregation(aggregation)
    features = choose_features(features)
    read = _read_library(libraries, _source_settings(library_id, library_type, api_key, endpoint))
    profile = _profile_for(read.items, collection)
    papers = _load_corpus(corpus_paths)
    recommender = Recommender(papers, aggregation=aggregation, representation=features,
                              model=_load_model(model_path))
    recs = recommender.recommend(read.items, top_n=top_n, profile=profile)
    title = f"Reading list · {collection}" if collection else "Reading list"
    if fmt in ("bibtex", "ris", "csljson"):
        from zotero_bridge.export import render_export

        _write_output(render_export(recs, fmt), output)
        return
    _write_output(render_recommendations(recs, fmt, title=title), output)


@cli.command("library")
@source_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly_errors
def library_command(libraries, library_id, library_type, api_key, endpoint, fmt):
    """Show what zotrec read from a library: one row per item, then what was skipped and why.

    \b
    Example:
        zotrec library --library examples/library.bib --format json
    """
    from zotero_bridge.render import render_library

    read = _read_library(libraries, _source_settings(library_id, library_type, api_key, endpoint))
    click.echo(render_library(read.items, read.skipped, fmt), nl=False)


@cli.command("score")
@click.option("--libraries", "library_paths", multiple=True, required=True, metavar="PATH",
              help="A library file (.bib/.ris/.json/.jsonl/.sqlite) or a folder of them; each file is one user, "
                   "named by its file stem. Repeat, or list more paths after the options (shell globs work).")
@click.argument("more_libraries", nargs=-1, metavar="[PATH]...")
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH|NAME",
              help="Corpus file(s) or a named corpus. Default: the bundled ICML 2025 seeds.")
@click.option("--model", "model_path", metavar="PATH", help="A collaborative model (.npz from `zotrec train`).")
@click.option("--aggregation", default=DEFAULT_AGGREGATION, show_default=True, help="As in reading-list: max, mean or topK.")
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
@click.pass_context
@friendly_errors
def score_command(ctx, library_paths, more_libraries, corpus_paths, model_path, aggregation, features, top_n,
                  output, fmt, group_summary, overwrite, jobs, scheduler):
    """Score many libraries (one user each) against one corpus: rows of user, rank, id, title, score, reasons.

    Each user's ranking is exactly `zotrec reading-list` on that library. A re-run with the same
    --out skips users already written; a library that cannot be read is reported and skipped.

    \b
    Example:
        zotrec score --libraries lab/ --corpus icml2025 -n 20 --out lab-scores.csv --group-summary
    """
    from recommender.embeddings import choose_features
    from recommender.profile import parse_aggregation
    from zotero_bridge.batch_cli import BatchRequest, run_batch, summary_text

    parse_aggregation(aggregation)
    request = BatchRequest([*library_paths, *more_libraries], model=_load_model(model_path),
                           aggregation=aggregation, features=choose_features(features), top_n=top_n,
                           output=output, fmt=fmt,
                           group_summary=group_summary, overwrite=overwrite, jobs=jobs, scheduler=scheduler,
                           show_progress=logging.getLogger().level <= logging.INFO)
    summary = run_batch(_load_corpus(corpus_paths), request)
    click.echo(summary_text(summary), err=True)
    if summary.failures and not summary.scored and not summary.resumed:
        ctx.exit(1)


@cli.command("sync")
@click.option("--library-id", envvar="ZOTERO_LIBRARY_ID", help="Zotero user or group id (also the config file).")
@click.option("--library-type", envvar="ZOTERO_LIBRARY_TYPE", type=click.Choice(["user", "group"]), default=None,
              help="user (default) or group.")
@click.option("--api-key", envvar="ZOTERO_API_KEY", help="Zotero API key; prefer the env var, config or keyring.")
@click.option("--endpoint", envvar="ZOTERO_API_ENDPOINT", metavar="URL",
              help="Zotero API base URL (default https://api.zotero.org; a self-hosted or test server).")
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH",
              help="Corpus file(s): seed .txt, .jsonl, .csv, .bib. Default: the bundled ICML 2025 seeds.")
@click.option("-n", "--top", "top_n", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many papers the collection holds.")
@click.option("--collection-name", default=DEFAULT_COLLECTION_NAME, show_default=True,
              help="The collection zotrec fills (found by name, created once).")
@click.option("--aggregation", default=DEFAULT_AGGREGATION, show_default=True,
              help="How item similarities combine: max, mean or topK (as in reading-list).")
@click.option("--features", type=click.Choice(["tfidf", "dense", "hybrid"]), default=None,
              help="Text features, as in reading-list. Default: the best measured one that is installed.")
@click.option("--model", "model_path", metavar="PATH", help="A collaborative model (.npz from `zotrec train`).")
@click.option("--dry-run", is_flag=True, help="Print the plan (add / keep / remove); send no write request.")
@click.option("--save-config", is_flag=True,
              help="Also store the library id, type, endpoint and key in the config file (mode 0600).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="The report; json includes the request counts.")
@friendly_errors
def sync_command(library_id, library_type, api_key, endpoint, corpus_paths, top_n, collection_name, aggregation,
                 features, model_path, dry_run, save_config, fmt):
    """Score the corpus against your Zotero library (Web API) and write the top N into a collection.

    New papers become conferencePaper items tagged `zotrec` with a note saying why; papers that fall
    out of the top N leave the collection (never deleted) unless you changed them. Items you made are
    never edited, except being added to the collection when the paper is already in your library.
    Settings come from the options, ZOTERO_* env vars, the config file, or the keyring.

    \b
    Example:
        export ZOTERO_LIBRARY_ID=1234567 ZOTERO_API_KEY=...
        zotrec sync --dry-run
        zotrec sync -n 20 --collection-name "Recommended · ICML 2025" --format json
    """
    from recommender.embeddings import choose_features
    from recommender.profile import parse_aggregation
    from zotero_bridge.sync import SyncRequest, render_sync_report, run_sync

    parse_aggregation(aggregation)
    settings = _source_settings(library_id, library_type, api_key, endpoint)
    if save_config:
        from zotero_bridge.credentials import resolve_credentials, save_config as store

        found = resolve_credentials(library_id, library_type, api_key, endpoint)
        log.info("Saved the Zotero settings to %s", store({"library_id": found.library_id, "api_key": found.api_key,
                                                           "library_type": found.library_type,
                                                           "endpoint": found.endpoint}))
    request = SyncRequest(_load_corpus(corpus_paths), settings, collection_name, top_n=top_n, dry_run=dry_run,
                          aggregation=aggregation, representation=choose_features(features),
                          model=_load_model(model_path))
    click.echo(render_sync_report(run_sync(request), fmt), nl=False)


@cli.group("corpus")
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
              help="Fetch from here instead: an OpenReview API base URL, a PMLR .bib URL or file, a saved "
                   "OpenReview .json answer, or a corpus file. Repeat to merge.")
@click.option("--force", is_flag=True, help="Replace the stored corpus even if the new one is much smaller.")
@click.option("--concurrency", type=click.IntRange(1, 4), default=2, show_default=True,
              help="Requests at a time.")
@friendly_errors
def corpus_fetch_command(name, sources, force, concurrency):
    """Download a conference (OpenReview notes + PMLR BibTeX), merge, and store it under NAME.

    An interrupted fetch resumes where it stopped; a failed one keeps the stored corpus.

    \b
    Example:
        zotrec corpus fetch icml2025
        zotrec corpus fetch icml2025 --from icml25.bib --from https://api2.openreview.net
    """
    from recommender.corpus_fetch import FetchSettings, fetch_corpus

    show = sys.stderr.isatty() and logging.getLogger().level < logging.ERROR
    report = fetch_corpus(name, sources, FetchSettings(concurrency=concurrency, show_progress=show), force=force)
    counts = report.counts
    click.echo(f"Saved {report.papers:,} papers to {report.path}: {counts['with_abstracts']:,} with abstracts, "
               f"{counts['with_authors']:,} with authors, {counts['duplicates_dropped']:,} duplicates dropped, "
               f"{counts['skipped']:,} skipped ({report.stats.requests} requests, {report.seconds:.1f} s).")


@corpus_group.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly_errors
def corpus_list_command(fmt):
    """List the stored corpora with their counts, source and fetch date.

    \b
    Example:
        zotrec corpus list --format json
    """
    from recommender.corpus_store import corpora_dir, list_corpora

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
    from recommender.corpus_store import describe_corpus

    click.echo(_corpus_infos_text([describe_corpus(corpus)], fmt), nl=False)


def _corpus_infos_text(infos, fmt: str) -> str:
    import dataclasses
    import json

    rows = [{k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(i).items()} for i in infos]
    if fmt == "json":
        return json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    return "\n\n".join("\n".join(f"{key.replace('_', ' ')}: {value}" for key, value in row.items())
                       for row in rows) + "\n"


@cli.command("train")
@click.option("--data", "data_spec", required=True, metavar="NAME:FOLDER",
              help="citeulike-a:FOLDER (users.dat, titles.txt) or citeulike-t:FOLDER (users.dat, mult.dat, "
                   "vocabulary.dat).")
@click.option("-o", "--output", required=True, metavar="FILE", help="Where to write the model (.npz).")
@click.option("--aggregation", default=None, help="Content aggregation the blend weight is chosen for. "
                                                  "Default: the profile default.")
@click.option("--factors", type=click.IntRange(min=2), default=None, help="ALS factors (default 128).")
@click.option("--seed", type=int, default=0, show_default=True, help="ALS random_state.")
@friendly_errors
def train_command(data_spec, output, aggregation, factors, seed):
    """Train the collaborative model: ALS on who saved what, a text → factor map, a validated blend weight.

    \b
    Example:
        zotrec train --data citeulike-a:../shared/data/citeulike-a -o model.npz
        zotrec reading-list --library examples/library.bib --model model.npz
    """
    import time

    from recommender.collaborative import ALSSettings
    from recommender.datasets import load_dataset
    from recommender.evaluation import train_model
    from recommender.profile import DEFAULT_AGGREGATION

    started = time.perf_counter()
    settings = ALSSettings(random_state=seed, **({"factors": factors} if factors else {}))
    model = train_model(load_dataset(data_spec), settings,
                        aggregation or DEFAULT_AGGREGATION)
    model.save(output)
    log.info("Wrote %s (blend weight %.1f, %.0f s).", output, model.blend_weight, time.perf_counter() - started)


@cli.group("evaluate")
def evaluate_group() -> None:
    """Measure recommendation quality: on CiteULike against peers' rules, or on your own library.

    \b
    Example:
        zotrec evaluate citeulike --data citeulike-a:../shared/data/citeulike-a --folds 1
        zotrec evaluate library --library examples/library.bib --holdout-newest 5
    """


@evaluate_group.command("citeulike")
@click.option("--data", "data_spec", required=True, metavar="NAME:FOLDER",
              help="citeulike-a:FOLDER or citeulike-t:FOLDER.")
@click.option("--folds", type=click.IntRange(1, 5), default=5, show_default=True,
              help="How many of the 5 item-cold folds to run (1 is the quick check).")
@click.option("--svm-users", type=click.IntRange(min=0), default=300, show_default=True,
              help="Users per fold for the per-user SVM peer (slow); 0 skips it.")
@click.option("--factors", type=click.IntRange(min=2), default=None, help="ALS factors (default 128).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
@friendly_errors
def evaluate_citeulike_command(data_spec, folds, svm_users, factors, fmt, output):
    """Item-cold K-fold evaluation: recall@20/50/100/300 and nDCG@50 of every rule, random floor beside.

    \b
    Example:
        zotrec evaluate citeulike --data citeulike-t:../shared/data/citeulike-t --folds 1 --format json
    """
    import json

    from recommender.collaborative import ALSSettings
    from recommender.datasets import load_dataset
    from recommender.evaluation import evaluate_citeulike, format_table

    settings = ALSSettings(**({"factors": factors} if factors else {}))
    report = evaluate_citeulike(load_dataset(data_spec), folds=folds, settings=settings, svm_users=svm_users)
    text = json.dumps(report, indent=2) + "\n" if fmt == "json" else format_table(report)
    _write_output(text, output)


@evaluate_group.command("library")
@source_options
@click.option("--holdout-newest", "holdout", type=click.IntRange(min=1), default=10, show_default=True,
              help="Hide this many most recently added items and rank them among the corpus.")
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH|NAME",
              help="Corpus file(s) or a named corpus. Default: the bundled ICML 2025 seeds.")
@click.option("--aggregation", default=None, help="max, mean or topK. Default: the profile default.")
@click.option("--model", "model_path", metavar="PATH", help="A collaborative model: evaluate the hybrid.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly_errors
def evaluate_library_command(libraries, library_id, library_type, api_key, endpoint, holdout, corpus_paths,
                             aggregation, model_path, fmt):
    """Hide your newest items, score them among the corpus from the rest, and show where they rank.

    \b
    Example:
        zotrec evaluate library --library ~/Zotero/zotero.sqlite --holdout-newest 10
    """
    import dataclasses
    import json

    from recommender.holdout import evaluate_library_holdout, format_holdout
    from recommender.profile import DEFAULT_AGGREGATION, parse_aggregation

    aggregation = aggregation or DEFAULT_AGGREGATION
    parse_aggregation(aggregation)
    read = _read_library(libraries, _source_settings(library_id, library_type, api_key, endpoint))
    result = evaluate_library_holdout(read.items, _load_corpus(corpus_paths), holdout,
                                      aggregation=aggregation, model=_load_model(model_path))
    click.echo(json.dumps(dataclasses.asdict(result), indent=2) if fmt == "json" else format_holdout(result),
               nl=fmt == "json")
