"""`zotrec daily`: one day end to end — fetch the arXiv categories, rank them for the library the way
reading-list does, and deliver (an Atom file, an e-mail digest, the rolling Zotero collection). Safe on a
schedule: a lock, each day once in the user's calendar (feedback/days.py), missed days caught up from the window
(N papers a day, deliver/schedule.catch_up). Delivery before memory: papers are marked seen, and the day done,
only once the feed was written and parses strictly and the mail server accepted the digest."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path

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
@click.option("--corpus", "corpora", multiple=True, required=True, metavar="STREAM|NAME|auto",
              help="What to rank: a stream (arxiv:cs.LG,stat.ML, medrxiv:radiology, feed:URL, pubmed:QUERY, "
                   "openalex:FILTER, zotero:feeds; fetched first), any stored corpus, or auto (what `zotrec "
                   "sources` proposes for the library). Repeatable.")
@click.option("--days", type=click.IntRange(1, 90), default=7, show_default=True,
              help="The window: papers of the last N days are candidates (and missed days are caught up).")
@click.option("-n", "--top", "top_n", type=click.IntRange(min=1), default=10, show_default=True,
              help="Papers a day.")
@click.option("--from", "sources", multiple=True, metavar="URL|PATH",
              help="Fetch the one stream corpus from this API URL or saved answer instead of its service.")
@click.option("--atom", "atom_file", metavar="FILE",
              help="Keep an Atom feed in FILE: the window's picks, newest first.")
@click.option("--feed-url", metavar="URL", default=None,
              help="Where the feed is served, for its rel=\"self\" link (default: the file's own name).")
@click.option("--mail-to", "mail_to", multiple=True, metavar="ADDRESS",
              help="Send the day's papers as an e-mail digest (SMTP settings: ZOTREC_SMTP_* or [mail] in the config).")
@click.option("--mail-empty", is_flag=True, help="Send the digest on a day with nothing new too (else no mail).")
@click.option("--sync", "do_sync", is_flag=True,
              help="Also keep the rolling Zotero collection ('Recommended · arXiv …'); --library zotero:web|local.")
@click.option("--collection-name", default=None, help="The collection --sync fills (default from the corpus).")
@click.option("--features", type=click.Choice(["tfidf", "dense", "hybrid"]), default=None,
              help="Text features, as in reading-list (default: dense when it can load).")
@click.option("--model", "model_path", metavar="PATH|none", help="A collaborative model, as in reading-list.")
@friendly_errors
def daily_command(libraries, library_id, library_type, api_key, endpoint, corpora, days, top_n, sources, atom_file,
                  feed_url, mail_to, mail_empty, do_sync, collection_name, features, model_path):
    """Do one day: fetch, rank and deliver the new papers; a second run the same day writes nothing.

    \b
    Example:
        zotrec daily --library ~/Zotero/zotero.sqlite --corpus arxiv:cs.LG,stat.ML --atom ~/arxiv.xml
        zotrec daily --library zotero:web --corpus arxiv:cs.LG --sync --mail-to me@example.org

    Run it from cron, a systemd user timer or launchd (the README shows each).
    """
    from zotero_bridge.cli.sources import with_auto_corpora
    from zotero_bridge.deliver.schedule import DayLock, DayState, catch_up, job_key
    from zotero_bridge.feedback.days import today as calendar_today

    if not (atom_file or mail_to or do_sync):
        raise click.UsageError("say where the day goes: --atom FILE, --mail-to ADDRESS and/or --sync")
    today = calendar_today(record=True)
    key = job_key(sorted(libraries), sorted(corpora), atom_file, sorted(mail_to), do_sync, collection_name, top_n)
    with DayLock():
        state = DayState.load(key, today)
        if notice := state.notice():
            log.warning(notice)
        if state.done_today(today):
            log.info(f"Already done today ({today.isoformat()}): nothing was fetched, written or sent.")
            return
        missed = state.missed_days(today)
        count, line = catch_up(missed, days, top_n)
        if line:
            log.info(line)
        corpora = with_auto_corpora(corpora, libraries, source_settings(library_id, library_type, api_key, endpoint))
        fetched, corpora = _fetch(corpora, sources, days)
        summary = {"fetched": fetched, "missed": missed}
        delivery = Delivery(atom_file, feed_url, tuple(mail_to), mail_empty, days)
        summary.update(_rank_and_deliver(libraries, (library_id, library_type, api_key, endpoint), corpora,
                                         (top_n, count, missed), delivery, do_sync, collection_name, features,
                                         model_path))
        state.mark_done(today, summary)  # only after every delivery succeeded: a failed one does the day again


def _fetch(corpora, sources, days) -> tuple[dict, list]:
    """Each stream corpus brought up to date (zotero_bridge/cli/corpus.py's fetch); a stored corpus as it is.
    Returns the counts and the corpora to rank: a stream whose first fetch found nothing yet is left out, with
    a warning, while another corpus is left to rank."""
    from recommender.corpus.stream import NoPapersYet
    from recommender.streams import stream_source
    from zotero_bridge.cli.corpus import fetch_stream_logged

    streams = {name: stream for name in corpora if (stream := stream_source(name)) is not None}
    if sources and len(streams) > 1:
        raise click.UsageError(f"--from stands for one source's answer, and this run fetches {len(streams)} "
                               "streams; give each its own run, or set its API address in the environment "
                               "(docs/streams.md)")
    counts, quiet = {}, set()
    for name, stream in streams.items():
        try:
            report = fetch_stream_logged(stream, sources, days)
        except NoPapersYet as error:
            quiet.add(name)
            if len(quiet) == len(corpora):  # nothing at all to rank
                raise
            log.warning(f"{error}; the other corpora are ranked")
            continue
        counts[stream.name] = {"new": len(report.new), "updated": len(report.updated), "papers": report.papers}
    return counts, [name for name in corpora if name not in quiet]


@dataclass(frozen=True)
class Delivery:
    """Where the day goes: the feed (FILE, its address, the days it keeps) and the digest (to, on a quiet day)."""

    atom_file: str | None
    feed_url: str | None
    mail_to: tuple[str, ...]
    mail_empty: bool
    days: int


def _rank_and_deliver(libraries, source, corpora, counts, delivery, do_sync, collection_name, features,
                      model_path) -> dict:
    """The ranking of reading-list (the same library calls), then each delivery; the papers are remembered as
    seen only after every delivery succeeded and was checked; the sync last of all."""
    from recommender.features import make_representation
    from recommender.features.dense import choose_features
    from zotero_bridge.cli.corpus_input import shipped
    from zotero_bridge.cli.feed_corpus import with_feed_corpora
    from zotero_bridge.cli.reading_list import list_context, ranked_list
    from zotero_bridge.render.digest import library_name

    top_n, count, missed = counts
    features = choose_features(features)
    aggregation, model = scoring(DEFAULT_AGGREGATION, load_model(model_path, features))
    settings = source_settings(*source)
    built = shipped(with_feed_corpora(corpora, libraries), features=features, aggregation=aggregation,
                    model=model, representation=make_representation(features))
    recommender = built.recommender
    done: dict = {}
    if delivery.atom_file or delivery.mail_to:
        inputs = run_inputs(libraries, corpora, model_path)
        read = read_sources(libraries, settings)
        warn_unread(read.items, features)
        recs, seen = ranked_list(built, libraries, read.items, settings, count)
        if missed and len(recs) < count:
            log.info(f"Only {plural(len(recs), 'unseen paper')} in the window for these {missed + 1} days.")
        title = "Reading list · " + library_name(", ".join(corpora))  # a corpus file by its name, not its path
        context = list_context(libraries, corpora, features, recommender, len(read.items), None, recs, seen.left_out,
                               numbered=True)  # the digest numbers its papers 1..N
        if delivery.atom_file:
            _write_feed(recs, title, context, delivery, inputs)
        if delivery.mail_to and (recs or delivery.mail_empty):
            from zotero_bridge.deliver.mail import send_digest

            sent = send_digest(recs, title, context, delivery.mail_to,
                               seen_hint="each paper is shown once")
            log.info(f"Sent {plural(len(recs), 'paper')} to {', '.join(sent.to)} by {sent.host}.")
        elif delivery.mail_to:
            log.info("Nothing new today: no mail was sent (--mail-empty sends one anyway).")
        seen.remember(recs, "digest" if delivery.mail_to else "feed")  # delivered and checked: now they count
        done["delivered"] = [rec.paper.id for rec in recs]
    if do_sync:
        done["synced"] = _sync(libraries, settings, built, corpora, top_n, collection_name)
    return done


def _write_feed(recs, title, context, delivery, inputs) -> None:
    """The feed keeps the window's picks (today's first); it is parsed strictly before and after it is written,
    so a feed a reader would refuse never counts as delivered."""
    from zotero_bridge.errors import BridgeError
    from zotero_bridge.render.atom import parse_feed, render_atom

    path = Path(delivery.atom_file).expanduser()
    previous = None
    if path.is_file():
        try:
            previous = path.read_text(encoding="utf-8")
            parse_feed(previous)
        except (OSError, UnicodeDecodeError, ValueError) as error:
            log.warning(f"{path}: the earlier feed cannot be read ({error}); it starts again with today's papers.")
            previous = None
    text = render_atom(recs, title=title, library=context.library, corpus=context.corpus,
                       self_href=delivery.feed_url or path.name, previous=previous, keep_days=delivery.days)
    try:
        parse_feed(text)
        write_output(text, delivery.atom_file, inputs)
        parse_feed(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BridgeError(f"{path}: the feed does not check out ({error}); no paper was marked seen, so the next "
                          "run does the day again") from None
    log.info(f"Wrote {plural(len(recs), 'paper')} to {delivery.atom_file}.")


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
