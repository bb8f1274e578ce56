"""The `zotrec` command group. Each command lives in its own module here and only wires options to one
library call; the work is done in recommender/ and zotero_bridge/ (docs/architecture.md).

Heavy modules (numpy, scikit-learn, pyzotero) are imported inside commands so that
`zotrec --help` stays fast.
"""

from __future__ import annotations

import click

from zotero_bridge.cli.common import (
    CONTEXT,
    collect_cycles_less_often,
    keep_freed_memory_for_reuse,
    setup_logging,
)
from zotero_bridge.cli.corpus import corpus_group
from zotero_bridge.cli.daily import daily_command
from zotero_bridge.cli.history import history_command
from zotero_bridge.cli.mcp import mcp_command
from zotero_bridge.cli.model import evaluate_group, train_command
from zotero_bridge.cli.reading_list import library_command, reading_list
from zotero_bridge.cli.score import score_command
from zotero_bridge.cli.serve import serve_command
from zotero_bridge.cli.sources import sources_command
from zotero_bridge.cli.sync import sync_command


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
    from recommender.environment import drop_bad_terminal_size

    from zotero_bridge.cli.streams import guard_streams

    guard_streams()  # a stream closed before we started: exit 1 with one line where one still works
    setup_logging(quiet, verbose)
    drop_bad_terminal_size()  # COLUMNS=10**20 would overflow rich and shutil
    keep_freed_memory_for_reuse()
    collect_cycles_less_often()


for command in (reading_list, library_command, score_command, sync_command, daily_command, history_command,
                corpus_group, train_command, evaluate_group):
    cli.add_command(command)
cli.add_command(sources_command)  # zotrec sources (zotero_bridge/cli/sources.py)
cli.add_command(mcp_command)  # zotrec mcp (zotero_bridge/cli/mcp.py)
cli.add_command(serve_command)  # zotrec serve (zotero_bridge/cli/serve.py)
