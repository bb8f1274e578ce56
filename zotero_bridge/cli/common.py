"""What every `zotrec` command shares: logging, the one-line errors, --library options, model loading, output
(the corpus and the Recommender on it: corpus_input.py).

Heavy modules (numpy, scikit-learn, pyzotero) are imported inside commands so that
`zotrec --help` stays fast.
"""

from __future__ import annotations

import functools
import logging
import sys
from pathlib import Path

import click

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
DEFAULT_COLLECTION_NAME = "Recommended · ICML 2025"
RETIRED_MODEL_FORMAT = "zotrec-collaborative-1"  # the tf-idf collaborative model of older zotrec versions
# recommender.scoring.fusion.DEFAULT_SCORING, repeated so --help needs no numpy (a test keeps them equal)
DEFAULT_AGGREGATION = "learned"
YOUNG_COLLECTION_THRESHOLD = 10_000  # new container objects between two young passes of the cycle collector
AGGREGATION_HELP = ("learned (top5 fused with tf-idf top5 and a per-user linear model), max, mean or topK "
                    "such as top3")

log = logging.getLogger("zotrec")


def setup_logging(quiet: bool, verbose: bool) -> None:
    """stderr for this run: one handler (cli/console.py) saying log lines, notices at the end, and progress
    on a terminal; -q only errors, -v everything as it happens."""
    from zotero_bridge.cli.console import install

    install(sys.stderr, quiet=quiet, verbose=verbose)


def keep_freed_memory_for_reuse() -> None:
    """Let glibc keep freed heap memory for the next large array instead of handing it back at once:
    scoring allocates and frees many arrays of tens of MB, each otherwise mapped and page-faulted in
    afresh (measured in docs/performance.md). A no-op without glibc's mallopt."""
    import ctypes

    try:  # the process's own symbols hold the C library's; ctypes.util.find_library runs ldconfig (20 ms)
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    for option, value in ((-3, 32 << 20), (-1, 256 << 20), (-2, 64 << 20)):  # M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, M_TOP_PAD
        mallopt(option, value)


def collect_cycles_less_often() -> None:
    """Start the cycle collector's young pass every 10,000 new container objects, not 700: a run makes
    thousands of library items and papers that live until it ends, and at the default pace the collector
    walked them again and again (0.04-0.06 s of CPU in a warm 10,000-item list: docs/performance.md).
    Cycles are still collected, in larger batches."""
    import gc

    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


def note(short: str, full: str) -> None:
    """A notice for stderr: `full` at once with -v, else `short` among the closing notices (said once either way)."""
    from zotero_bridge.cli.console import NOTICE

    log.info("%s", full, extra={NOTICE: short})


def friendly_errors(command):
    """At the CLI's edge: the errors a user can act on (zotrec's own, typed where they arise, and the
    system's OSError on a path) become one `Error: …` line and exit status 1; anything else is a bug
    and says so, with where to report it. Then the run's notices."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        from zotero_bridge.cli.errors import one_line

        try:
            result = command(*args, **kwargs)
        except click.exceptions.Exit:
            _say_notices()
            raise
        except (click.ClickException, click.exceptions.Abort, KeyboardInterrupt):
            _say_notices(drop=True)
            raise
        except Exception as error:  # noqa: BLE001 (sorted by type in one_line; never by message text)
            _say_notices(drop=True)
            raise one_line(error) from None
        _say_notices()
        return result

    return wrapper


def _say_notices(drop: bool = False) -> None:
    from zotero_bridge.cli.console import current

    handler = current()
    if handler is not None:
        if drop:
            handler.notices.clear()
        handler.say_notices()


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


def read_sources(libraries, settings, need_text: bool = True):
    """The items of every --library source, what was skipped said once; `need_text`: a library without one
    item with a title or abstract is an error naming the sources (`[]` in a CSL-JSON file, only notes)."""
    from recommender import progress
    from recommender.errors import EmptyLibraryError
    from zotero_bridge.sources import read_library

    progress.step(f"Reading {', '.join(map(str, libraries))}")
    read = read_library(libraries, settings)
    if need_text and not any(item.text.strip() for item in read.items):
        from recommender.formats.output import safe_text
        from recommender.words import plural

        raise EmptyLibraryError(f"{safe_text(', '.join(map(str, libraries)))}: no item with a title or "
                                f"abstract to learn from ({plural(len(read.items), 'item')} read, "
                                f"{len(read.skipped)} skipped; `zotrec library` lists them)")
    if read.skipped:
        from zotero_bridge.render.reading_list import skipped_text

        summary = skipped_text(read.skipped)  # a short line however many kinds
        note(f"skipped {len(read.skipped)} library entries ({summary}; `zotrec library` lists them)",
             f"Skipped {len(read.skipped)} library entries: {summary}")
        broken = [s for s in read.skipped if s.unreadable]
        if broken:  # one line however many: the first names the place, `zotrec library` lists the rest
            log.warning("%d library entries could not be read; first: %s: %s",
                        len(broken), broken[0].where, broken[0].reason)
    return read


def warn_unread(items, features: str) -> None:
    """One warning when library items are in a script the dense encoder cannot read (recommender/scripts.py):
    how many, and that they are matched on their words instead (recommender/scoring/unread.py)."""
    if features != "dense":  # tf-idf rows read every script; the hybrid's tf-idf half reads them
        return
    from recommender.scripts import library_notice

    if notice := library_notice(item.text for item in items):
        log.warning("%s", notice)


def load_model(model_path: str | None, features: str | None = None):
    """The collaborative model: `model_path` (either kind of `zotrec train` file), "none" for content
    only, or by default the one shipped with zotrec when the features are dense (said once on stderr)."""
    if model_path == "none":
        return None
    if not model_path:
        from recommender.collaborative.dense_model import SHIPPED_MODEL, DenseCollaborativeModel

        if features != "dense" or not SHIPPED_MODEL.exists():
            note("content only", "Scoring on content only (the shipped collaborative part needs dense features).")
            return None
        model = DenseCollaborativeModel.load(SHIPPED_MODEL)
        note("with the shipped collaborative part (--model none: off)",
             f"Scoring with the collaborative part shipped with zotrec (trained on "
             f"{model.card.data or 'unknown data'}; --model none turns it off).")
        return model
    from recommender.collaborative.dense_model import DenseCollaborativeModel
    from recommender.errors import FormatError

    try:
        model = DenseCollaborativeModel.load(model_path)
    except FormatError as error:
        if error.found == RETIRED_MODEL_FORMAT:
            raise click.ClickException(f"{model_path}: a tf-idf collaborative model from an older zotrec, which "
                                       f"zotrec no longer scores with; train a new one with `zotrec train`") from None
        raise
    if features != "dense":  # hybrid rows are sparse: the model's adapter and factors need dense rows
        raise click.ClickException(f"{model_path}: a dense collaborative model needs --features dense")
    note(f"with the collaborative model {model_path}",
         f"Scoring with the collaborative model {model_path} (trained on {model.card.data or 'unknown data'}).")
    return model


def scoring(aggregation: str, model):
    """(aggregation, model) as the Recommender takes them, the aggregation checked before any work."""
    from recommender.scoring.aggregation import parse_aggregation
    from recommender.scoring.fusion import LEARNED

    if aggregation != LEARNED:
        parse_aggregation(aggregation)
    return aggregation, model


def write_output(text: str, output: str | None, inputs=()) -> None:
    """stdout, or FILE through the one safe writer (never over an input, a database, a link or a device)."""
    if output in (None, "-"):
        click.echo(text, nl=False)
        return
    from recommender.formats.output import write_text

    written = write_text(output, text, inputs)
    note(f"wrote {written}", f"Wrote {written}")


def run_inputs(*groups) -> list[str]:
    """Every file a command reads (libraries, corpus files, a model), for the output writer's check."""
    inputs: list[str] = []
    for group in groups:
        if not group:
            continue
        for value in [group] if isinstance(group, (str, Path)) else group:
            path = Path(_library_path(str(value)))
            if path.is_dir():
                inputs.extend(str(p) for p in sorted(path.iterdir()) if p.is_file())
            else:
                inputs.append(str(path))
    return inputs


def _library_path(value: str) -> str:
    """A `zotero:sqlite:PATH` library as its file (sources/dispatch.py's one parser); anything else as given."""
    if not value.startswith("zotero:sqlite:"):
        return value
    from zotero_bridge.sources.dispatch import parse_library_spec

    return parse_library_spec(value).argument


def profile_for(items, collection: str | None):
    """Items in the named collection (or any sub-collection of it); a clear error if none.

    One rule, as everywhere in zotrec: a '/' makes a path from the top ('Thesis/Chapter 2'; '\\/' is a
    slash inside a name); a plain name is any collection of that name; a name or path that fits two
    collections is an error listing them; blank is refused.
    """
    if collection is None:
        return None
    from zotero_bridge.zotero_api.collection_path import ambiguous_path, join_path, split_path

    wanted = collection.strip().strip("/").strip()
    if not wanted:
        raise click.ClickException("--collection is blank; give a collection name or a path such as 'Thesis/Chapter 2'")
    parts = [part.strip() for part in split_path(wanted)]
    explicit = "\\/" in wanted  # 'Thesis\\/Ch2' is the one collection named 'Thesis/Ch2'
    wanted = (join_path(parts) if explicit else "/".join(parts)).casefold()
    known = sorted({path for item in items for path in item.collections})
    every = sorted({join_path(p[:n]) for p in map(split_path, known) for n in range(1, len(p) + 1)})  # parents too
    if len(parts) > 1:
        roots = [path for path in every
                 if (path if explicit else "/".join(split_path(path))).casefold() == wanted]
        if len(roots) > 1:
            raise click.ClickException(str(ambiguous_path(collection.strip(), roots)))
    else:
        named = [path for path in every if split_path(path)[-1].casefold() == parts[0].casefold()]
        roots = [path for path in named if not any(path.casefold().startswith(other.casefold() + "/")
                                                   for other in named if other != path)]
        if len(roots) > 1:
            raise click.ClickException(f"more than one collection is named '{collection.strip()}': "
                                       f"{', '.join(roots)}; give the path, e.g. --collection '{roots[0]}'")
    chosen = [item for item in items
              if any(path.casefold() == root.casefold() or path.casefold().startswith(root.casefold() + "/")
                     for path in item.collections for root in roots)]
    if not chosen:
        hint = f" (collections: {', '.join(known[:10])})" if known else " (this library has no collections)"
        raise click.ClickException(f"no items in collection '{collection}'{hint}")
    return chosen
