"""`zotrec serve`: the reading list as a local page to triage (zotero_bridge/serve/)."""

from __future__ import annotations

import logging

import click

from zotero_bridge.cli.common import (
    DEFAULT_AGGREGATION,
    friendly_errors,
    load_model,
    profile_for,
    read_sources,
    run_inputs,
    scoring,
    source_options,
    source_settings,
)
from zotero_bridge.cli.corpus_input import shipped
from zotero_bridge.cli.steering import steering_options

log = logging.getLogger("zotrec")


@click.command("serve")
@source_options
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH|NAME",
              help="Corpus file(s) or stored corpora, as reading-list takes them; repeat for the day's stream "
                   "(e.g. --corpus icml2025 --corpus arxiv:cs.LG). Default: the bundled ICML 2025 list.")
@click.option("-n", "--top", "top_n", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many papers the page shows at a time.")
@click.option("--collection", help="Build the profile from this collection only.")
@click.option("--features", type=click.Choice(["tfidf", "dense", "hybrid"]), default=None,
              help="Text features (default: dense when it can load, else tfidf).")
@click.option("--encoder", default=None, metavar="NAME", help="The sentence encoder of dense features.")
@click.option("--model", "model_path", metavar="PATH|none", help="A collaborative model, as for reading-list.")
@click.option("--collection-name", "save_collection", default=None,
              help="The Zotero collection Save puts papers in (default: the one `zotrec sync` fills for this corpus).")
@click.option("--save-to", metavar="zotero:web|zotero:local[:URL]",
              help="Where Save writes when --library is a file or zotero.sqlite (default: the --library "
                   "zotero:web or zotero:local source).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="The port on 127.0.0.1 (0: any free one).")
@click.option("--open/--no-open", "open_browser", default=False, help="Open the page in the web browser.")
@steering_options
@friendly_errors
def serve_command(libraries, library_id, library_type, api_key, endpoint, corpus_paths, top_n, collection, features,
                  encoder, model_path, save_collection, save_to, port, open_browser, steering):
    """A local page with your reading list: Save, Not for me, More like this, Later, each click remembered.

    The page listens on 127.0.0.1 only, behind a token in the printed address; Ctrl-C stops it.

    \b
    Example:
        zotrec serve --library zotero:local --corpus icml2025 --corpus arxiv:cs.LG
    """
    from recommender import progress
    from recommender.features import make_representation
    from recommender.features.dense import choose_features
    from zotero_bridge.serve.app import TriageServer, run_server
    from zotero_bridge.serve.session import ServeSetup, TriageSession

    progress.step(f"Reading {', '.join(libraries)}")
    run_inputs(libraries, corpus_paths, model_path)
    features = choose_features(features)
    aggregation, model = scoring(DEFAULT_AGGREGATION, load_model(model_path, features))
    settings = source_settings(library_id, library_type, api_key, endpoint)
    from zotero_bridge.cli.sync import default_collection_name

    target = save_target(libraries, save_to, settings, save_collection or default_collection_name(corpus_paths))
    read = read_sources(libraries, settings)
    built = shipped(corpus_paths, features=features, aggregation=aggregation, model=model,
                    representation=make_representation(features, encoder))
    group = click.get_current_context().meta.get("zotrec.group")
    setup = ServeSetup(built, libraries, read.items, settings, group, profile_for(read.items, collection), top_n,
                       target, steering)
    session = TriageSession(setup)
    session.page()  # the first list, made before the address is printed: opening it answers at once
    server = TriageServer(session, ", ".join(libraries), ", ".join(corpus_paths) or "icml2025", port)
    click.echo(f"zotrec serve: open {server.guard.url}  (Ctrl-C stops it)")
    if open_browser:
        import webbrowser

        webbrowser.open(server.guard.url)
    run_server(server)


def save_target(libraries, save_to, settings, collection):
    """Where Save writes: --save-to, else the first zotero:web or zotero:local --library (sync/save.py's one
    rule for both faces); None: nowhere (Save then says why)."""
    from zotero_bridge.sync.save import target_for, writable_library

    spec = save_to or writable_library(libraries)
    return target_for(spec, settings, collection) if spec else None
