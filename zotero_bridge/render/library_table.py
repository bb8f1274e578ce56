"""`zotrec library`'s table: columns sized by their content so titles get the room, empty columns dropped,
and at a narrow width the least needed columns left out (named under the table) rather than every column
squeezed until titles break every few characters."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import NamedTuple

from recommender.items import LibraryItem

PIPE_WIDTH = 160  # on a pipe or file no terminal says how wide: wide enough that titles read whole
TITLE_MIN = 30  # a title narrower than this reads badly: other columns are dropped first


class Column(NamedTuple):
    name: str
    cell: Callable[[LibraryItem], str]
    cap: int  # the most columns of text it takes
    drop: int  # order in which it is left out at a narrow width (0: never)


def _authors(item: LibraryItem) -> str:
    names = [creator.name for creator in item.creators]
    return ", ".join(names[:3]) + (" et al." if len(names) > 3 else "")


COLUMNS = (
    Column("key", lambda item: item.key, 24, 0),
    Column("type", lambda item: item.item_type, 16, 4),
    Column("title", lambda item: item.title, 10_000, 0),
    Column("creators", _authors, 28, 5),
    Column("year", lambda item: str(item.year or ""), 4, 0),
    Column("DOI", lambda item: item.doi, 28, 1),
    Column("tags", lambda item: ", ".join(item.tags), 24, 2),
    Column("collections", lambda item: ", ".join(item.collections), 24, 3),
)


def table_width() -> int:
    """$COLUMNS when set (a bad value is one warning naming it), the terminal's width, or PIPE_WIDTH on a pipe."""
    from recommender.environment import positive_number

    if os.environ.get("COLUMNS", "").strip() or not sys.stdout.isatty():
        return int(positive_number("COLUMNS", PIPE_WIDTH, int))
    return shutil.get_terminal_size(fallback=(PIPE_WIDTH, 24)).columns


def layout(rows: Sequence[Sequence[str]], width: int) -> tuple[list[int], list[int], list[str]]:
    """Which columns to show and how wide: (shown column indexes, their widths, names left out for width).

    Empty columns go; each other column is as wide as its longest cell (capped, at least its name); the
    title takes what is left, and while it would be under TITLE_MIN the next droppable column is left out.
    """
    def natural(index: int) -> int:
        longest = max((len(row[index]) for row in rows), default=0)
        return max(len(COLUMNS[index].name), min(COLUMNS[index].cap, longest))

    shown = [i for i, column in enumerate(COLUMNS) if column.name in ("key", "title")
             or any(row[i].strip() for row in rows)]
    title = [c.name for c in COLUMNS].index("title")
    title_need = min(TITLE_MIN, max((len(row[title]) for row in rows), default=5))
    dropped: list[str] = []

    def room() -> int:  # what the title gets: the width less borders, padding and the other columns
        return width - (1 + 3 * len(shown)) - sum(natural(i) for i in shown if i != title)

    for index in sorted((i for i in shown if COLUMNS[i].drop), key=lambda i: COLUMNS[i].drop):
        if room() >= title_need:
            break
        shown.remove(index)
        dropped.append(COLUMNS[index].name)
    longest_title = max((len(row[title]) for row in rows), default=5)
    widths = [max(5, min(room(), longest_title)) if i == title else natural(i) for i in shown]
    return shown, widths, dropped


def render_table(items: Sequence[LibraryItem], heading: str, clean: Callable[[str], str],
                 width: int | None = None) -> str:
    """The items as a text table `width` columns wide (default: table_width()); `clean` makes cells terminal-safe."""
    import io

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    width = max(40, width or table_width())
    rows = [[clean(column.cell(item)) for column in COLUMNS] for item in items]
    shown, widths, dropped = layout(rows, width)
    table = Table(title=heading)
    for index, column_width in zip(shown, widths, strict=True):
        no_wrap = COLUMNS[index].name == "year"
        table.add_column(COLUMNS[index].name, width=column_width, overflow="fold", no_wrap=no_wrap)
    for row in rows:
        table.add_row(*(Text(row[i]) for i in shown))
    console = Console(file=io.StringIO(), width=width, force_terminal=False, color_system=None)
    console.print(table)
    text = console.file.getvalue()
    if dropped:
        note = f"Not shown at {width} columns: {', '.join(dropped)} (a wider terminal or --format json shows them)"
        text += textwrap.fill(note, width) + "\n"
    return text
