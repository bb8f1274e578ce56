"""Errors the recommender raises for input a user can fix."""

from __future__ import annotations


class RecommenderError(Exception):
    """Base class: the message is one line a user can act on."""


class InputError(RecommenderError):
    """A file or entry could not be read; the message names the file and line or entry."""

    def __init__(self, message: str, *, path: object = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line


class EmptyLibraryError(RecommenderError):
    """The library has no item with any text to build a profile from."""


class SettingError(RecommenderError, ValueError):
    """An option or setting zotrec cannot use (an unknown aggregation or format, a blank --prefer text, two
    users with one id…); the message names it. A ValueError too, for callers of the library that catch that."""


class FormatError(InputError):
    """A file zotrec writes (a model, a stored corpus) of another format or from a newer zotrec, told apart from a
    damaged one by type: `found` is the format it says it has (None when it names none)."""

    def __init__(self, message: str, *, path: object = None, found: str | None = None, newer: bool = False) -> None:
        super().__init__(message, path=path)
        self.found, self.newer = found, newer


class ServerLimitError(RecommenderError):
    """A server's answer passed one of zotrec's limits (bytes, JSON depth, time, redirects, pages): the
    message names the server and the limit. Never retried: the server would send the same again."""

    def __init__(self, message: str, *, server: str = "", limit: str = "") -> None:
        super().__init__(message)
        self.server = server
        self.limit = limit
