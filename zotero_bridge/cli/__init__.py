"""The `zotrec` command line: thin click wiring, one module per command group; renderers live in
zotero_bridge/render. Imports everything else lazily, inside the commands."""

from zotero_bridge.cli.common import DEFAULT_AGGREGATION
from zotero_bridge.cli.main import cli

__all__ = ["DEFAULT_AGGREGATION", "cli"]
