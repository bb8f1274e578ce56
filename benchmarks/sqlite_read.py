"""How fast zotrec reads a zotero.sqlite: items per second on a built 10,000-item library.

    .venv/bin/python benchmarks/sqlite_read.py [--items 10000] [--repeat 3] [--userdata 129]

The database comes from tests/zotero_db.py (Zotero's real schema files): every item has three creators,
two tags, a nested collection, a PDF attachment, and every third a note, so the reader also skips
~13,000 child rows. Each timed run includes the private copy of the file, as a real read does.
"""

from __future__ import annotations

import argparse
import logging
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.zotero_db import build_large_library, schema_available  # noqa: E402
from zotero_bridge.sources import sqlite_paths  # noqa: E402
from zotero_bridge.sources import SourceOptions  # noqa: E402
from zotero_bridge.sources.sqlite import read_sqlite_library  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--userdata", type=int, default=129, choices=[123, 125, 129])
    args = parser.parse_args()
    if not schema_available():
        sys.exit("../shared/fixtures/zotero-schema is missing")
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "zotero.sqlite"
        started = time.perf_counter()
        build_large_library(path, args.items, userdata=args.userdata)
        print(f"built {args.items} items (userdata {args.userdata}) in {time.perf_counter() - started:.1f} s, "
              f"{path.stat().st_size / 2**20:.1f} MiB")
        for label, copy in (("copy (default)", True), ("immutable", False)):
            seconds = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                read = read_sqlite_library(str(path), SourceOptions()) if copy else _read_in_place(path)
                seconds.append(time.perf_counter() - started)
                assert len(read.items) == args.items, len(read.items)
            best, median = min(seconds), statistics.median(seconds)
            print(f"{label:15s} {len(read.items)} items, {len(read.skipped)} skipped: best {best:.3f} s "
                  f"({args.items / best:,.0f} items/s), median {median:.3f} s over {args.repeat} runs")
    print(f"Python {platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}, "
          f"{platform.machine()} {platform.system()}")


def _read_in_place(path: Path):
    """The immutable fallback, timed alone (what a read costs without the copy)."""
    original = sqlite_paths._copy_database

    def refuse(*_args):
        raise OSError("benchmark: no copy")

    sqlite_paths._copy_database = refuse
    logging.getLogger("zotero_bridge").setLevel(logging.ERROR)
    try:
        return read_sqlite_library(str(path), SourceOptions())
    finally:
        sqlite_paths._copy_database = original
        logging.getLogger("zotero_bridge").setLevel(logging.NOTSET)


if __name__ == "__main__":
    main()
