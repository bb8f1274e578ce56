"""What a `zotrec` command shows on stderr: log lines, the closing notices, and progress.

One handler on the root logger says every line. On a terminal it prints through one rich console that
also draws a live status line ("Reading library.bib…") and the bars, so a warning lands above the bar,
never inside it, and a long line wraps between words. Elsewhere (a pipe, a file) lines are plain and
bars are not drawn; `train` and `evaluate` log one line per step instead. Notices (features, model,
what was written) are kept by the handler and said at the end, one short line each; -v says them
where they happen.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Iterator
from typing import TextIO

NOTICE = "zotrec.notice"  # the `extra` key that marks a record as a notice; its value is the short form
# Loggers whose INFO lines are notices too (said once per run, at the end unless -v).
NOTICE_LOGGERS = ("recommender.features", "recommender.corpus.enrich")
QUIET_LIBRARIES = ("httpx2", "httpcore", "urllib3", "implicit", "pylatexenc", "bibtexparser")
DASK_LOGGERS = ("distributed", "dask", "tornado", "bokeh")
OUR_LOGGERS = ("zotrec", "recommender", "zotero_bridge")


class StderrHandler(logging.Handler):
    """Each record as one line on stderr (`Warning: ` before warnings); notices kept for `say_notices`."""

    def __init__(self, stream: TextIO, *, verbose: bool, terminal: bool) -> None:
        super().__init__(logging.DEBUG)
        self.stream, self.verbose = stream, verbose
        self.notices: list[str] = []
        self.reporter = TerminalReporter(stream) if terminal else PlainReporter()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            short = _notice(record)
            if short is not None and not self.verbose:
                if short not in self.notices:
                    self.notices.append(short)
                return
            self.say(_line(record))
        except Exception:  # noqa: BLE001 (logging must never raise: the standard handler's rule)
            self.handleError(record)

    def say(self, line: str) -> None:
        if isinstance(self.reporter, TerminalReporter):
            self.reporter.print(line)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    def say_notices(self) -> None:
        """The run's notices, one short line each (nothing under -q: the logger stops them earlier)."""
        self.reporter.finish()
        for notice in self.notices:
            self.say(notice)
        self.notices.clear()


def _notice(record: logging.LogRecord) -> str | None:
    """The short form of a notice record, None for any other record."""
    short = getattr(record, NOTICE, None)
    if short is not None:
        return str(short)
    if record.levelno == logging.INFO and record.name.startswith(NOTICE_LOGGERS):
        return record.getMessage().rstrip(".")
    return None


def _line(record: logging.LogRecord) -> str:
    from recommender.formats.output import safe_text  # no escape sequence from a title reaches the terminal

    prefix = "Warning: " if record.levelno >= logging.WARNING else ""
    text = record.getMessage()
    if record.exc_info and record.levelno <= logging.DEBUG:
        text += "\n" + logging.Formatter().formatException(record.exc_info)
        return prefix + "\n".join(safe_text(part) for part in text.split("\n"))
    return safe_text(prefix + text)


def install(stream: TextIO, *, quiet: bool, verbose: bool) -> StderrHandler:
    """Our one handler on the root logger (replacing only an earlier one of ours), the levels, and the
    progress reporter: bars on a terminal unless -q; Dask and chatty libraries quiet unless -v."""
    from recommender import progress

    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, StderrHandler)]:
        old.reporter.finish()
        root.removeHandler(old)
    terminal = not quiet and _is_terminal(stream)
    handler = StderrHandler(stream, verbose=verbose, terminal=terminal)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING)
    ours = logging.DEBUG if verbose else logging.ERROR if quiet else logging.INFO
    for name in OUR_LOGGERS:
        logging.getLogger(name).setLevel(ours)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.ERROR)
    progress.use(None if quiet else handler.reporter)
    return handler


def quiet_dask() -> None:
    """Dask's in-process loggers (scheduler, nanny) and its workers' (through the environment they inherit)
    say only what breaks a run, and print through our handler, not their own."""
    import os

    os.environ["DASK_LOGGING__DISTRIBUTED"] = "critical"
    for name in DASK_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL)
        for own in list(logger.handlers):
            logger.removeHandler(own)
        logger.propagate = True


def current() -> StderrHandler | None:
    return next((h for h in logging.getLogger().handlers if isinstance(h, StderrHandler)), None)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream is not a terminal
        return False


class PlainReporter:
    """Off a terminal: no bars, no status line; a bar asked to log its steps logs one line per unit."""

    def step(self, text: str, *, log: bool) -> None:
        if log:
            logging.getLogger("zotrec.progress").info("%s", text)

    @contextlib.contextmanager
    def bar(self, label: str, total: int | None, *, log_steps: bool) -> Iterator:
        if not log_steps:
            yield lambda n: None
            return
        started, done = time.monotonic(), 0
        log = logging.getLogger("zotrec.progress")

        every = 1 if not total or total <= 20 else total / 10  # a line a step, or a line each tenth of many

        def advance(n: int) -> None:
            nonlocal done
            before, done = done, done + n
            if int(done // every) > int(before // every) or done == total:
                of = f" of {total}" if total is not None else ""
                log.info("%s: %d%s done (%.0f s)", label, done, of, time.monotonic() - started)

        yield advance

    def finish(self) -> None:
        pass


class TerminalReporter:
    """On a terminal: one live display on stderr, a status line and the bars under it, started on the first
    step or bar and taken off the screen before results are written."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._console = None
        self._progress = None
        self._status = None

    @property
    def console(self):
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream, force_terminal=True, highlight=False, markup=False, emoji=False)
        return self._console

    def print(self, line: str) -> None:
        from rich.text import Text

        self.console.print(Text(line), overflow="fold")  # above the live display when one is drawn

    def _live(self):
        if self._progress is None:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), _on_bars(BarColumn()),
                                      _on_bars(MofNCompleteColumn()), TimeElapsedColumn(),
                                      _on_bars(TimeRemainingColumn()), console=self.console, transient=True,
                                      refresh_per_second=8)
            self._progress.start()
        return self._progress

    def step(self, text: str, *, log: bool) -> None:
        live = self._live()
        if self._status is None:
            self._status = live.add_task(text, total=None)
        else:
            live.update(self._status, description=text)

    @contextlib.contextmanager
    def bar(self, label: str, total: int | None, *, log_steps: bool) -> Iterator:
        live = self._live()
        task = live.add_task(label, total=total)
        try:
            yield lambda n: live.advance(task, n)
        finally:
            live.remove_task(task)

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = self._status = None


def _on_bars(column):
    """`column` drawn for bars only, blank on the status line (a task without a total)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class OnBars(ProgressColumn):
        def render(self, task):
            return column.render(task) if task.total is not None else Text("")

    return OnBars()
