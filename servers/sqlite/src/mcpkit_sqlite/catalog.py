"""The databases the server holds while it runs, by name, and the limits of their queries.

Which of them a request may use is the operator's list, narrowed by the client's roots
(`mcpkit.places`): with `--roots narrow` (the default) a client that sends roots may use
the databases inside them; `intersect` gives a client without roots none; `ignore` gives
every client every database.
"""

from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Literal

from mcpkit import Context
from mcpkit.places import Place, Places, real_place

from .config import DatabaseSpec
from .database import Database
from .errors import SqliteError

RootsMode = Literal["narrow", "intersect", "ignore"]
"""How client roots count (see the module docstring); `replace` is not one: a database is
named by the operator, never found under a client's root."""


@dataclass(frozen=True)
class Limits:
    """What one query may take: time, rows, and bytes of a cell and of a result."""

    seconds: float = 30.0
    max_rows: int = 10_000
    max_cell_bytes: int = 64 * 1024
    max_result_bytes: int = 4 * 1024 * 1024


class Catalog:
    """The open databases, by name: the model names one, never a file."""

    def __init__(self, databases: Sequence[Database], limits: Limits, roots: RootsMode) -> None:
        self.databases = {database.name: database for database in databases}
        self.limits = limits
        files = [
            Place(d.spec.path, d.spec.path, not d.spec.writable, "command line") for d in databases
        ]
        resolve = partial(real_place, read_only=True, source="client roots")
        self.places = Places(files, roots, resolve)

    @property
    def names(self) -> list[str]:
        """The names of the databases, in the operator's order."""
        return list(self.databases)

    @property
    def writable(self) -> bool:
        """Whether any database may be written."""
        return any(database.writer is not None for database in self.databases.values())

    def get(self, name: str) -> Database:
        """Return the database `name`, whoever asks (for watches, which serve everyone).

        Raises:
            SqliteError: no database has that name.
        """
        return _named(self.databases, name)

    async def usable(self, ctx: Context) -> dict[str, Database]:
        """Return the databases the client of `ctx` may use, by name.

        Raises:
            RootsUnavailable: the client declared roots but cannot be asked for them.
        """
        places = await self.places.of(ctx)
        return {
            name: database
            for name, database in self.databases.items()
            if any(place.contains(database.spec.path) for place in places)
        }

    async def choose(self, ctx: Context, name: str | None) -> Database:
        """Return the database `name` for the client of `ctx`, or its only one if None.

        Raises:
            SqliteError: none of that name is usable, or several are and none was named.
        """
        usable = await self.usable(ctx)
        if name is None and len(usable) == 1:
            return next(iter(usable.values()))
        if name is None:
            raise SqliteError(f"Name a database: the databases are {_listed(usable)}.")
        return _named(usable, name)


def _named(databases: dict[str, Database], name: str) -> Database:
    found = databases.get(name)
    if found is None:
        raise SqliteError(f"No database {name!r}: the databases are {_listed(databases)}.")
    return found


def _listed(databases: dict[str, Database]) -> str:
    return ", ".join(databases) or "none (the client's roots leave none of them)"


@asynccontextmanager
async def opened(
    specs: Sequence[DatabaseSpec], limits: Limits, roots: RootsMode
) -> AsyncGenerator[Catalog]:
    """Open every database while the server runs; close them all at the end."""
    async with AsyncExitStack() as stack:
        databases: list[Database] = []
        for spec in specs:
            database = await Database.open(spec, limits.seconds)
            stack.push_async_callback(database.close)
            databases.append(database)
        yield Catalog(databases, limits, roots)
