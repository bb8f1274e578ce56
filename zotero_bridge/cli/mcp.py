"""`zotrec mcp`: zotrec as tools for an AI assistant (zotero_bridge/mcp/), on the pipeline `reading-list` runs."""

from __future__ import annotations

import click

from zotero_bridge.cli.common import (
    DEFAULT_AGGREGATION,
    friendly_errors,
    load_model,
    log,
    read_sources,
    scoring,
    source_options,
    source_settings,
)


@click.command("mcp")
@source_options
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH|NAME",
              help="The corpus tools rank when a call names none (files or stored corpora, as in reading-list). "
                   "Default: the bundled ICML 2025 list.")
@click.option("--features", type=click.Choice(["tfidf", "dense", "hybrid"]), default=None,
              help="Text features, as in reading-list. Default: the best measured one that is installed.")
@click.option("--model", "model_path", metavar="PATH|none",
              help="A collaborative model (.npz from `zotrec train`). Default: the shipped one; 'none': content only.")
@click.option("--collection-name", default=None,
              help="The collection `save` writes into (default: the one sync fills for the corpus).")
@click.option("--save-to", metavar="zotero:web|zotero:local[:URL]",
              help="Where `save` writes. Default: the first zotero:web or zotero:local --library.")
@friendly_errors
def mcp_command(libraries, library_id, library_type, api_key, endpoint, corpus_paths, features, model_path,
                collection_name, save_to):
    """Serve zotrec's tools to an AI assistant over MCP on stdio: recommend, explain, similar, sources, save.

    The answers are the rows of `reading-list --format json`; `save` writes one paper to Zotero only when
    the call says confirm: true. stdout is the protocol; logs go to stderr.

    \b
    Example:
        zotrec mcp --library ~/Zotero/zotero.sqlite --save-to zotero:local   # what an MCP client starts
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        from zotero_bridge.mcp.server import build_server, serve
    except ImportError as error:
        raise click.ClickException(f"zotrec mcp needs the MCP SDK ({error.name} is missing): "
                                   "pip install 'mcp>=2.3,<3'") from None
    from recommender.features.dense import choose_features

    from zotero_bridge.sync.save import writable_library

    if save_to and writable_library([save_to]) is None:
        raise click.ClickException(f"--save-to: zotrec saves to zotero:web or zotero:local[:URL], not '{save_to}'")
    settings = source_settings(library_id, library_type, api_key, endpoint)
    pipeline = CommandPipeline(libraries, corpus_paths, settings, choose_features(features), model_path,
                               collection_name, save_to)
    try:
        release = version("zotrec")
    except PackageNotFoundError:
        release = ""
    serve(build_server(pipeline, describe_error, secrets=_keys(settings, libraries), version=release))


class CommandPipeline:
    """zotrec's one pipeline as `reading-list` wires it, for one server: the corpus and model built once per
    corpus, the library read afresh on every call (Zotero changes while the assistant talks)."""

    def __init__(self, libraries, corpus_paths, settings, features, model_path, collection_name, save_to):
        self.libraries, self.corpus_paths, self.settings = tuple(libraries), tuple(corpus_paths), settings
        self.features, self.model_path = features, model_path
        self.collection_name, self.save_to = collection_name, save_to
        self._built: dict[tuple, object] = {}  # the last corpus built (one kept: a model's rows are large)
        self._model = None
        self._model_loaded = False

    def _built_for(self, corpus: tuple, libraries: tuple):
        """The shipped Recommender on the corpus as reading-list resolves it (zotero:feeds too), built again
        only when a corpus file changed (a feed read anew, a stored corpus fetched)."""
        from pathlib import Path

        from zotero_bridge.cli.corpus_input import shipped
        from zotero_bridge.cli.feed_corpus import with_feed_corpora

        resolved = tuple(with_feed_corpora(corpus, libraries))
        key = tuple((spec, (stat.st_mtime_ns, stat.st_size) if (path := Path(spec)).is_file()
                     and (stat := path.stat()) else None) for spec in resolved)
        if key not in self._built:
            if not self._model_loaded:
                self._model, self._model_loaded = load_model(self.model_path, self.features), True
            aggregation, model = scoring(DEFAULT_AGGREGATION, self._model)
            self._built = {key: shipped(resolved, features=self.features, aggregation=aggregation, model=model)}
        return self._built[key]

    def library_items(self, query):
        libraries = query.library or self.libraries
        return ", ".join(map(str, libraries)), read_sources(libraries, self.settings).items

    def ranked(self, query, top_n, profile=None, shown=False):
        from zotero_bridge.cli.reading_list import ranked_list
        from zotero_bridge.cli.steering import steering_from
        from zotero_bridge.mcp.tools import Ranked

        libraries, corpus = query.library or self.libraries, query.corpus or self.corpus_paths
        steering = steering_from(query.prefer, query.avoid, None)
        read = read_sources(libraries, self.settings)
        built = self._built_for(corpus, libraries)
        recs, seen = ranked_list(built, libraries, read.items, self.settings, top_n, steering=steering,
                                 include_seen=query.include_seen, profile=profile(read.items) if profile else None)
        if shown:
            seen.remember(recs, "mcp")  # arXiv papers an assistant showed count as shown, as a list's do
        return Ranked(recs, read.items, built.recommender.corpus, ", ".join(map(str, libraries)),
                      ", ".join(map(str, corpus)) or "the bundled ICML 2025 list", seen.left_out)

    def save(self, query, rec, collection):
        from zotero_bridge.cli.sync import default_collection_name
        from zotero_bridge.sync.save import save_paper, target_for, writable_library

        libraries = query.library or self.libraries
        spec = self.save_to or writable_library(libraries)
        if spec is None:
            raise click.ClickException(f"save writes to zotero:web or zotero:local[:URL], and {', '.join(libraries)} "
                                       "is neither: start zotrec mcp with --save-to zotero:local (or zotero:web)")
        name = collection or self.collection_name or default_collection_name(query.corpus or self.corpus_paths)
        return save_paper(target_for(spec, self.settings, name), rec)


def describe_error(error: BaseException) -> str:
    """zotrec's one line for an error (cli/errors.py), as `Error: …` says it at the command line."""
    from zotero_bridge.cli.errors import one_line

    found = error if isinstance(error, click.ClickException) else one_line(error)
    return found.format_message()


def _keys(settings, libraries) -> list[str]:
    """The Zotero API keys this server may hold (given, or from the config or keyring), kept out of answers."""
    keys = [settings.api_key or ""]
    if any(str(spec).startswith("zotero:web") for spec in libraries):
        from zotero_bridge.zotero_api.credentials import resolve_credentials

        try:
            keys.append(resolve_credentials(settings.library_id, settings.library_type, settings.api_key,
                                            settings.endpoint).api_key or "")
        except Exception as error:  # noqa: BLE001 (no key yet: the first call says so in one line)
            log.debug("no Zotero key resolved yet: %s", type(error).__name__)
    return keys
