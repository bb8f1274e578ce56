"""Progress bars on stderr (rich) for steps that take more than a couple of seconds.

Off unless the front end turns them on (the CLI does when stderr is a terminal and not under -q), so
library use, pipes and tests print nothing.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

_ENABLED = False


def enable(on: bool) -> None:
    global _ENABLED
    _ENABLED = on


def enabled() -> bool:
    return _ENABLED


@contextlib.contextmanager
def bar(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A bar with counts, elapsed time and ETA (total None: counts only), gone when done; yields `advance(n)` (a no-op when off)."""
    if not _ENABLED:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=Console(file=sys.stderr), transient=True) as progress:
        task = progress.add_task(label, total=total)
        yield lambda n: progress.advance(task, n)
