"""The databases the server holds while it runs, by name, and the limits of their queries."""

from collections.abc import AsyncGenerator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from .config import DatabaseSpec
from .database import Database
from .errors import SqliteError


@dataclass(frozen=True)
class Limits:
    """What one query may take: time, rows, and bytes of a cell and of a result."""

    seconds: float = 30.0
    max_rows: int = 10_000
    max_cell_bytes: int = 64 * 1024
    max_result_bytes: int = 4 * 1024 * 1024


class Catalog:
    """The open databases, by name: the model names one, never a file."""

    def __init__(self, databases: Sequence[Database], limits: Limits) -> None:
        self.databases = {database.name: database for database in databases}
        self.limits = limits

    @property
    def names(self) -> list[str]:
        """The names of the databases, in the operator's order."""
        return list(self.databases)

    @property
    def writable(self) -> bool:
        """Whether any database may be written."""
        return any(database.writer is not None for database in self.databases.values())

    def get(self, name: str | None) -> Database:
        """Return the database `name`, or the only one when `name` is None.

        Raises:
            SqliteError: no database has that name, or several exist and none was named.
        """
        if name is None and len(self.databases) == 1:
            return next(iter(self.databases.values()))
        found = self.databases.get(name or "")
        if found is None:
            what = "Name a database" if name is None else f"No database {name!r}"
            raise SqliteError(f"{what}: the databases are {', '.join(self.databases)}.")
        return found


@asynccontextmanager
async def opened(specs: Sequence[DatabaseSpec], limits: Limits) -> AsyncGenerator[Catalog]:
    """Open every database while the server runs; close them all at the end."""
    async with AsyncExitStack() as stack:
        databases: list[Database] = []
        for spec in specs:
            database = await Database.open(spec)
            stack.push_async_callback(database.close)
            databases.append(database)
        yield Catalog(databases, limits)
