"""The CLI's edge for errors: sorted by type, never by message text.

zotrec's own errors (recommender.errors.RecommenderError and its kinds, raised where the problem is
found) and the system's OSError (a path that cannot be read or written) are things a user can fix:
one `Error: …` line, exit status 1. Anything else is a bug in zotrec and says so, with a hint to
report it, exit status 70 (EX_SOFTWARE); -v adds the traceback.
"""

from __future__ import annotations

import logging

import click

BUG_EXIT_STATUS = 70


class Bug(click.ClickException):
    """An exception zotrec did not expect: shown as a bug, never dressed up as a user's mistake."""

    exit_code = BUG_EXIT_STATUS

    def show(self, file=None) -> None:  # not click's "Error: " line: this is not the user's mistake
        click.echo(self.message, file=file, err=True)


def one_line(error: BaseException) -> click.ClickException:
    from recommender.errors import RecommenderError
    from recommender.formats.output import safe_text

    if isinstance(error, RecommenderError):
        return click.ClickException(safe_text(error))
    if isinstance(error, OSError):
        return click.ClickException(safe_text(_os_error(error)))
    logging.getLogger("zotrec").debug("the bug's traceback:", exc_info=error)
    kind = type(error).__name__
    detail = safe_text(str(error).strip().splitlines()[0]) if str(error).strip() else ""
    return Bug(f"zotrec hit a bug ({kind}{': ' + detail if detail else ''}). Please report it with the command "
               f"you ran; `zotrec -v …` shows the traceback.")


def _os_error(error: OSError) -> str:
    """'PATH: No such file or directory' (both paths of a rename), else the system's words."""
    reason = error.strerror or str(error) or type(error).__name__
    places = [str(p) for p in (error.filename, error.filename2) if p is not None]
    return f"{' → '.join(places)}: {reason}" if places else reason
