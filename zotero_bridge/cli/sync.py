"""`zotrec sync`: score against the Web API library and write the top N into a collection."""

from __future__ import annotations

import click

from zotero_bridge.cli.common import (
    AGGREGATION_HELP,
    DEFAULT_AGGREGATION,
    DEFAULT_COLLECTION_NAME,
    friendly_errors,
    load_model,
    log,
    scoring,
    source_settings,
)
from zotero_bridge.cli.corpus_input import shipped
from zotero_bridge.cli.feed_corpus import with_feed_corpora
from zotero_bridge.cli.steering import steering_options


@click.command("sync")
@click.option("--library", default="zotero:web", show_default=True, metavar="zotero:web|zotero:local[:URL]",
              help="Where to write: the Web API, or the Zotero desktop's local API (Zotero 10; no API key).")
@click.option("--group", metavar="NAME|ID", envvar="ZOTERO_GROUP",
              help="With zotero:local: write to this group library instead of My Library.")
@click.option("--library-id", envvar="ZOTERO_LIBRARY_ID", help="Zotero user or group id (also the config file).")
@click.option("--library-type", envvar="ZOTERO_LIBRARY_TYPE", type=click.Choice(["user", "group"]), default=None,
              help="user (default) or group.")
@click.option("--api-key", envvar="ZOTERO_API_KEY", help="Zotero API key; prefer the env var, config or keyring.")
@click.option("--endpoint", envvar="ZOTERO_API_ENDPOINT", metavar="URL",
              help="Zotero API base URL (default https://api.zotero.org; a self-hosted or test server).")
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH|NAME",
              help="Corpus file(s): seed .txt, .jsonl, .csv, .bib, or a stored corpus (icml2025, arxiv:cs.LG: a rolling "
                   "collection of the last days' best). Default (also the name icml2025): the bundled ICML 2025 list, "
                   "enriched by a fetch.")
@click.option("-n", "--top", "top_n", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many papers the collection holds.")
@click.option("--collection-name", default=None,
              help="The collection zotrec fills (found by name, created once); '/' makes a path: 'Reading/ICML 2025' "
                   f"is ICML 2025 inside Reading. Default: '{DEFAULT_COLLECTION_NAME}', or 'Recommended · arXiv cs.LG' "
                   "for --corpus arxiv:cs.LG.")
@click.option("--aggregation", default=DEFAULT_AGGREGATION, show_default=True, help=AGGREGATION_HELP + ".")
@click.option("--features", type=click.Choice(["tfidf", "dense", "hybrid"]), default=None,
              help="Text features, as in reading-list. Default: the best measured one that is installed.")
@click.option("--model", "model_path", metavar="PATH|none",
              help="A collaborative model (.npz from `zotrec train`). Default: the shipped one; 'none': content only.")
@click.option("--dry-run", is_flag=True, help="Print the plan (add / keep / remove); send no write request.")
@click.option("--save-config", is_flag=True,
              help="Also store the library id, type, endpoint and key in the config file (mode 0600).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="The report; json includes the request counts.")
@steering_options
@friendly_errors
def sync_command(library, group, library_id, library_type, api_key, endpoint, corpus_paths, top_n, collection_name,
                 aggregation, features, model_path, dry_run, save_config, fmt, steering):
    """Score the corpus against your Zotero library (Web API) and write the top N into a collection.

    New papers become conferencePaper items tagged `zotrec` with a note saying why; papers that fall
    out of the top N leave the collection (never deleted) unless you changed them. Items you made are
    never edited, except being added to the collection when the paper is already in your library.
    It learns from what you did with earlier recommendations: tagged, filed, annotated or edited
    papers count as kept, trashed or removed ones never come back (see `zotrec history`).
    Settings come from the options, ZOTERO_* env vars, the config file, or the keyring.
    With --library zotero:local, Zotero 10 asks once (a dialog) and no API key is needed.
    --prefer / --avoid / --recent-half-life steer the ranking; `zotrec history` shows how each run was steered.

    \b
    Example:
        export ZOTERO_LIBRARY_ID=1234567 ZOTERO_API_KEY=...
        zotrec sync --dry-run
        zotrec sync -n 20 --collection-name "Recommended · ICML 2025" --format json
        zotrec sync --library zotero:local
    """
    from recommender.features.dense import choose_features
    from zotero_bridge.sync.run import SyncRequest, render_sync_report, run_sync
    from zotero_bridge.zotero_api.collection_path import parse_collection_path

    collection_name = collection_name or default_collection_name(corpus_paths)
    parse_collection_path(collection_name)
    features = choose_features(features)
    aggregation, model = scoring(aggregation, load_model(model_path, features))
    transport = sync_transport(library)
    settings = source_settings(library_id, library_type, api_key, endpoint)
    settings.group = group
    if save_config:
        from zotero_bridge.zotero_api.credentials import resolve_credentials
        from zotero_bridge.zotero_api.credentials import save_config as store

        found = resolve_credentials(library_id, library_type, api_key, endpoint)
        log.info("Saved the Zotero settings to %s", store({"library_id": found.library_id, "api_key": found.api_key,
                                                           "library_type": found.library_type,
                                                           "endpoint": found.endpoint}))
    built = shipped(with_feed_corpora(corpus_paths, [library]), features=features, aggregation=aggregation,
                    model=model)
    request = SyncRequest(built.recommender, settings, collection_name, top_n=top_n, dry_run=dry_run,
                          transport=transport, steering=steering, caches=built.caches)
    from recommender.formats.output import safe_json, safe_text

    text = render_sync_report(run_sync(request), fmt)  # titles and reasons are library and corpus text
    click.echo(safe_json(text) if fmt == "json" else safe_text(text), nl=False)


def default_collection_name(corpus_paths) -> str:
    """'Recommended · arXiv cs.LG' for stream corpora ('… · Zotero feeds' for zotero:feeds), else
    'Recommended · ICML 2025'."""
    from recommender.streams import stream_source
    from zotero_bridge.sources.feeds import feeds_label, is_feeds_spec

    labels = [feeds_label(spec) if is_feeds_spec(spec) else getattr(stream_source(spec), "label", "")
              for spec in corpus_paths]
    if labels and all(labels):
        return "Recommended · " + " · ".join(labels)
    return DEFAULT_COLLECTION_NAME


def sync_transport(library: str):
    """--library zotero:web (the Web API) or zotero:local[:URL] (the desktop's local API)."""
    from zotero_bridge.sources.dispatch import parse_library_spec
    from zotero_bridge.sync.run import WEB_API

    parsed = parse_library_spec(library)  # the one --library parser
    if parsed.kind == "zotero:web" and not parsed.argument:
        return WEB_API
    if parsed.kind == "zotero:local":
        from zotero_bridge.local_api.session import LocalSession
        from zotero_bridge.sync.run import local_transport

        endpoint = parsed.argument
        LocalSession(endpoint).close()  # Zotero off, switched off or 7–9: said in one line before any scoring
        return local_transport(endpoint)
    raise click.ClickException(f"zotrec sync writes to zotero:web or zotero:local[:URL], not '{library}'")
