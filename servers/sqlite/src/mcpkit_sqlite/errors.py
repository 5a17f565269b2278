"""mcp-sqlite's one error, and what sqlite3's errors mean: said so a model can fix its next call."""

import sqlite3

from .guard import HEAP_LIMIT, LIMITS, Budget
from .temporary import WATCH

BAD_VALUES = (MemoryError, OverflowError, UnicodeError)
"""Errors of values SQLite cannot take or make: a row over guard.HEAP_LIMIT, an integer
over 64 bits, text with a lone surrogate, text (or SQLite's message) that is not UTF-8."""
HOT_JOURNAL = (
    "The database has a rollback journal left by a writer that stopped in the middle of a"
    " transaction, which only a connection that may write can undo: open the database once"
    " with one (sqlite3, or mcp-sqlite --write). Nothing was changed."
)
"""SQLite's own word for it is "attempt to write a readonly database", even for a read."""


class SqliteError(Exception):
    """A query or a request about a database failed; the message says why and what to do."""


def out_of_time(budget: Budget) -> str:
    """Say that a statement ran out of its time budget, and what to do next."""
    if budget.given_up:
        return (
            f"The query ran out of its time budget ({budget.seconds:g} s) in a step SQLite"
            " cannot stop (trim(), instr() or replace() of long texts, for one). It runs on"
            " in the background until that step ends, and nothing it does is kept. Narrow it."
        )
    return (
        f"The query ran out of its time budget ({budget.seconds:g} s) and was stopped:"
        " narrow it (WHERE, LIMIT, an index) or raise timeout_ms."
    )


def _bad_value(error: BaseException) -> str | None:
    """Say what is wrong with a value SQLite cannot take or make (see BAD_VALUES), if so."""
    if isinstance(error, OverflowError):
        return "An integer is out of SQLite's range (-2**63 to 2**63 - 1). Nothing was changed."
    if isinstance(error, UnicodeDecodeError):
        return (
            "A column name (or SQLite's message) is not UTF-8, so it cannot be shown: select"
            " the other columns by name rather than with *; describe_table lists them."
        )
    if isinstance(error, UnicodeEncodeError):
        return (
            "The statement or a parameter holds text that is not valid Unicode (a lone"
            " surrogate). Nothing was changed."
        )
    if isinstance(error, MemoryError):
        return (
            f"The query needs more than the {HEAP_LIMIT >> 20} MiB SQLite may hold at once:"
            " select fewer or smaller values (length(), substr()) or fewer columns."
        )
    return None


BY_MESSAGE = {
    "interrupted": "The query was cancelled.",
    "database is locked": (
        "Another process holds the database's lock (it is writing): nothing was changed."
        " Try again in a moment."
    ),
    "LIKE or GLOB pattern too complex": (
        f"A LIKE or GLOB pattern may hold {LIMITS[sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH]:,}"
        " characters at most (a longer one could hold the database for minutes): use a"
        " shorter pattern. Nothing was changed."
    ),
}
"""What SQLite's messages that say too little mean for the model."""


def explain(error: BaseException, budget: Budget, *, writes: bool) -> str:
    """Return what a sqlite3 error means for the model, and what to do next."""
    bad_value = _bad_value(error)
    if bad_value is not None:
        return bad_value
    if budget.spilled:
        return (
            f"The query was stopped: its sorts and temporary tables took more than the"
            f" {WATCH.limit >> 20} MiB of temporary files all queries may hold at once (the"
            " operator's --max-temp). Narrow it (WHERE, LIMIT), sort or group by indexed"
            " columns, or select fewer and smaller columns. Nothing was changed."
        )
    message = str(error)
    if budget.timed_out:
        return out_of_time(budget)
    if message in BY_MESSAGE:
        return BY_MESSAGE[message]
    if message.startswith("access to") and message.endswith("is prohibited"):  # see guard
        return f"Not authorized: {message}; sqlite_stmt shows other sessions' statements."
    # VACUUM is refused by the authorizer; in the server's transaction SQLite says so first.
    refused = "cannot VACUUM from within a transaction" in message
    refused = refused or message.endswith("may not be modified")  # a shadow table (3.12+)
    if refused or "not authorized" in message or "authorization denied" in message:
        if writes:
            return (
                "Not authorized: ATTACH, DETACH, VACUUM, pragmas that set something, virtual"
                " tables (and writes to their shadow tables) and load_extension are refused."
                " Nothing was changed."
            )
        return (
            "Not authorized: this connection only reads (no INSERT, UPDATE, DELETE, CREATE,"
            " DROP, ATTACH, pragmas that set something, or load_extension); use write_query"
            " where writing is allowed. Nothing was changed."
        )
    if isinstance(error, sqlite3.ProgrammingError) and "one statement" in message:
        return "Send one statement per call (a second one after ';' is refused)."
    by_code = _by_code(getattr(error, "sqlite_errorcode", None))
    if by_code is not None:
        return by_code
    if "attempt to write a readonly database" in message:
        return "This database is read-only. Nothing was changed."
    return f"SQLite error: {message}"


def _by_code(code: int | None) -> str | None:
    """Return what the SQLite error `code` means, if its message says too little."""
    if code == sqlite3.SQLITE_READONLY_ROLLBACK:
        return HOT_JOURNAL
    if code == sqlite3.SQLITE_READONLY_DBMOVED:  # SQLite's word: "readonly database"
        return (
            "The database file was replaced, moved or deleted since the server opened it:"
            " the server still has the old one. Ask the operator to restart it. Nothing was"
            " changed."
        )
    if code == sqlite3.SQLITE_FULL:
        return (
            "The database may grow no further while served (the operator's --max-growth),"
            " or the disk is full. Nothing was changed."
        )
    return None
