"""`zotrec history`: what zotrec recommended to each library, and what the user did with it."""

from __future__ import annotations

import click

from recommender.words import plural
from zotero_bridge.cli.common import friendly_errors


@click.command("history")
@click.option("--library", "library", metavar="user:ID|group:ID", help="Only this library.")
@click.option("--runs", "show_runs", type=click.IntRange(min=0), default=5, show_default=True,
              help="How many recent runs to list (with their papers).")
@click.option("--forget", metavar="user:ID|group:ID|all",
              help="Forget what zotrec learned about this library (or all): it then starts afresh.")
@click.option("--reset-seen", is_flag=True,
              help="Forget which daily (arXiv) papers were shown, for every library; a damaged seen.sqlite is "
                   "moved aside.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@friendly_errors
def history_command(library, show_runs, forget, reset_seen, fmt):
    """Show the recommendations zotrec wrote (per library, per run) and each one's fate.

    A fate is read from Zotero on the next sync: kept (tagged, filed elsewhere, annotated, noted or
    edited), dismissed (trashed, deleted, or taken out of the collection) or untouched. zotrec never
    recommends a dismissed paper again, ranks papers like it lower, learns from kept ones, and lets
    papers left untouched for 3 runs step aside. The memory is history.sqlite in the user data folder.

    \b
    Example:
        zotrec history --library user:1234567
        zotrec history --forget user:1234567
    """
    from zotero_bridge.feedback.history_view import render_history
    from zotero_bridge.feedback.memory import Memory

    if reset_seen:
        from zotero_bridge.feedback.seen import reset_seen as start_afresh

        click.echo(start_afresh())
        return

    with Memory(read_only=not forget) as memory:  # only --forget writes
        if forget:
            count = memory.forget(None if forget == "all" else forget)
            click.echo(f"Forgot {plural(count, 'paper')}{'' if forget == 'all' else ' of ' + forget}.")
            return
        click.echo(render_history(memory, library, show_runs, fmt), nl=False)
