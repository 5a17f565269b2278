"""mcp-sqlite's resources: each database's schema, each table, a sample of its rows, the memo.

Subscriptions poll the database (`PRAGMA schema_version`, `data_version`): a subscriber
hears of a change another process or a tool made, once per change, and nothing when
nothing changed. Those versions are the database's: a table's or a sample's subscriber is
told only when what it would read differs, which is read again only when they change.
Completion offers the names of databases and tables.
"""

import hashlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any
from urllib.parse import quote

import anyio

from mcpkit import Changed, Context, Resource, Server
from mcpkit.jsonrpc import encode

from . import render, schema
from .catalog import Catalog, Limits
from .database import Database
from .errors import SqliteError
from .memo import Memo

SCHEMA = "sqlite://{database}/schema"
TABLE = "sqlite://{database}/table/{table}"
SAMPLE = "sqlite://{database}/table/{table}/sample"
SAMPLE_ROWS = 20
POLL_INTERVAL = 0.5
"""Seconds between two looks at a subscribed database's versions."""
logger = logging.getLogger(__name__)

LIST_INTERVAL = 1.0
"""Seconds between two looks at which tables exist, for resources/list_changed."""
Tables = tuple[int, list[str]]
"""A database's schema version, and the names of its tables and views at that version."""


def register_resources(app: Server) -> None:
    """Register the memo, the schema, table and sample templates, and their listing."""

    @app.resource("memo://insights", name="insights", title="Insights memo", mime_type="text/plain")
    async def insights(memo: Memo) -> str:
        """The insights appended with append_insight."""
        return memo.text()

    @app.resource(SCHEMA, name="schema", title="Database schema", mime_type="text/plain")
    async def schema_sql(ctx: Context, catalog: Catalog, database: str) -> str:
        """The SQL that makes the database's tables, views, indexes and triggers."""
        db = await catalog.choose(ctx, database)
        return await schema.schema_sql(db, catalog.limits.max_result_bytes)

    @app.resource(TABLE, name="table", title="Table", mime_type="application/json")
    async def table(ctx: Context, catalog: Catalog, database: str, table: str) -> str:
        """A table or view: columns, keys, indexes, row count and its CREATE SQL."""
        return await table_text(await catalog.choose(ctx, database), table, catalog.limits)

    @app.resource(SAMPLE, name="sample", title="Sample rows", mime_type="application/json")
    async def sample(ctx: Context, catalog: Catalog, database: str, table: str) -> str:
        """The first rows of a table or view."""
        return await sample_text(await catalog.choose(ctx, database), table, catalog.limits)

    @app.list_resources
    async def each_database(ctx: Context, catalog: Catalog) -> list[Resource]:
        """Each database's schema, and each of its tables and views."""
        listed: list[Resource] = []
        for name, db in (await catalog.usable(ctx)).items():
            where = quote(name, safe="")  # a name may hold /, ?, # or %: each is encoded
            listed.append(Resource(uri=SCHEMA.format(database=where), name=f"{name} schema"))
            try:
                tables = await schema.named_tables(db)
            except SqliteError as exc:  # busy with a long query: its tables come next time
                logger.debug("Cannot list the tables of %s now: %s", name, exc)
                tables = []
            for table in tables:
                uri = TABLE.format(database=where, table=quote(table, safe=""))
                listed.append(Resource(uri=uri, name=table))
        return listed


def register_watches(app: Server) -> None:
    """Subscriptions: each polls its database's versions while someone is subscribed."""

    async def admit(ctx: Context, catalog: Catalog, database: str) -> None:
        """Refuse a subscriber a database it may not use (its roots leave it out, say)."""
        await catalog.choose(ctx, database)

    async def admit_table(ctx: Context, catalog: Catalog, database: str, table: str) -> None:
        await schema.describe(await catalog.choose(ctx, database), table)

    @app.watch(SCHEMA, admit=admit)
    async def watch_schema(catalog: Catalog, database: str, changed: Changed) -> None:
        db = catalog.get(database)

        async def schema_version() -> int:
            return (await schema.versions(db))[0]

        await changed.poll(schema_version, interval=POLL_INTERVAL)

    def watch_content(read: Reader) -> Callable[..., Coroutine[Any, Any, None]]:
        async def watch(catalog: Catalog, database: str, table: str, changed: Changed) -> None:
            db = catalog.get(database)
            await schema.describe(db, table)  # a table that does not exist refuses the subscription
            await changed.poll(content(db, table, catalog.limits, read), interval=POLL_INTERVAL)

        return watch

    app.watch(TABLE, admit=admit_table)(watch_content(table_text))
    app.watch(SAMPLE, admit=admit_table)(watch_content(sample_text))


Reader = Callable[[Database, str, Limits], Awaitable[str]]
"""What a table resource shows, read from the database."""


async def table_text(db: Database, table: str, limits: Limits) -> str:
    """The table resource: `table` described, as JSON.

    Raises:
        SqliteError: there is no such table or view.
    """
    return encode(dict(await schema.describe(db, table))).decode()


async def sample_text(db: Database, table: str, limits: Limits) -> str:
    """The sample resource: the first rows of `table`, as read_query's JSON text shows rows.

    Raises:
        SqliteError: there is no such table or view, or the rows cannot be read.
    """
    described = await schema.describe(db, table)  # the name is checked, then quoted
    rows = await db.query(
        f"SELECT * FROM {schema.quoted(described['name'])} LIMIT {SAMPLE_ROWS}",
        None,
        max_rows=SAMPLE_ROWS,
        offset=0,
        max_cell_bytes=limits.max_cell_bytes,
        max_result_bytes=limits.max_result_bytes,
        seconds=limits.seconds,
    )
    return render.rows(rows)


def content(
    db: Database, table: str, limits: Limits, read: Reader
) -> Callable[[], Awaitable[str | None]]:
    """A fingerprint of what `read` shows of `table` (its digest): None once the table is gone.

    It is read again only when the database's versions change, so a poll costs one small
    query, and a write to another table tells nobody. The digest, not the text, is kept:
    each spelling of a URI is a watch of its own, and a sample may be megabytes.
    """
    seen: tuple[tuple[int, int], str | None] | None = None

    async def fingerprint() -> str | None:
        nonlocal seen
        versions = await schema.versions(db)
        if seen is None or seen[0] != versions:
            gone = not await schema.exists(db, table)
            try:
                text = None if gone else await read(db, table, limits)
            except SqliteError as exc:  # read again once the database changes, not each poll
                text = f"cannot be read: {exc}"  # a view that ran out of time, back to back
            seen = versions, None if text is None else hashlib.sha256(text.encode()).hexdigest()
        return seen[1]

    return fingerprint


def register_completions(app: Server) -> None:
    """Complete database and table names in the templates."""
    for template in (SCHEMA, TABLE, SAMPLE):
        app.complete(resource=template, argument="database")(complete_database)
    for template in (TABLE, SAMPLE):
        app.complete(resource=template, argument="table")(complete_table)


async def complete_database(ctx: Context, catalog: Catalog, value: str) -> list[str]:
    """The names of the databases the client may use that start with `value`."""
    return [name for name in await catalog.usable(ctx) if name.startswith(value)]


async def complete_table(
    ctx: Context, catalog: Catalog, value: str, arguments: Mapping[str, str]
) -> list[str]:
    """The table names of the database chosen so far (or the only one) that start with `value`."""
    try:
        db = await catalog.choose(ctx, arguments.get("database") or None)
    except SqliteError:  # several databases, and none chosen yet
        return []
    names = await schema.named_tables(db)
    return [name for name in names if name.lower().startswith(value.lower())]


async def follow_tables(app: Server, catalog: Catalog) -> None:
    """Tell clients the resource list changed whenever tables or views come or go.

    Runs while the server does (its lifespan starts it). A look that fails (the database
    busy with a long query, or locked by another process) is taken again at the next one.
    """
    known = {name: await _tables(catalog.get(name), None) for name in catalog.names}
    while True:
        await anyio.sleep(LIST_INTERVAL)
        for name in catalog.names:
            before = known[name]
            now = await _tables(catalog.get(name), before)
            if now is not None and (before is None or now[1] != before[1]):
                app.list_changed("resources")
            known[name] = now or before


async def _tables(db: Database, known: Tables | None) -> Tables | None:
    """Return the schema version of `db` and its tables and views, or None if it cannot say.

    The names are read again only when the version has changed since `known`: read every
    second, 30,000 of them took most of a processor.
    """
    try:
        version, _ = await schema.versions(db)
        if known is not None and known[0] == version:
            return known
        return version, await schema.named_tables(db)
    except SqliteError as exc:
        logger.debug("Cannot list the tables of %s now: %s", db.name, exc)
        return None
