"""`zotrec reading-list` and `zotrec library`: one library in, a ranked list or what was read out."""

from __future__ import annotations

import logging

import click

from zotero_bridge.cli.common import (
    AGGREGATION_HELP,
    DEFAULT_AGGREGATION,
    friendly_errors,
    profile_for,
    load_model,
    read_sources,
    run_inputs,
    scoring,
    source_options,
    source_settings,
    warn_unread,
    write_output,
)
from zotero_bridge.cli.corpus_input import shipped
from zotero_bridge.cli.feed_corpus import with_feed_corpora
from zotero_bridge.cli.steering import steering_options, warn_undated


@click.command("reading-list")
@source_options
@click.option("--corpus", "corpus_paths", multiple=True, metavar="PATH|NAME",
              help="Corpus file(s) (seed .txt, .jsonl, .json, .csv, .bib) or a stored corpus such as icml2025 or "
                   "arxiv:cs.LG (`zotrec corpus fetch`). Default (also the name icml2025): the bundled ICML 2025 list, enriched by a fetch.")
@click.option("-n", "--top", "top_n", type=click.IntRange(min=0), default=20, show_default=True,
              help="How many papers; 0 means every corpus paper.")
@click.option("--collection", help="Build the profile from this collection only (e.g. 'Thesis/Chapter 2').")
@click.option("--aggregation", default=DEFAULT_AGGREGATION, show_default=True, help=AGGREGATION_HELP + ".")
@click.option("--features", type=click.Choice(["tfidf", "dense", "hybrid"]), default=None,
              help="Text features: tfidf, dense (sentence embeddings, cached) or hybrid (both). "
                   "Default: dense when it can load, else tfidf.")
@click.option("--encoder", default=None, metavar="NAME", help="The sentence encoder of dense features (default minilm).")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "html", "json", "jsonl", "csv", "atom",
                                                   "bibtex", "ris", "csljson"]),
              default="table", show_default=True,
              help="bibtex, ris and csljson make a file to import into Zotero (File → Import…), no API key needed; "
                   "atom a feed for a feed reader (each paper once, by its id).")
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
@click.option("--model", "model_path", metavar="PATH|none",
              help="A collaborative model (.npz from `zotrec train`). Default: the one shipped with zotrec "
                   "(dense features); 'none' scores on content only.")
@click.option("--mail-to", "mail_to", multiple=True, metavar="ADDRESS",
              help="Also send the list as an e-mail digest (SMTP settings: ZOTREC_SMTP_* or [mail] in the config).")
@click.option("--include-seen", is_flag=True,
              help="Show arXiv papers again that a list, sync or digest showed this library on an earlier day.")
@steering_options
@friendly_errors
def reading_list(libraries, library_id, library_type, api_key, endpoint, corpus_paths, top_n, collection,
                 aggregation, features, encoder, fmt, output, model_path, steering, mail_to, include_seen):
    """Rank the corpus for your library and print a reading list with reasons.

    \b
    Example:
        zotrec reading-list --library examples/library.bib -n 10 --format markdown
        zotrec reading-list --library ~/Zotero/zotero.sqlite --format ris -o icml2025.ris
        zotrec reading-list --library examples/library.bib --prefer "time series forecasting" --avoid "RLHF"
    """
    from recommender.features import make_representation
    from recommender.features.dense import choose_features
    from zotero_bridge.render.reading_list import render_recommendations

    from recommender import progress

    progress.step(f"Reading {', '.join(libraries)}")  # a line on a terminal before the slow imports
    inputs = run_inputs(libraries, corpus_paths, model_path)
    if output not in (None, "-"):
        from recommender.formats.output import check_output_path

        check_output_path(output, inputs)  # before any work: a refused -o costs nothing
    features = choose_features(features)
    aggregation, model = scoring(aggregation, load_model(model_path, features))
    settings = source_settings(library_id, library_type, api_key, endpoint)
    read = read_sources(libraries, settings)
    warn_undated(steering, read.items)
    warn_unread(profile_for(read.items, collection) or read.items, features)
    built = shipped(with_feed_corpora(corpus_paths, libraries), features=features, aggregation=aggregation,
                    model=model, representation=make_representation(features, encoder))
    recommender = built.recommender
    from recommender.words import plural

    progress.step(f"Scoring {plural(len(recommender.corpus), 'paper')} against {plural(len(read.items), 'library item')}")
    recs, seen = ranked_list(built, libraries, read.items, settings, top_n, collection=collection, steering=steering,
                             include_seen=include_seen)
    warn_if_weak(recs, profile_for(read.items, collection) or read.items, features)
    title = f"Reading list · {collection}" if collection else "Reading list"
    if fmt in ("bibtex", "ris", "csljson"):
        from zotero_bridge.render.export import render_export

        write_output(render_export(recs, fmt), output, inputs)
        seen.remember(recs, "list")
        return
    context = list_context(libraries, corpus_paths, features, recommender, len(read.items), steering, recs,
                           seen.left_out)
    if mail_to:
        from zotero_bridge.deliver.mail import send_digest

        sent = send_digest(recs, title, context, mail_to, seen_hint="--include-seen shows them")
        logging.getLogger("zotrec").info("Sent %s to %s by %s.", plural(len(recs), "paper"), ", ".join(sent.to), sent.host)
    if fmt == "atom":
        from zotero_bridge.render.atom import render_atom

        write_output(render_atom(recs, title=title, library=context.library, corpus=context.corpus), output, inputs)
        seen.remember(recs, "feed")
        return
    from zotero_bridge.render.reading_list import stdout_hyperlinks

    hyperlinks = fmt == "table" and output in (None, "-") and stdout_hyperlinks()  # OSC 8 on a terminal only
    write_output(render_recommendations(recs, fmt, title=title, context=context, hyperlinks=hyperlinks), output,
                 inputs)
    seen.remember(recs, "list")


def ranked_list(built, libraries, items, settings, top_n, *, collection=None, steering=None, include_seen=False,
                profile=None):
    """The list reading-list shows (and `zotrec daily` delivers, and `zotrec mcp` answers): the source's Library
    through the one ranking, papers shown on earlier days left out; returns (recs, the SeenFilter that left them
    out). `profile`: items to rank against instead of the library's (mcp's `similar`); owned ones stay owned."""
    from dataclasses import replace

    from recommender.pipeline import RankOptions, rank
    from recommender.scoring.ranking import Ranked
    from zotero_bridge.feedback.reading import library_input
    from zotero_bridge.feedback.seen import SeenFilter

    recommender = built.recommender
    seen = SeenFilter.for_run(libraries, settings, include=include_seen,  # arXiv papers shown on earlier days
                              corpus=recommender.corpus)
    library = library_input(libraries, items, recommender.corpus, settings.group, settings)  # --group: source_settings
    library = replace(library, profile=profile if profile is not None else profile_for(library.items, collection))
    recs = rank(recommender, library, RankOptions(top_n=seen.widened(top_n), steering=steering), built.caches)
    return Ranked(seen.apply(recs, top_n), getattr(recs, "unserved", ())), seen


def warn_if_weak(recs, items, features: str) -> None:
    """One warning line when the library is tiny or off-topic for this corpus (recommender/scoring/match.py)."""
    from recommender.scoring.match import weak_library_warning

    warning = weak_library_warning(recs, sum(bool(item.text.strip()) for item in items), features)
    if warning:
        logging.getLogger("zotrec").warning("%s", warning)


def list_context(libraries, corpus_paths, features, recommender, items, steering=None, recs=(), seen_left_out=0,
                 numbered=False):
    """The list's header: what was ranked against what, and how (steering and the interests the list covers,
    most papers first, and the picks below the weak bar: by rank, or by place 1..N when `numbered`)."""
    from collections import Counter

    from recommender.corpus.default import default_corpus
    from recommender.scoring.match import weak_picks_line
    from zotero_bridge.render.html_page import ListContext

    if corpus_paths:
        corpus = ", ".join(corpus_paths)
    elif default_corpus().fetched:
        corpus = "the bundled ICML 2025 list, enriched by the fetched icml2025"
    else:
        corpus = "the bundled ICML 2025 list with the seed abstracts"
    return ListContext(library=", ".join(libraries), corpus=corpus, features=features,
                       model=_model_label(features, recommender), library_items=items,
                       prefer=steering.prefer if steering else (), avoid=steering.avoid if steering else (),
                       recency_half_life=steering.half_life_days if steering else None,
                       interests=tuple(name for name, _ in Counter(r.interest for r in recs if r.interest).most_common()),
                       unserved=getattr(recs, "unserved", ()), seen_left_out=seen_left_out,
                       weak=weak_picks_line(recs, features, numbered))


def _model_label(features: str, recommender) -> str:
    """'' (content only), or the signals the scores fuse and the collaborative model's data."""
    weights, model = recommender.weights, recommender.model
    if weights is None:
        return ""
    names = {"lexical": "tf-idf top5", "learned": "per-user linear model", "collaborative": "collaborative part"}
    parts = [label for name, label in names.items()
             if getattr(weights, name) > 0 and (name != "collaborative" or model is not None)]
    data = model.card.data if model is not None else ""
    return f"{features} {recommender.base} fused with " + ", ".join(parts) + (f" (trained on {data})" if data else "")


@click.command("library")
@source_options
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly_errors
def library_command(libraries, library_id, library_type, api_key, endpoint, fmt):
    """Show what zotrec read from a library: one row per item, then what was skipped and why.

    \b
    Example:
        zotrec library --library examples/library.bib --format json
    """
    from zotero_bridge.render.reading_list import render_library

    read = read_sources(libraries, source_settings(library_id, library_type, api_key, endpoint), need_text=False)
    click.echo(render_library(read.items, read.skipped, fmt), nl=False)
