"""The engine's guards: what a connection may do, for how long, with how much.

Read-only is enforced by SQLite, never by reading the SQL. Every connection is opened
through `GuardedConnection`, which before any statement of the model's:
- lowers SQLite's limits: no database may be attached (so neither `ATTACH` nor
  `VACUUM INTO` can reach a file the operator did not name), bounded strings and blobs
  (`randomblob(1e9)` fails), bounded SQL text and expression depth;
- caps the memory SQLite may hold at once (`HEAP_LIMIT`, for the whole process): a row of
  forty 16 MB values fails, rather than taking 640 MB in SQLite and as much again in the
  Python copy the row factory is given; page caches keep to half of it (`CACHE_LIMIT`);
- turns `trusted_schema` off, so a hostile database's views and triggers cannot call
  functions with side effects (large sorts and temporary tables go to temporary files,
  under the cap of `temporary`);
- installs an authorizer that denies by default. A reader may select, read, recurse,
  call functions other than `load_extension` and `fts3_tokenizer`, and read the
  pragmas that describe a schema; a writer may also insert, update, delete, create, drop
  (virtual tables too) and alter (not TEMP objects: a TEMP trigger would change later
  writes unseen, and TEMP tables grow a file nobody named). A reader may prepare a row
  write to a shadow table of a virtual table (`Guard.shadow_tables`): R*Tree does to
  read, and SQLite refuses the write itself, the reader being read-only. Nobody may read
  `sqlite_stmt` (other sessions' statements), attach, detach, make virtual tables, or
  set pragmas
  (`query_only`, `writable_schema`, `journal_mode`, ...); only the server begins and ends
  transactions, so a model cannot hold the write lock (`BEGIN EXCLUSIVE` left open) or
  commit half of an `execute_transaction`;
- installs a progress handler that ends a statement whose `Budget` says stop: its time
  is up, or its request was cancelled.
A reader is also opened `mode=ro` with `query_only` on: three locks on one door.
"""

import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from . import temporary

STEPS = 10_000
"""Virtual machine steps between two checks of the budget (a few milliseconds)."""

HEAP_LIMIT = 64 * 1024 * 1024
"""Bytes SQLite may hold at once, all connections together: a few page caches (2 MB each by
default) and the largest row a query may make, whose values SQLite holds until the next one."""

CACHE_LIMIT = HEAP_LIMIT // 2
"""Bytes past which the page caches of all connections stop growing and reuse their oldest
pages (SQLite's soft heap limit): what a file asks for (its `default_cache_size`), or forty
databases' caches together, would otherwise fill `HEAP_LIMIT`, and every query fail."""

LIMITS = {
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_LENGTH: 16 * 1024 * 1024,
    # A stored schema is parsed under these too: DDL of a table of 2,000 columns, and
    # SQLite's own default depth, which any database it made stays within.
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 1_000_000,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 1000,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 100,
    sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH: 10,
    # LIKE and GLOB compare a pattern with each position of a text in one step, which no
    # budget stops: 2 MB against 1,000 characters took 6 s, so 16 MB against SQLite's
    # 50,000 would take some 40 minutes; against 1,000, some 50 s (given up at its deadline,
    # it then ends).
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 1000,
}

MAX_GROWTH = 1 << 30
"""Bytes a writable database may grow by while served (`--max-growth`): a model's write of
zeroblobs grew a file 150 MB in a call, and could have filled the disk."""
_READS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}
_ROW_WRITES = {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE}
_WRITES = {
    *_ROW_WRITES,
    sqlite3.SQLITE_ALTER_TABLE,
    sqlite3.SQLITE_REINDEX,
    sqlite3.SQLITE_ANALYZE,
    sqlite3.SQLITE_CREATE_TABLE,
    sqlite3.SQLITE_CREATE_INDEX,
    sqlite3.SQLITE_CREATE_VIEW,
    sqlite3.SQLITE_CREATE_TRIGGER,
    sqlite3.SQLITE_DROP_TABLE,
    sqlite3.SQLITE_DROP_INDEX,
    sqlite3.SQLITE_DROP_VIEW,
    sqlite3.SQLITE_DROP_TRIGGER,
    sqlite3.SQLITE_DROP_VTABLE,  # DROP TABLE of an FTS or R*Tree table (making one is refused)
}
HIDDEN_TABLES = frozenset(("sqlite_stmt",))
"""Tables nobody may read: the statements every connection has prepared (other sessions')."""
DENIED_FUNCTIONS = frozenset(("load_extension", "fts3_tokenizer"))
"""Functions nobody may call: one loads native code, the other hands out pointers."""
SCHEMA_PRAGMAS = frozenset(
    (
        "table_info",
        "table_xinfo",
        "table_list",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
    )
)
"""Pragmas that describe a table or index named by their argument: readable by anyone."""
STATE_PRAGMAS = frozenset(
    (
        "data_version",
        "schema_version",
        "user_version",
        "page_count",
        "page_size",
        "freelist_count",
        "encoding",
        "journal_mode",
        "application_id",
    )
)
"""Pragmas readable without an argument (with one, they would set something)."""


class Budget:
    """What one statement may spend: time until a deadline, and whether it is still wanted.

    `tick(seconds)` is told the time spent so far at each check (from SQLite's thread):
    the progress of a long query.
    """

    def __init__(self, seconds: float, tick: Callable[[float], None] | None = None) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.deadline = self.started + seconds
        self.tick = tick
        self.timed_out = False
        self.given_up = False
        """Whether its statement would not stop, so its connection was given up."""
        self.spilled = False
        """Whether it was stopped for the temporary files it took (see `temporary`)."""
        self._cancelled = threading.Event()

    def left(self) -> float:
        """Return the seconds until the deadline (negative once it has passed)."""
        return self.deadline - time.monotonic()

    def cancel(self) -> None:
        """Stop the statement at its next check (from any thread)."""
        self._cancelled.set()

    def spill(self) -> None:
        """Stop the statement at its next check: too much went to temporary files."""
        self.spilled = True
        self._cancelled.set()

    def stop_now(self) -> bool:
        """Whether the statement must end now (called in SQLite's thread)."""
        if self._cancelled.is_set():
            return True
        now = time.monotonic()
        if now >= self.deadline:
            self.timed_out = True
            return True
        if self.tick is not None:
            self.tick(round(now - self.started, 1))
        return False


class Guard:
    """The authorizer and progress handler of one connection, and its current budget."""

    def __init__(self, *, writes: bool, growth: int = MAX_GROWTH) -> None:
        self.writes = writes
        self.growth = growth
        """Bytes a writer's database may grow by, from its size when the writer opened."""
        self.max_pages: int | None = None
        """The pages a writer's database may reach: its size at the first open, plus
        `growth`. A connection opened again in place of a stuck one keeps it: measured
        again, each given-up statement let the file grow by `growth` once more."""
        self.budget: Budget | None = None
        self.interrupt: Callable[[], None] | None = None
        """Interrupt the running statement of the guard's connection, once it is made."""
        self.server_statement = False
        """True while the server runs its own BEGIN, COMMIT or ROLLBACK."""
        self.shadow_tables: frozenset[str] = frozenset()
        """Shadow tables of main's virtual tables, in lower case, as last learnt."""
        self.denied_write: str | None = None
        """The table of the last row write denied to a reader, until `learnt` asks."""
        self.own_writes: set[tuple[int, str | None]] = set()
        """The row writes (`SQLITE_INSERT`, ...) and their tables, of the statements
        prepared since it was emptied, those of their triggers left out. A writer prepares
        every statement anew (no statement cache), so that each one's are seen."""

    def authorize(
        self, action: int, arg1: str | None, arg2: str | None, database: str | None, source: Any
    ) -> int:
        """Allow or deny one action of a statement being prepared (see the module docstring)."""
        if source is None and action in _ROW_WRITES:  # not a trigger's
            self.own_writes.add((action, arg1))
        if action == sqlite3.SQLITE_READ and (arg1 or "").lower() in HIDDEN_TABLES:
            return sqlite3.SQLITE_DENY
        if action in _READS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master":
            return sqlite3.SQLITE_OK  # SQLite's own reading of the schema asks this
        if not self.writes and action in _ROW_WRITES:
            if database == "main" and (arg1 or "").lower() in self.shadow_tables:
                return sqlite3.SQLITE_OK
            self.denied_write = arg1
            return sqlite3.SQLITE_DENY
        if self.writes and action in _WRITES:
            # Not in TEMP: `CREATE TABLE temp.items` shadowed main's, and a trigger made
            # `temp.x` changed later writes unseen (SQLite names no TEMP action for either).
            return sqlite3.SQLITE_DENY if database == "temp" else sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_TRANSACTION and self.server_statement:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION:
            return sqlite3.SQLITE_DENY if (arg2 or "").lower() in DENIED_FUNCTIONS else 0
        if action == sqlite3.SQLITE_PRAGMA:
            name = (arg1 or "").lower()
            readable = name in SCHEMA_PRAGMAS or (name in STATE_PRAGMAS and arg2 is None)
            return sqlite3.SQLITE_OK if readable else sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_DENY

    def learnt(self, shadow_tables: frozenset[str]) -> bool:
        """Take main's shadow tables as they are now.

        Returns whether the last row write denied was to one of them not known before: its
        statement may be prepared again.
        """
        denied, self.denied_write = self.denied_write, None
        known, self.shadow_tables = self.shadow_tables, frozenset(n.lower() for n in shadow_tables)
        return denied is not None and denied.lower() in self.shadow_tables - known

    def spill(self) -> None:
        """Stop the running statement, whose temporary files took too much (any thread).

        Raises:
            sqlite3.ProgrammingError: the connection is closed.
        """
        if self.budget is not None:
            self.budget.spill()
        if self.interrupt is not None:
            self.interrupt()

    def progress(self) -> int:
        """Return non-zero to end the running statement (SQLite's progress handler)."""
        budget = self.budget
        return 1 if budget is not None and budget.stop_now() else 0


class GuardedConnection(sqlite3.Connection):
    """A sqlite3 connection with the guards of the module docstring, set before any use."""

    def __init__(self, database: str, *args: Any, guard: Guard, **kwargs: Any) -> None:
        super().__init__(database, *args, **kwargs)
        for limit, value in LIMITS.items():
            self.setlimit(limit, value)
        self.execute("PRAGMA trusted_schema = OFF")  # before the authorizer, which denies it
        if sys.version_info >= (3, 12):  # setconfig is new in 3.12: see the README
            # The shadow tables of FTS and R*Tree tables are their modules' alone: written by
            # the model's SQL, they broke their tables unseen, and crafted ones have been a
            # way into SQLite's memory.
            self.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
        self.execute(f"PRAGMA hard_heap_limit = {HEAP_LIMIT}")
        self.execute(f"PRAGMA soft_heap_limit = {CACHE_LIMIT}")
        if not temporary.MEASURABLE:  # then nothing would bound the temporary files
            self.execute("PRAGMA temp_store = MEMORY")
        if guard.writes:
            if guard.max_pages is None:
                [(pages, page_size)] = self.execute(
                    "SELECT page_count, page_size FROM pragma_page_count, pragma_page_size"
                ).fetchall()
                guard.max_pages = pages + guard.growth // page_size
            self.execute(f"PRAGMA max_page_count = {guard.max_pages}")
        else:
            self.execute("PRAGMA query_only = ON")
        self.set_authorizer(guard.authorize)
        self.set_progress_handler(guard.progress, STEPS)
        guard.interrupt = self.interrupt
