"""--prefer, --avoid and --recent-half-life, shared by reading-list, sync and score: one `steering` argument."""

from __future__ import annotations

import functools

import click

PREFER_HELP = ("Lean the list towards papers like TEXT (a sentence or a few keywords); repeat for more. "
               "Papers it matches say so.")
AVOID_HELP = "Push papers like TEXT down the list; repeat for more."
HALF_LIFE_HELP = ("Weight library items by when they were added: an item DAYS older than the newest counts "
                  "half (undated items: the median weight). Default: off, every item counts the same.")


def steering_options(command):
    """The three options, handed to `command` as one `steering` keyword (a Steering, or None when unused)."""

    @functools.wraps(command)
    def wrapper(*args, prefer=(), avoid=(), recent_half_life=None, **kwargs):
        return command(*args, steering=steering_from(prefer, avoid, recent_half_life), **kwargs)

    options = [
        click.option("--prefer", multiple=True, metavar="TEXT", help=PREFER_HELP),
        click.option("--avoid", multiple=True, metavar="TEXT", help=AVOID_HELP),
        click.option("--recent-half-life", "recent_half_life", metavar="DAYS", help=HALF_LIFE_HELP),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def steering_from(prefer, avoid, recent_half_life):
    """A Steering from the options as given (None when none is used); a bad value is one line naming its option."""
    if not prefer and not avoid and recent_half_life is None:
        return None
    from recommender.errors import SettingError
    from recommender.scoring.steering import Steering, checked_half_life, checked_texts

    try:
        return Steering(prefer=checked_texts("--prefer", prefer), avoid=checked_texts("--avoid", avoid),
                        half_life_days=None if recent_half_life is None
                        else checked_half_life(recent_half_life, "--recent-half-life"))
    except SettingError as error:
        from recommender.formats.output import safe_text

        raise click.ClickException(safe_text(error)) from None


def warn_undated(steering, items) -> None:
    """One warning when --recent-half-life is given but no library item has a date added it can read."""
    if steering is None or steering.half_life_days is None:
        return
    from recommender.scoring.recency import added_day

    if not any(added_day(item.date_added) for item in items):
        from zotero_bridge.cli.common import log

        log.warning("--recent-half-life: no library item has a date added, so every item counts the same "
                    "(zotero:sqlite, zotero:web and Zotero JSON carry it; BibTeX needs a timestamp field)")
