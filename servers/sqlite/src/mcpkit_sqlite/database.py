"""One database: its guarded connections, and the statements run on them.

Each database has a reader, opened `mode=ro`, and a writer when it may be written, each a
`Session`: one statement at a time on each, held to its time budget. The reader cannot undo
the rollback journal of a writer that stopped mid-transaction (another process, which
crashed): the writer, where there is one, does it for the reader.
"""

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, cast

import aiosqlite
import anyio

from .cells import Params, bind
from .config import DatabaseSpec
from .errors import SqliteError
from .guard import Budget
from .page import Full, Page
from .results import Changed, Format, Returned, Rows
from .session import Session

FETCH = 10_001
"""Rows fetched in one hop to the connection's thread (each hop costs some 0.1 ms): a
whole page of the largest size and the row that says whether more follow. Rows go to a
`Page` as they are made, so a large fetch holds no more memory than a small one."""
RETURNED_ROWS = 500
"""Rows of a writing statement's RETURNING shown at most (as read_query's page by default)."""
OWN_SECONDS = 10.0
"""Seconds one of the server's own statements may take (a row count, a table's columns),
or less if the operator's budget for a query is less."""
Tick = Callable[[float], None]
WITH_ROWIDS = (
    "SELECT 1 FROM pragma_table_list"
    " WHERE schema = 'main' AND type = 'table' AND NOT wr AND name = ? COLLATE NOCASE"
)
"""Whether a table of main has rowids (it is not WITHOUT ROWID)."""


async def set_rowid(
    connection: aiosqlite.Connection, writes: set[tuple[int, str | None]], *, in_tables: int
) -> bool:
    """Return whether a statement that left the last insert rowid as it was set it anyway.

    An INSERT into a table with rowids that inserted set it, even to the one it was
    before (the first row of a second table). An upsert that updated, an insert into a
    view (its trigger's rowid is undone) or into a table WITHOUT ROWID did not.
    """
    if not in_tables or len(writes) != 1:
        return False
    [(action, table)] = writes
    if action != sqlite3.SQLITE_INSERT:
        return False
    found = await connection.execute_fetchall(WITH_ROWIDS, (table,))
    return bool(found)


class Database:
    """A database the operator named: reads on one connection, writes (if allowed) on another."""

    def __init__(
        self, spec: DatabaseSpec, reader: Session, writer: Session | None, seconds: float
    ) -> None:
        """`seconds`: the operator's time budget of a query, which the server's own keep too."""
        self.spec = spec
        self.name = spec.name
        self.reader = reader
        self.writer = writer
        self.own_seconds = min(OWN_SECONDS, seconds)

    @classmethod
    async def open(cls, spec: DatabaseSpec, seconds: float) -> "Database":
        """Open the connections of `spec`; a query may take `seconds`."""
        reader = await Session.open(spec.path, writes=False)
        writer = (
            await Session.open(spec.path, writes=True, growth=spec.max_growth)
            if spec.writable
            else None
        )
        if writer is not None:
            reader.undo_journal = partial(undo_journal, writer, min(OWN_SECONDS, seconds))
        return cls(spec, reader, writer, seconds)

    async def close(self) -> None:
        """Close the connections."""
        for session in (self.reader, self.writer):
            if session is not None:
                await session.connection.close()

    async def query(
        self,
        sql: str,
        params: Params,
        *,
        max_rows: int,
        offset: int,
        max_cell_bytes: int,
        max_result_bytes: int,
        seconds: float,
        form: Format = "json",
        tick: Tick | None = None,
    ) -> Rows:
        """Run one reading statement; return at most `max_rows` rows after `offset`.

        Raises:
            SqliteError: the statement writes, is not one statement, fails, or runs out
                of time.
        """
        budget = Budget(seconds, tick)

        async def fetch(connection: aiosqlite.Connection) -> Rows:
            cursor = await connection.execute(sql, bind(params))
            page = Page(
                [column[0] for column in cursor.description or ()],
                offset=offset,
                max_rows=max_rows,
                max_cell=max_cell_bytes,
                max_bytes=max_result_bytes,
            )
            await fill(page, cursor)
            rows = page.rows
            return Rows(
                database=self.name,
                format=form,
                columns=page.columns,
                rows=rows,
                row_count=len(rows),
                truncated=page.more,
                next_offset=offset + len(rows) if page.more else None,
                elapsed_ms=round((time.monotonic() - budget.started) * 1000, 1),
            )

        return await self.reader.run(budget, fetch)

    async def change(
        self,
        statements: Sequence[tuple[str, Params]],
        *,
        seconds: float,
        max_cell_bytes: int,
        max_result_bytes: int,
    ) -> Changed:
        """Run writing statements in one transaction: all of them, or none.

        The rows a statement returns (RETURNING, or a statement that only reads) are
        returned too: `RETURNED_ROWS` of each at most, all within `max_result_bytes`.

        Raises:
            SqliteError: the database is read-only, or a statement fails (nothing changes).
        """
        writer = self.writer
        if writer is None:
            raise SqliteError(f"Database {self.name} is read-only: nothing was changed.")
        budget = Budget(seconds)
        bound = [(sql, bind(params)) for sql, params in statements]  # before BEGIN: see bind
        running: int | None = None  # the statement running, if one is: a failure names it

        async def write(connection: aiosqlite.Connection) -> Changed:
            nonlocal running
            # One statement too: left to autocommit, a statement stopped at its deadline in
            # a step that SQLite cannot interrupt would commit when that step returns.
            await writer.own(partial(connection.execute, "BEGIN IMMEDIATE"))
            # The connection's last insert rowid, which stays after a call that inserts
            # nothing: only one this call made is reported.
            [(rowid_before,)] = await connection.execute_fetchall("SELECT last_insert_rowid()")
            last_rowid = rows_affected = 0
            returned: list[Returned] = []
            left = max_result_bytes  # of the whole call's returned rows
            for number, (sql, values) in enumerate(bound):
                running = number
                changes_before = connection.total_changes
                writer.guard.own_writes.clear()
                cursor = await connection.execute(sql, values)
                shown, left = await returned_rows(cursor, number + 1, max_cell_bytes, left)
                if shown is not None:
                    returned.append(shown)
                changed, in_tables = await rows_changed(connection, changes_before)
                if cursor.lastrowid != rowid_before or await set_rowid(
                    connection, writer.guard.own_writes, in_tables=in_tables
                ):
                    last_rowid = cursor.lastrowid or last_rowid
                rows_affected += changed
            running = None
            # Past the last statement the call is done: a deadline or a cancellation that
            # falls in the COMMIT (an fsync may take long) would report it as undone.
            with anyio.CancelScope(shield=True):
                await writer.own(connection.commit)
            return Changed(
                database=self.name,
                rows_affected=rows_affected,
                last_insert_rowid=last_rowid,
                statements=len(statements),
                returned=returned,
            )

        try:
            return await writer.run(budget, write)
        except SqliteError as exc:
            if running is None or len(bound) == 1:
                raise
            raise SqliteError(
                f"Statement {running + 1} of {len(bound)} failed, and the transaction was"
                f" rolled back: none of them changed anything. {exc}"
            ) from None

    async def values(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run the server's own reading statement (schema, versions); return every row.

        Raises:
            SqliteError: it failed.
        """

        async def fetch(connection: aiosqlite.Connection) -> list[tuple[Any, ...]]:
            return [tuple(row) for row in await connection.execute_fetchall(sql, params)]

        return await self.reader.run(Budget(self.own_seconds), fetch)


async def returned_rows(
    cursor: aiosqlite.Cursor, statement: int, max_cell: int, left: int
) -> tuple[Returned | None, int]:
    """Return the rows the statement of `cursor` returns, within `left` bytes, and the rest.

    None for a statement that returns none. Once the call's bytes are spent, a statement's
    rows and columns are not shown, only `truncated`: each statement had a share of its
    own, and 1,000 statements of 2,000 wide columns made 392 MB. The cursor is closed,
    which ends its statement: its changes are then counted.
    """
    if not cursor.description:  # None: a statement that returns no rows
        await cursor.close()
        return None, left
    if left <= 0:
        await cursor.close()
        return Returned(statement=statement, columns=[], rows=[], truncated=True), left
    names = [column[0] for column in cursor.description]
    page = Page(names, offset=0, max_rows=RETURNED_ROWS, max_cell=max_cell, max_bytes=left)
    await fill(page, cursor)
    shown = Returned(statement=statement, columns=page.columns, rows=page.rows, truncated=page.more)
    return shown, page.bytes_left


async def fill(page: Page, cursor: aiosqlite.Cursor) -> None:
    """Put the rows of `cursor` into `page` as they are made, until it is full; close it."""
    # aiosqlite types a row factory as a class; sqlite3 takes any callable.
    cursor.row_factory = page.take  # pyright: ignore[reportAttributeAccessIssue]
    try:
        # The rows go to the page; fetchmany's list holds what take returns, None.
        while len(cast(list[None], await cursor.fetchmany(FETCH))) == FETCH:
            pass
    except Full:
        pass
    finally:
        await cursor.close()


async def undo_journal(writer: Session, seconds: float) -> None:
    """Have `writer` undo the rollback journal a writer that stopped left: reading does.

    Raises:
        SqliteError: the read failed.
    """

    async def read_schema(connection: aiosqlite.Connection) -> None:
        await connection.execute_fetchall("SELECT count(*) FROM sqlite_schema")

    await writer.run(Budget(seconds), read_schema)


async def rows_changed(connection: aiosqlite.Connection, changes_before: int) -> tuple[int, int]:
    """Return the rows the statement just run changed, and those in the tables it names.

    The second is `changes()`. The first is `changes()` too, not the growth of
    `total_changes` since `changes_before`, which also counts the rows of triggers and
    virtual tables (an R*Tree insert writes three in its shadow tables); but the growth
    when `changes()` says none, as for a view's INSTEAD OF trigger, whose rows are all the
    statement changed. Neither the statement's text (a WITH before an UPDATE) nor a
    RETURNING clause changes what is counted.
    """
    grown = connection.total_changes - changes_before
    if grown == 0:
        return 0, 0
    [(own,)] = await connection.execute_fetchall("SELECT changes()")
    return int(own) or grown, int(own)


def threads_left() -> list[threading.Thread]:
    """Return the threads besides this one that would keep the process alive at its end.

    Once every database is closed, these are the connections of statements given up on.
    """
    current = threading.current_thread()
    return [t for t in threading.enumerate() if t is not current and not t.daemon]
