from zotero_bridge.cli.main import cli

cli(prog_name="zotrec")
