"""The operator's databases: `NAME=PATH[:ro]` or a bare `PATH` on the command line.

The model names a database, never a file: each has a name, a real path fixed at start,
and whether it may be written (`--write`, unless `:ro`). A database that does not exist is
an error at start, unless `--create` makes it.
"""

import os
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from .errors import HOT_JOURNAL, SqliteError
from .guard import MAX_GROWTH, Guard, GuardedConnection
from .journal import check_journal

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


class DatabaseSpec(NamedTuple):
    """A database the operator allows: name, real path, whether written, and growth allowed."""

    name: str
    path: str
    writable: bool
    max_growth: int = MAX_GROWTH


def parse_database(spec: str, *, write: bool, create: bool) -> DatabaseSpec:
    """Return the database `NAME=PATH[:ro]` or `PATH` names (the name is the file's stem).

    Raises:
        ValueError: a bad name, or a file that does not exist (without `create`) or is
            not a SQLite database.
    """
    # A name holds no '/': `n=/data/a=b.db` is n, and `/data/a=b.db` a path (`./a=b.db` too).
    name, _, path = spec.partition("=") if "=" in spec.partition("/")[0] else ("", "", spec)
    read_only = path.endswith(":ro")
    path = path.removesuffix(":ro")
    name = name or Path(path).stem.replace(".", "_")
    if not NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a database name: use letters, digits, _ and -")
    real = os.path.realpath(os.path.expanduser(path))
    if not os.path.exists(real):
        if not create:
            raise ValueError(f"{path} does not exist (--create makes a new database)")
        _make(path, real)
    elif not os.path.isfile(real):
        raise ValueError(f"{path} is not a file")
    _check(path, real, writes=write and not read_only)
    return DatabaseSpec(name, real, write and not read_only)


def _make(path: str, real: str) -> None:
    """Make an empty database at `real`.

    Raises:
        ValueError: it cannot be made there (no such folder, no permission).
    """
    try:
        sqlite3.connect(f"file:{quote(real)}?mode=rwc", uri=True).close()
    except sqlite3.Error as exc:
        raise ValueError(f"cannot create {path}: {exc}") from None


def _check(path: str, real: str, *, writes: bool) -> None:
    """Check that `real` is a SQLite database, reading its schema once.

    It is read as the server reads it (`GuardedConnection`): a schema past the guard's
    limits could be served no statement. A database the server may write is read on a
    connection that may, which undoes what a writer that stopped left in a rollback journal.

    Raises:
        ValueError: it is not one (or cannot be read).
    """
    uri = f"file:{quote(real)}?mode={'rw' if writes else 'ro'}"
    try:
        if writes:
            check_journal(real)
        with closing(GuardedConnection(uri, uri=True, guard=Guard(writes=writes))) as database:
            database.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except sqlite3.Error as exc:
        reason = HOT_JOURNAL if exc.sqlite_errorcode == sqlite3.SQLITE_READONLY_ROLLBACK else exc
        refused = f"{path} is not a SQLite database this server can read: {reason}"
        raise ValueError(refused) from None
    except SqliteError as exc:
        raise ValueError(f"{path} cannot be served: {exc}") from None


def parse_databases(specs: list[str], *, write: bool, create: bool) -> tuple[DatabaseSpec, ...]:
    """Return the databases of the command line.

    Raises:
        ValueError: none given, two of one name, or one `parse_database` refuses.
    """
    if not specs:
        raise ValueError("name at least one database: mcp-sqlite [NAME=]PATH[:ro] ...")
    databases = tuple(parse_database(spec, write=write, create=create) for spec in specs)
    names = [database.name for database in databases]
    if len(set(names)) != len(names):
        raise ValueError(f"two databases share a name in {', '.join(names)}: use NAME=PATH")
    return databases
