"""mcp-sqlite's tools that describe databases: their tables, a table, the database itself."""

from typing import Annotated

from mcpkit import Context, Param, Server

from . import schema
from .catalog import Catalog
from .query_tools import READ, DatabaseName
from .results import Databases, DetailLevel, ObjectType, SchemaObjects, Table, Tables


def register_schema_tools(app: Server) -> None:
    """Register list_tables, describe_table and database_info."""

    @app.tool(title="List tables", annotations=READ)
    async def list_tables(
        ctx: Context,
        catalog: Catalog,
        database: DatabaseName = None,
        include_views: bool = True,
        pattern: str | None = None,
        max_tables: Annotated[int, Param(ge=1, le=10_000)] = 1000,
    ) -> Tables:
        """List the tables (and views) with their row counts; pattern filters names (LIKE)."""
        return await schema.list_tables(
            await catalog.choose(ctx, database),
            include_views=include_views,
            pattern=pattern,
            limit=max_tables,
            max_bytes=catalog.limits.max_result_bytes,
        )

    @app.tool(title="Describe a table", annotations=READ)
    async def describe_table(
        ctx: Context, catalog: Catalog, table_name: str, database: DatabaseName = None
    ) -> Table:
        """Describe a table or view: columns, keys, indexes, row count and its CREATE SQL."""
        return await schema.describe(await catalog.choose(ctx, database), table_name)

    @app.tool(title="Database information", annotations=READ)
    async def database_info(
        ctx: Context,
        catalog: Catalog,
        database: Annotated[str | None, Param(description="One database; all if omitted")] = None,
    ) -> Databases:
        """Describe the databases: name, path, size, journal mode, SQLite version, writable."""
        usable = await catalog.usable(ctx)
        chosen = usable.values() if database is None else [await catalog.choose(ctx, database)]
        return Databases(databases=[await schema.info(db) for db in chosen])

    @app.tool(title="Search schema objects", annotations=READ)
    async def search_objects(
        ctx: Context,
        catalog: Catalog,
        object_type: ObjectType = "table",
        pattern: Annotated[str, Param(description="SQL LIKE pattern of names (% any)")] = "%",
        detail_level: Annotated[
            DetailLevel, Param(description="names, summary (+ column types), full (+ SQL)")
        ] = "names",
        limit: Annotated[int, Param(ge=1, le=1000)] = 100,
        database: DatabaseName = None,
    ) -> SchemaObjects:
        """Find tables, views, indexes, triggers or columns by name, in as much detail as asked.

        Start with names, then ask for more detail of the few that matter.
        """
        db = await catalog.choose(ctx, database)
        max_bytes = catalog.limits.max_result_bytes
        return await schema.search(db, object_type, pattern, detail_level, limit, max_bytes)
