"""Standard streams that are closed when zotrec starts (`>&-`, `2>&-`, `<&-`; Python then sets them to None).

Every command otherwise failed at its first print, silently or with a traceback into nowhere: with stderr
closed each one exited 1 unseen, with stdout closed it exited 0 having written nothing. Here a closed stdout
becomes a stream whose first write is a StreamClosed error (so the command fails with exit 1 and one `Error:` line on
stderr, and a command that writes only to `-o FILE` still succeeds); a closed stderr drops warnings and
progress but sends the final `Error:` line to stdout, the one stream that still works; a closed stdin is
left to the reader of `--library -`, which names it.
"""

from __future__ import annotations

import io
import sys

import click

from zotero_bridge.errors import BridgeError


class StreamClosed(BridgeError, click.ClickException):
    """A standard stream the command needs was closed before zotrec started: one `Error:` line and exit 1,
    inside a command or outside one (`--help`)."""

    def __init__(self, message: str) -> None:
        click.ClickException.__init__(self, message)


class _ClosedOutput(io.TextIOBase):
    """Standard output that was closed: nothing can be written, and saying so is the command's failure."""

    encoding, errors = "utf-8", "strict"

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if not text:
            return 0
        raise StreamClosed(f"{self.name} is closed; nothing could be written to it")

    def flush(self) -> None:
        return None


class _ErrorsToStdout(io.TextIOBase):
    """Standard error that was closed: warnings and progress are dropped, an `Error:` line goes to stdout."""

    encoding, errors = "utf-8", "strict"

    def __init__(self) -> None:
        super().__init__()
        self._line = ""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        self._line += text
        *lines, self._line = self._line.split("\n")
        for line in lines:
            if line.startswith("Error:") and sys.stdout is not None and not isinstance(sys.stdout, _ClosedOutput):
                try:
                    sys.stdout.write(line + "\n")
                    sys.stdout.flush()
                except (OSError, ValueError):
                    pass
        return len(text)

    def flush(self) -> None:
        return None


def guard_streams() -> None:
    """Replace a standard output or error that was closed before zotrec started (see the module's doc)."""
    if sys.stdout is None:
        sys.stdout = _ClosedOutput("standard output")
    if sys.stderr is None:
        sys.stderr = _ErrorsToStdout()
