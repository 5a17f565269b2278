"""One page of a result: its rows, taken one at a time as sqlite3 makes them.

A `Page` is the cursor's row factory. Each row is looked at once, the moment it exists,
and only the page's rows are kept: the rows `offset` skips are dropped at once, and the
page ends (`Full`) when it holds `max_rows` rows or `max_bytes` of JSON. So the server
holds one row beyond its page, however many rows a fetch asks for and however large
their values: a hundred 10 MB BLOBs are summarised one by one, never held together.
"""

from typing import Any

from orjson import dumps

from .cells import Row, cell

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
    characters: a view's 900,000-character column names made 36 MB of one result.
    `bytes_left` is what is left of `max_bytes` once the page is full (below zero: spent).
    """

    # Slots, and counters that count down: `take` runs for every row of every result.
    __slots__ = ("_max_cell", "_room", "_skip", "bytes_left", "columns", "more", "rows")

    def __init__(
        self, columns: list[str], *, offset: int, max_rows: int, max_cell: int, max_bytes: int
    ) -> None:
        self.columns = [str(cell(name, MAX_NAME_SHOWN)) for name in columns]
        self.rows: list[Row] = []
        self.more = False
        self._skip = offset
        self._room = max_rows
        self._max_cell = max_cell
        # For the names and the rows as JSON, a comma each.
        self.bytes_left = max_bytes - len(dumps(self.columns))

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
            made = tuple(cell(value, self._max_cell) for value in row)
            size = len(dumps(made))
            share = self._max_cell
            while size > self.bytes_left and not self.rows and share > MIN_SHARE:
                # Alone over the page (500 cells of 60,000 characters made 60 MB): its cells
                # are cut shorter in proportion to what is over until it fits (a character
                # may take six bytes of JSON, as a control character does).
                share = max(MIN_SHARE, share * self.bytes_left // size)
                made = tuple(cell(value, share) for value in row)
                size = len(dumps(made))
            row = made
        self._room -= 1
        self.bytes_left -= size + 1
        if self._room < 0 or (self.bytes_left < 0 and self.rows):
            self.more = True
            raise Full
        self.rows.append(row)
