"""mcp-sqlite's resources: each database's schema, each table, a sample of its rows, the memo.

Subscriptions poll the database (`PRAGMA schema_version`, `data_version`): a subscriber
hears of a change another process or a tool made, once per change, and nothing when
nothing changed. Completion offers the names of databases and tables.
"""

from collections.abc import Mapping

import anyio

from mcpkit import Changed, Context, Resource, Server
from mcpkit.jsonrpc import encode

from . import schema
from .catalog import Catalog
from .errors import SqliteError
from .memo import Memo

SCHEMA = "sqlite://{database}/schema"
TABLE = "sqlite://{database}/table/{table}"
SAMPLE = "sqlite://{database}/table/{table}/sample"
SAMPLE_ROWS = 20
POLL_INTERVAL = 0.5
"""Seconds between two looks at a subscribed database's versions."""
LIST_INTERVAL = 1.0
"""Seconds between two looks at which tables exist, for resources/list_changed."""


def register_resources(app: Server) -> None:
    """Register the memo, the schema, table and sample templates, and their listing."""

    @app.resource("memo://insights", name="insights", title="Insights memo", mime_type="text/plain")
    async def insights(memo: Memo) -> str:
        """The insights appended with append_insight."""
        return memo.text()

    @app.resource(SCHEMA, name="schema", title="Database schema", mime_type="text/plain")
    async def schema_sql(ctx: Context, catalog: Catalog, database: str) -> str:
        """The SQL that makes the database's tables, views, indexes and triggers."""
        rows = await (await catalog.choose(ctx, database)).values(
            "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type DESC, name"
        )
        return "".join(f"{sql};\n\n" for (sql,) in rows)

    @app.resource(TABLE, name="table", title="Table", mime_type="application/json")
    async def table(ctx: Context, catalog: Catalog, database: str, table: str) -> str:
        """A table or view: columns, keys, indexes, row count and its CREATE SQL."""
        described = await schema.describe(await catalog.choose(ctx, database), table)
        return encode(dict(described)).decode()

    @app.resource(SAMPLE, name="sample", title="Sample rows", mime_type="application/json")
    async def sample(ctx: Context, catalog: Catalog, database: str, table: str) -> str:
        """The first rows of a table or view."""
        db = await catalog.choose(ctx, database)
        described = await schema.describe(db, table)  # the name is checked, then quoted
        limits = catalog.limits
        rows = await db.query(
            f"SELECT * FROM {schema.quoted(described['name'])} LIMIT {SAMPLE_ROWS}",
            None,
            max_rows=SAMPLE_ROWS,
            offset=0,
            max_cell_bytes=limits.max_cell_bytes,
            max_result_bytes=limits.max_result_bytes,
            seconds=limits.seconds,
        )
        return encode(dict(rows)).decode()

    @app.list_resources
    async def each_database(ctx: Context, catalog: Catalog) -> list[Resource]:
        """Each database's schema, and each of its tables and views."""
        listed: list[Resource] = []
        for name, db in (await catalog.usable(ctx)).items():
            listed.append(Resource(uri=f"sqlite://{name}/schema", name=f"{name} schema"))
            for table in await schema.table_names(db):
                listed.append(Resource(uri=f"sqlite://{name}/table/{table}", name=table))
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

    async def watch_table(catalog: Catalog, database: str, table: str, changed: Changed) -> None:
        db = catalog.get(database)
        await schema.describe(db, table)  # a table that does not exist refuses the subscription
        await changed.poll(lambda: schema.versions(db), interval=POLL_INTERVAL)

    app.watch(TABLE, admit=admit_table)(watch_table)
    app.watch(SAMPLE, admit=admit_table)(watch_table)


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
    return [name for name in await schema.table_names(db) if name.lower().startswith(value.lower())]


async def follow_tables(app: Server, catalog: Catalog) -> None:
    """Tell clients the resource list changed whenever tables or views come or go.

    Runs while the server does (its lifespan starts it).
    """
    tables = {name: await schema.table_names(catalog.get(name)) for name in catalog.names}
    while True:
        await anyio.sleep(LIST_INTERVAL)
        for name in catalog.names:
            now = await schema.table_names(catalog.get(name))
            if now != tables[name]:
                tables[name] = now
                app.list_changed("resources")
