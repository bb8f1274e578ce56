"""Progress of slow work, reported by the library and shown by whoever runs it.

The library says what it is doing now (`step`) and advances bars with the work (`bar`); a front end
decides how that shows by installing a `Reporter` (`use`): the CLI draws a live status line and bars
on a terminal and logs one line per step of `train`/`evaluate` elsewhere. With none installed
(library use, tests) nothing is shown and nothing is imported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import ContextManager, Protocol

Advance = Callable[[int], None]


class Reporter(Protocol):
    def step(self, text: str, *, log: bool) -> None:
        """What is being done now (replaces the previous step's line); `log`: a log line off a terminal."""

    def bar(self, label: str, total: int | None, *, log_steps: bool) -> ContextManager[Advance]:
        """A bar of `total` units (None: counts only); `log_steps`: one log line per unit off a terminal."""

    def finish(self) -> None:
        """Take the live display off the screen (before results are written to it)."""


_reporter: Reporter | None = None
_said = ""  # the step shown now, for `doing` to put back


def use(reporter: Reporter | None) -> None:
    """Show progress through `reporter` from now on (None: show nothing)."""
    global _reporter
    _reporter = reporter


def enabled() -> bool:
    """Whether anything is shown (a reporter is installed)."""
    return _reporter is not None


def step(text: str, *, log: bool = False) -> None:
    """Say what is being done now ('Reading library.bib', 'Scoring 3,330 papers'); `log`: also one log line
    when not on a terminal (the steps of `train` and `evaluate`, which run for minutes)."""
    global _said
    _said = text
    if _reporter is not None:
        _reporter.step(text, log=log)


@contextlib.contextmanager
def doing(text: str) -> Iterator[None]:
    """A step inside another ('Embedding 36 new texts' while 'Scoring …'): the outer step's line comes back after."""
    outer = _said
    step(text)
    try:
        yield
    finally:
        if outer:
            step(outer)


def finish() -> None:
    if _reporter is not None:
        _reporter.finish()


@contextlib.contextmanager
def bar(label: str, total: int | None, *, log_steps: bool = False) -> Iterator[Advance]:
    """A bar that advances by `advance(n)` (a no-op with no reporter), gone when done."""
    if _reporter is None:
        yield lambda n: None
        return
    with _reporter.bar(label, total, log_steps=log_steps) as advance:
        yield advance
