"""One guarded connection to a database, and the lock that gives it to one statement at a time.

Each connection is an `aiosqlite` connection (its own thread). A statement runs under a
`Budget`: when its time is up or its request is cancelled, SQLite stops it at once
(`interrupt`, and the progress handler for what comes after), and the connection is free
again only once it has stopped. A statement stuck in a step SQLite cannot stop is given up
instead (see `STOP_GRACE`): its connection is closed when it ends, and a new one serves
the database meanwhile.
"""

import logging
import os
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar
from urllib.parse import quote

import aiosqlite
import anyio

from .errors import BAD_VALUES, SqliteError, explain, out_of_time
from .guard import MAX_GROWTH, Budget, Guard, GuardedConnection
from .journal import check_journal
from .temporary import WATCH

# aiosqlite logs each statement with its bound values at DEBUG: values never reach a log.
logging.getLogger("aiosqlite").setLevel(logging.INFO)

T = TypeVar("T")
STOP_GRACE = 2.0
"""Seconds a stopped statement has to end before its connection is given up. SQLite looks
for an interruption between the steps of a statement, and one step may take hours: trim(),
instr() and replace() compare each character of a long text with each of another."""
LOCK_WAIT = 1.0
"""Seconds a statement waits for a lock another process holds, then fails: less than
`STOP_GRACE`, as an interrupt does not end this wait."""
MAX_GIVEN_UP = 2
"""Statements given up on that may still run per connection, each holding a thread and a
processor until it ends: past this many, the connection takes no new statement."""
THREAD_STACK = 256 * 1024 * 1024
"""Bytes of stack for each connection's thread: SQLite recurses on it as deep as views or
common table expressions nest, and a chain of 20,000 views in a file overflowed the usual
8 MiB at once and ended the process. It is address space, taken only as it is used."""
CACHED_STATEMENTS = 128
"""Statements a reader keeps prepared (sqlite3's default)."""
SHADOW_TABLES = "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'"

logger = logging.getLogger(__name__)


async def connect(
    path: str, *, writes: bool, growth: int = MAX_GROWTH, max_pages: int | None = None
) -> tuple[aiosqlite.Connection, Guard]:
    """Open `path` (which exists) read-only, or read-write if `writes`; return it and its guard.

    A writer's database may grow by `growth` bytes from its size now, or up to `max_pages`
    pages if given (those of the connection it replaces).

    Raises:
        sqlite3.Error: it cannot be opened.
    """
    guard = Guard(writes=writes, growth=growth)
    guard.max_pages = max_pages
    uri = f"file:{quote(path)}?mode={'rw' if writes else 'ro'}"
    factory = partial(GuardedConnection, guard=guard)
    threading.stack_size(THREAD_STACK)  # for the thread the connection starts, at once
    try:
        connection = await aiosqlite.connect(
            uri,
            uri=True,
            factory=factory,
            isolation_level=None,
            timeout=LOCK_WAIT,
            # A statement taken from the cache is not authorized again: a writer's guard
            # would not see what it writes (Guard.own_writes).
            cached_statements=0 if writes else CACHED_STATEMENTS,
        )
    finally:
        threading.stack_size(0)  # the platform's default again: nothing else sets it
    return connection, guard


def file_identity(path: str) -> tuple[int, int]:
    """Return the device and inode of the file `path` leads to.

    Raises:
        OSError: it leads to none.
    """
    found = os.stat(path)
    return found.st_dev, found.st_ino


class Session:
    """One guarded connection and the lock that gives it to one statement at a time."""

    def __init__(self, path: str, connection: aiosqlite.Connection, guard: Guard) -> None:
        self.path = path
        self.file = file_identity(path)
        """The file opened, by device and inode: what a connection opened again must be."""
        self.connection = connection
        self.guard = guard
        self.lock = anyio.Lock()
        self.given_up: dict[aiosqlite.Connection, Callable[[], bool]] = {}
        """Each connection given up (kept until then), and whether it has closed since."""
        self.undo_journal: Callable[[], Awaitable[None]] | None = None
        """A reader's way to have the rollback journal of a writer that stopped undone
        (by the database's writer, if it has one): a read-only connection cannot."""

    @classmethod
    async def open(cls, path: str, *, writes: bool, growth: int = MAX_GROWTH) -> "Session":
        """Open `path` (which exists) read-only, or read-write if `writes` (see `connect`)."""
        return cls(path, *await connect(path, writes=writes, growth=growth))

    async def run(self, budget: Budget, work: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """Return `await work(connection)`, its statements held to `budget`.

        The wait for the connection counts against the budget. At the deadline SQLite is
        interrupted, as on cancellation: the progress handler alone would miss a step that
        takes long (count(*) of a whole table is one). Whatever fails, a transaction left
        open is rolled back, so the write lock is never held past the call.

        Raises:
            SqliteError: SQLite refused or stopped a statement, a value could not be
                bound, or the connection stayed busy all the time; the message says why.
        """
        await self._take_connection(budget)
        try:
            self._refuse_while_stuck()
            self.guard.budget = budget
            self.guard.denied_write = None
            with anyio.move_on_after(budget.left()), WATCH.running(self.guard.spill):
                return await self._guarded(budget, work)
            budget.timed_out = True
            raise SqliteError(out_of_time(budget))
        finally:
            self.guard.budget = None
            self.lock.release()

    async def _take_connection(self, budget: Budget) -> None:
        try:
            self.lock.acquire_nowait()
        except anyio.WouldBlock:
            with anyio.move_on_after(budget.left()) as waiting:
                await self.lock.acquire()
            if waiting.cancelled_caught:
                raise SqliteError(
                    "The database is busy with another statement that has not finished within"
                    f" this one's time budget ({budget.seconds:g} s); try again in a moment."
                ) from None

    def _refuse_while_stuck(self) -> None:
        """Refuse a new statement while `MAX_GIVEN_UP` statements given up on still run.

        Raises:
            SqliteError: they do.
        """
        self.given_up = {old: ended for old, ended in self.given_up.items() if not ended()}
        if len(self.given_up) >= MAX_GIVEN_UP:
            raise SqliteError(
                f"The database is busy: {len(self.given_up)} earlier queries ran out of time in"
                " a step SQLite cannot stop, and still run. Try again once they have ended,"
                " with narrower queries."
            )

    async def _guarded(
        self, budget: Budget, work: Callable[[aiosqlite.Connection], Awaitable[T]]
    ) -> T:
        try:
            return await self._work(work)
        except anyio.get_cancelled_exc_class():
            budget.cancel()
            await self.connection.interrupt()
            with anyio.CancelScope(shield=True):
                await self._settle(budget)
            raise
        except BaseException as exc:
            # Shielded: a statement stopped at the deadline fails past it, and a rollback
            # cancelled there would still run, after `own`, refused: the lock kept.
            with anyio.CancelScope(shield=True):
                await self.end_transaction()
            if isinstance(exc, (sqlite3.Error, sqlite3.Warning, *BAD_VALUES)):
                raise SqliteError(explain(exc, budget, writes=self.guard.writes)) from None
            raise

    async def _work(self, work: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """Return `await work(connection)`, run again each time the reader adapts to a failure.

        A writer's work is a transaction: it never runs twice. A journal is undone once
        per call: another process may stop mid-transaction again, but not forever.
        """
        if self.guard.writes:  # which undoes a journal a writer that stopped left
            check_journal(self.path)
        undone = False
        while True:
            try:
                return await work(self.connection)
            except sqlite3.DatabaseError as error:
                if self.guard.writes:
                    raise
                code = getattr(error, "sqlite_errorcode", None)
                if code == sqlite3.SQLITE_READONLY_ROLLBACK and self.undo_journal and not undone:
                    undone = True
                    await self.undo_journal()
                elif not await self._adapted(error):
                    raise

    async def _adapted(self, error: sqlite3.DatabaseError) -> bool:
        """Adapt the reader to what failed a statement; return whether to run it again.

        Each adaptation is made once. Text that is not UTF-8 (a legacy database's Latin-1)
        failed a whole statement: from then on the reader decodes text leniently, bytes it
        cannot decode shown as U+FFFD (a Python call per value: only where needed). R*Tree
        prepares writes to its shadow tables to read: a reader refused a row write learns
        main's shadow tables (SQLite itself refuses them the write: it is read-only).
        """
        if str(error).startswith("Could not decode to UTF-8 column"):  # a cell's text
            if self.connection.text_factory is lenient_text:
                return False
            self.connection.text_factory = lenient_text
            return True
        if self.guard.denied_write is None:
            return False
        try:
            rows = await self.connection.execute_fetchall(SHADOW_TABLES)
        except sqlite3.Error:  # SQLite before 3.37 has no table_list
            return False
        return self.guard.learnt(frozenset(name for (name,) in rows))

    async def _settle(self, budget: Budget) -> None:
        """Roll back once the stopped statement has ended, or give its connection up.

        The rollback waits behind the statement. One that has not ended within
        `STOP_GRACE` is in a step SQLite cannot stop: its connection is closed when it
        ends, which rolls its transaction back, and a new one takes its place.
        """
        with anyio.move_on_after(STOP_GRACE):
            await self.own(self.connection.rollback)
            return
        try:
            connection, guard = await self._reopen()
        except (sqlite3.Error, OSError) as exc:  # keep the one there is: what follows waits
            logger.warning(
                "cannot reopen %s after a statement SQLite cannot stop: %s", self.path, exc
            )
            return
        # Queued behind the statement: closes the connection, and ends its thread, after it.
        closed = self.connection.stop()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        assert closed is not None  # a future, on the running loop
        self.given_up[self.connection] = closed.done
        self.connection, self.guard = connection, guard
        budget.given_up = True

    async def _reopen(self) -> tuple[aiosqlite.Connection, Guard]:
        """Open the database's file again, as `connect`, if its path still leads to it.

        Raises:
            OSError: the path leads to another file now, or to none.
            sqlite3.Error: it cannot be opened.
        """
        # Before and after: a file renamed in its place was opened by its path, read and
        # written as the operator's, and an open connection would have refused it.
        if file_identity(self.path) != self.file:
            raise OSError(f"{self.path} is another file now")
        connection, guard = await connect(
            self.path,
            writes=self.guard.writes,
            growth=self.guard.growth,
            max_pages=self.guard.max_pages,
        )
        if file_identity(self.path) != self.file:
            await connection.close()
            raise OSError(f"{self.path} is another file now")
        return connection, guard

    async def end_transaction(self) -> None:
        """Roll back the transaction a failed call left open, if any."""
        if self.connection.in_transaction:
            await self.own(self.connection.rollback)

    async def own(self, statement: Callable[[], Awaitable[object]]) -> None:
        """Run the server's own BEGIN, COMMIT or ROLLBACK, which the model's may not be."""
        self.guard.server_statement = True
        try:
            await statement()
        finally:
            self.guard.server_statement = False


def lenient_text(data: bytes) -> str:
    """Decode SQLite text that may not be UTF-8, replacing what is not."""
    return data.decode("utf-8", "replace")
