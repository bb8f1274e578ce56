"""What every `zotrec` command shares: logging, the one-line errors, --library options, corpus and model loading, output.

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
# recommender.scoring.fusion.DEFAULT_SCORING, repeated so --help needs no numpy (a test keeps them equal)
DEFAULT_AGGREGATION = "learned"
AGGREGATION_HELP = ("learned (top5 fused with tf-idf top5 and a per-user linear model), max, mean or topK "
                    "such as top3")

log = logging.getLogger("zotrec")


class _StderrFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        prefix = "Warning: " if record.levelno >= logging.WARNING else ""
        return prefix + record.getMessage()


def setup_logging(quiet: bool, verbose: bool) -> None:
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


def source_settings(library_id, library_type, api_key, endpoint):
    from zotero_bridge.sources import SourceOptions

    return SourceOptions(library_id=library_id, library_type=library_type or "user",
                         api_key=api_key, endpoint=endpoint, group=click.get_current_context().meta.get("zotrec.group"))


def read_sources(libraries, settings):
    from zotero_bridge.sources import read_library

    read = read_library(libraries, settings)
    if read.skipped:
        from zotero_bridge.render.reading_list import skipped_summary

        summary = ", ".join(f"{n} {reason}" for reason, n in skipped_summary(read.skipped).items())
        log.info("Skipped %d entries: %s", len(read.skipped), summary)
        for skipped in read.skipped:
            if "could not be parsed" in skipped.reason or "broken" in skipped.reason or "JSON" in skipped.reason:
                log.warning("%s: %s", skipped.where, skipped.reason)
    return read


def default_corpus_paths() -> list[Path]:
    """The bundled example corpus: the ICML 2025 seed abstracts shipped with zotrec."""
    folder = Path(__file__).resolve().parents[2] / "recommender" / "data" / "icml2025_seeds"
    return sorted(folder.glob("*.txt"))


def load_corpus_papers(corpus_paths):
    from recommender.corpus.readers import load_corpus

    paths = list(corpus_paths) or default_corpus_paths()
    loaded = load_corpus(paths)
    for skipped in loaded.skipped:
        log.warning("%s: %s", skipped.where, skipped.reason)
    title_only = sum(paper.abstract is None for paper in loaded.papers)
    if title_only:
        log.info("%d of %d corpus papers have no abstract: they are scored on their titles.",
                 title_only, len(loaded.papers))
    return loaded.papers


def load_model(model_path: str | None, features: str | None = None):
    """The collaborative model: `model_path` (either kind of `zotrec train` file), "none" for content
    only, or by default the one shipped with zotrec when the features are dense (said once on stderr)."""
    if model_path == "none":
        return None
    if not model_path:
        from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel

        if features not in ("dense", "hybrid") or not SHIPPED_MODEL.exists():
            log.info("Scoring on content only (the shipped collaborative part needs dense features).")
            return None
        model = DenseCollaborativeModel.load(SHIPPED_MODEL)
        log.info("Hybrid scoring with the collaborative part shipped with zotrec (trained on %s; --model none "
                 "turns it off).", model.provenance.get("data", "unknown data"))
        return model
    import numpy as np

    from recommender.collaborative.dense_model import DENSE_MODEL_FORMAT, DenseCollaborativeModel
    from recommender.collaborative.model import CollaborativeModel

    try:
        with np.load(model_path, allow_pickle=False) as data:
            dense = "format" in data and str(data["format"]) == DENSE_MODEL_FORMAT
    except (OSError, ValueError) as error:
        raise click.ClickException(f"{model_path}: cannot read the model ({error})") from None
    model = (DenseCollaborativeModel if dense else CollaborativeModel).load(model_path)
    if dense and features not in ("dense", "hybrid"):
        raise click.ClickException(f"{model_path}: a dense collaborative model needs --features dense")
    log.info("Hybrid scoring with %s (trained on %s).", model_path, model.provenance.get("data", "unknown data"))
    return model


def scoring(aggregation: str, model, features: str = "dense"):
    """(aggregation, model) as the Recommender takes them: "learned" and dense models become a Fusion."""
    from recommender.scoring.aggregation import parse_aggregation
    from recommender.scoring.fusion import LEARNED, scoring_plan

    if aggregation != LEARNED:
        parse_aggregation(aggregation)
    return scoring_plan(aggregation, model, features)


def write_output(text: str, output: str | None) -> None:
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


def profile_for(items, collection: str | None):
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
