"""`zotrec daily`: one day end to end — fetch the arXiv categories, rank them for the library the way
reading-list does, and deliver (an Atom file, an e-mail digest, the rolling Zotero collection). Safe on a
schedule: a lock, each day once, missed days caught up from the window (zotero_bridge/deliver/schedule.py)."""

from __future__ import annotations

import logging
import sys
from datetime import date

import click

from recommender.words import plural

from zotero_bridge.cli.common import (
    DEFAULT_AGGREGATION,
    friendly_errors,
    load_model,
    log,
    profile_for,
    read_sources,
    warn_unread,
    run_inputs,
    scoring,
    source_options,
    source_settings,
    write_output,
)


@click.command("daily")
@source_options
@click.option("--corpus", "corpora", multiple=True, required=True, metavar="arxiv:CATEGORY[,…]|NAME",
              help="What to rank: arxiv:cs.LG,stat.ML (fetched first), beside any stored corpus. Repeatable.")
@click.option("--days", type=click.IntRange(1, 90), default=7, show_default=True,
              help="The window: papers of the last N days are candidates (and missed days are caught up).")
@click.option("-n", "--top", "top_n", type=click.IntRange(min=1), default=10, show_default=True,
              help="Papers a day.")
@click.option("--from", "sources", multiple=True, metavar="URL|PATH",
              help="Fetch from this arXiv API URL or saved Atom answer instead of export.arxiv.org.")
@click.option("--atom", "atom_file", metavar="FILE", help="Write the day's papers as an Atom feed to FILE.")
@click.option("--mail-to", "mail_to", multiple=True, metavar="ADDRESS",
              help="Send the day's papers as an e-mail digest (SMTP settings: ZOTREC_SMTP_* or [mail] in the config).")
@click.option("--sync", "do_sync", is_flag=True,
              help="Also keep the rolling Zotero collection ('Recommended · arXiv …'); --library zotero:web|local.")
@click.option("--collection-name", default=None, help="The collection --sync fills (default from the corpus).")
@click.option("--features", type=click.Choice(["tfidf", "dense", "hybrid"]), default=None,
              help="Text features, as in reading-list (default: dense when it can load).")
@click.option("--model", "model_path", metavar="PATH|none", help="A collaborative model, as in reading-list.")
@friendly_errors
def daily_command(libraries, library_id, library_type, api_key, endpoint, corpora, days, top_n, sources, atom_file,
                  mail_to, do_sync, collection_name, features, model_path):
    """Do one day: fetch, rank and deliver the new papers; a second run the same day writes nothing.

    \b
    Example:
        zotrec daily --library ~/Zotero/zotero.sqlite --corpus arxiv:cs.LG,stat.ML --atom ~/arxiv.xml
        zotrec daily --library zotero:web --corpus arxiv:cs.LG --sync --mail-to me@example.org

    Run it from cron, a systemd user timer or launchd (the README shows each).
    """
    from zotero_bridge.cli.sources import with_auto_corpora
    from zotero_bridge.deliver.schedule import DayLock, DayState, job_key

    if not (atom_file or mail_to or do_sync):
        raise click.UsageError("say where the day goes: --atom FILE, --mail-to ADDRESS and/or --sync")
    today = date.today()
    key = job_key(sorted(libraries), sorted(corpora), atom_file, sorted(mail_to), do_sync, collection_name, top_n)
    with DayLock():
        state = DayState.load(key)
        if state.done_today(today):
            log.info(f"Already done today ({today.isoformat()}): nothing was fetched, written or sent.")
            return
        missed = state.missed_days(today, days)
        if missed:
            log.info(f"Catching up {missed} missed day{'s' if missed != 1 else ''} (their papers are in the window).")
        corpora = with_auto_corpora(corpora, libraries, source_settings(library_id, library_type, api_key, endpoint))
        fetched = _fetch(corpora, sources, days)
        summary = {"fetched": fetched, "missed": missed}
        summary.update(_rank_and_deliver(libraries, (library_id, library_type, api_key, endpoint), corpora, top_n,
                                         atom_file, mail_to, do_sync, collection_name, features, model_path))
        state.mark_done(today, summary)


def _fetch(corpora, sources, days) -> dict:
    """Each stream corpus brought up to date (zotero_bridge/cli/corpus.py's fetch); a stored corpus as it is."""
    from recommender.streams import stream_source
    from zotero_bridge.cli.corpus import fetch_stream_logged

    counts = {}
    for name in corpora:
        stream = stream_source(name)
        if stream is None:
            continue
        report = fetch_stream_logged(stream, sources, days)
        counts[stream.name] = {"new": len(report.new), "updated": len(report.updated), "papers": report.papers}
    return counts


def _rank_and_deliver(libraries, source, corpora, top_n, atom_file, mail_to, do_sync, collection_name, features,
                      model_path) -> dict:
    """The ranking of reading-list (the same library calls), then each delivery; the sync last of all."""
    from recommender.features import make_representation
    from recommender.features.dense import choose_features
    from zotero_bridge.cli.corpus_input import shipped
    from zotero_bridge.cli.feed_corpus import with_feed_corpora
    from zotero_bridge.cli.reading_list import list_context, ranked_list

    features = choose_features(features)
    aggregation, model = scoring(DEFAULT_AGGREGATION, load_model(model_path, features))
    settings = source_settings(*source)
    built = shipped(with_feed_corpora(corpora, libraries), features=features, aggregation=aggregation,
                    model=model, representation=make_representation(features))
    recommender = built.recommender
    done: dict = {}
    if atom_file or mail_to:
        inputs = run_inputs(libraries, corpora, model_path)
        read = read_sources(libraries, settings)
        warn_unread(read.items, features)
        recs, seen = ranked_list(built, libraries, read.items, settings, top_n)
        title = "Reading list · " + ", ".join(corpora)
        context = list_context(libraries, corpora, features, recommender, len(read.items), None, recs, seen.left_out)
        if atom_file:
            from zotero_bridge.render.atom import render_atom

            write_output(render_atom(recs, title=title, library=context.library, corpus=context.corpus), atom_file,
                         inputs)
            log.info(f"Wrote {plural(len(recs), 'paper')} to {atom_file}.")
        if mail_to:
            from zotero_bridge.deliver.mail import send_digest

            sent = send_digest(recs, title, context, mail_to)
            log.info(f"Sent {plural(len(recs), 'paper')} to {', '.join(sent.to)} by {sent.host}.")
        seen.remember(recs, "digest" if mail_to else "feed")
        done["delivered"] = [rec.paper.id for rec in recs]
    if do_sync:
        done["synced"] = _sync(libraries, settings, built, corpora, top_n, collection_name)
    return done


def _sync(libraries, settings, built, corpora, top_n, collection_name) -> int:
    from zotero_bridge.cli.sync import default_collection_name, sync_transport
    from zotero_bridge.sync.run import SyncRequest, run_sync

    target = next((spec for spec in libraries if spec.startswith(("zotero:web", "zotero:local"))), None)
    if target is None:
        raise click.UsageError("--sync writes to --library zotero:web or zotero:local")
    name = collection_name or default_collection_name(corpora)
    report = run_sync(SyncRequest(built.recommender, settings, name, top_n=top_n, transport=sync_transport(target),
                                  caches=built.caches))
    written = report.result
    log.info(f"Synced \"{name}\": " + (f"{written.created} created, {written.linked} added, {written.removed} removed."
                                       if written else "nothing to change."))
    return len(report.plan.of("add")) + len(report.plan.of("link"))
