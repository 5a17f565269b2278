"""One page of a result: its rows, taken one at a time as sqlite3 makes them.

A `Page` is the cursor's row factory. Each row is looked at once, the moment it exists,
and only the page's rows are kept: the rows `offset` skips are dropped at once, and the
page ends (`Full`) when it holds `max_rows` rows or `max_bytes` of JSON. So the server
holds one row beyond its page, however many rows a fetch asks for and however large
their values: a hundred 10 MB BLOBs are summarised one by one, never held together.
"""

import sys
from collections.abc import Sequence
from typing import Any

from orjson import dumps

from .cells import Cell, Row, cell

MAX_NAME_SHOWN = 1024
"""Characters of a column's name shown at most."""
MIN_SHARE = 64
"""Characters a cell keeps at least when a row alone is over the page's bytes: a row of
SQLite's 2,000 columns at most still makes a few hundred kilobytes."""


class Full(Exception):
    """The page holds all it may: the statement has more rows than the page."""


class Page:
    """The columns and rows of one page, and whether more follow; `take` is the row factory.

    The columns' names count in `max_bytes` with the rows, each cut at `MAX_NAME_SHOWN`
    characters, and shorter while they are over half of it: a view's 900,000-character
    column names made 36 MB of one result, and 2,000 names of 1,024 control characters
    (six bytes of JSON each) 13 MB.
    `bytes_left` is what is left of `max_bytes` once the page is full (below zero: spent).
    """

    # Slots, and counters that count down: `take` runs for every row of every result.
    __slots__ = ("_max_cell", "_room", "_skip", "bytes_left", "columns", "more", "rows")

    def __init__(
        self, columns: list[str], *, offset: int, max_rows: int, max_cell: int, max_bytes: int
    ) -> None:
        names, size = fitted(columns, MAX_NAME_SHOWN, max_bytes // 2)
        self.columns = [str(name) for name in names]
        self.rows: list[Row] = []
        self.more = False
        self._skip = offset
        self._room = max_rows
        self._max_cell = max_cell
        # For the names and the rows as JSON, a comma each.
        self.bytes_left = max_bytes - size

    def take(self, cursor: object, row: tuple[Any, ...]) -> None:
        """Keep `row` as JSON cells if the page has room for it (sqlite3's row factory).

        A row whose JSON (orjson, which refuses bytes) is at most `max_cell` long goes out
        as sqlite3 made it: it holds no BLOB, and no text over the cap, since a JSON string
        is longer than its text. Other rows are made cell by cell. The first row is kept
        whatever its size, so that a page is never empty while rows remain, its cells cut
        shorter when it alone is over `max_bytes`.

        Raises:
            Full: the page has no room for `row`, which is left out.
        """
        if self._skip:
            self._skip -= 1
            return
        try:
            size = len(dumps(row))
        except TypeError:  # a BLOB
            size = self._max_cell + 1
        if size > self._max_cell:
            # The first row alone over the page (500 cells of 60,000 characters made 60 MB)
            # is cut to fit; a later one is left for the next page.
            room = sys.maxsize if self.rows else self.bytes_left
            row, size = fitted(row, self._max_cell, room)
        self._room -= 1
        self.bytes_left -= size + 1
        if self._room < 0 or (self.bytes_left < 0 and self.rows):
            self.more = True
            raise Full
        self.rows.append(row)


def fitted(values: Sequence[object], share: int, room: int) -> tuple[tuple[Cell, ...], int]:
    """Return `values` as cells cut at `share` characters, and the size of their JSON.

    While that is over `room` bytes, they are cut shorter in proportion to what is over
    (a character may take six bytes of JSON, as a control character does), down to
    `MIN_SHARE` characters each.
    """
    made = tuple(cell(value, share) for value in values)
    size = len(dumps(made))
    while size > room and share > MIN_SHARE:
        share = max(MIN_SHARE, share * room // size)
        made = tuple(cell(value, share) for value in values)
        size = len(dumps(made))
    return made, size
