"""mcp-sqlite's tools that run the model's SQL: reads, writes, transactions, plans.

Reads run on the database's read-only connection, writes on its writer (registered only
when some database may be written). Each call is logged to the client (statement kind,
rows, time; never the bound values), reports progress toward its time budget, and stops
SQLite at once when cancelled.
"""

import re
from collections.abc import Sequence
from typing import Annotated, NotRequired

from typing_extensions import TypedDict

from mcpkit import Context, Param, Server, ToolAnnotations
from mcpkit.work import Progress

from . import render
from .catalog import Catalog
from .cells import Params
from .errors import SqliteError
from .memo import MAX_INSIGHT_CHARS, Memo
from .results import Changed, Format, Rows
from .schema import GAP

READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
NOTE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)

Query = Annotated[str, Param(description="One SQL statement", min_length=1)]
DatabaseName = Annotated[
    str | None, Param(description="Which database (see database_info); the only one if omitted")
]
BindParams = Annotated[
    Params,
    Param(description='Values for ? (a list) or :name (an object); a BLOB as {"$base64": "..."}'),
]
MaxRows = Annotated[int, Param(ge=1, le=10_000, description="Rows of a page at most")]
Offset = Annotated[int, Param(ge=0, description="Rows to skip (next_offset)")]
TimeoutMs = Annotated[
    int | None, Param(ge=1, description="Time budget in ms (default: the server's --timeout)")
]


_LEADING = re.compile(rf"(?:{GAP}\(?)*", re.DOTALL)
"""What comes before a statement's first keyword: spaces, comments, parentheses."""
_CREATE_TABLE = re.compile(rf"{GAP}CREATE{GAP}(?:TEMP(?:ORARY)?{GAP})?TABLE\b", re.I | re.S)


class Statement(TypedDict):
    """One statement of execute_transaction."""

    sql: str
    params: NotRequired[Params]


def kind(sql: str) -> str:
    """The statement's first keyword, for the log (never its values)."""
    skipped = _LEADING.match(sql)  # always matches, if only nothing
    words = sql[skipped.end() if skipped else 0 :].split(None, 1)
    return words[0].upper() if words else "?"


def seconds(catalog: Catalog, timeout_ms: int | None) -> float:
    """The time budget of a call: its own, capped by the operator's."""
    limit = catalog.limits.seconds
    return limit if timeout_ms is None else min(limit, timeout_ms / 1000)


def register_query_tools(app: Server, *, writable: bool) -> None:
    """Register read_query, explain_query and append_insight; the write tools if `writable`."""

    @app.tool(title="Run a read-only query", annotations=READ, text=render.rows)
    async def read_query(
        ctx: Context,
        catalog: Catalog,
        query: Query,
        params: BindParams = None,
        database: DatabaseName = None,
        max_rows: MaxRows = 500,
        offset: Offset = 0,
        format: Format = "json",
        timeout_ms: TimeoutMs = None,
    ) -> Rows:
        """Run one SELECT (WITH, VALUES, EXPLAIN, a schema pragma) and return its rows.

        The connection only reads: SQLite itself refuses any write. Results come a page
        at a time: when more rows follow, next_offset says where to continue.
        """
        return await run_read(
            ctx,
            catalog,
            database,
            query,
            params,
            max_rows=max_rows,
            offset=offset,
            form=format,
            timeout_ms=timeout_ms,
        )

    @app.tool(title="Explain a query's plan", annotations=READ, text=render.rows)
    async def explain_query(
        ctx: Context,
        catalog: Catalog,
        query: Query,
        params: BindParams = None,
        database: DatabaseName = None,
    ) -> Rows:
        """Show how SQLite would run a query (EXPLAIN QUERY PLAN); the query is not run."""
        db = await catalog.choose(ctx, database)
        return await db.query(
            f"EXPLAIN QUERY PLAN {query}",
            params,
            max_rows=1000,
            offset=0,
            max_cell_bytes=catalog.limits.max_cell_bytes,
            max_result_bytes=catalog.limits.max_result_bytes,
            seconds=seconds(catalog, None),
            form="markdown",
        )

    @app.tool(title="Add a business insight", annotations=NOTE)
    async def append_insight(
        ctx: Context,
        memo: Memo,
        insight: Annotated[str, Param(min_length=1, max_length=MAX_INSIGHT_CHARS)],
    ) -> str:
        """Add an insight to the memo (memo://insights)."""
        count = memo.append(insight)
        await ctx.notify_resource_updated("memo://insights")
        return f"Insight added to memo://insights ({count} in all)."

    if writable:
        _register_write_tools(app)


def _register_write_tools(app: Server) -> None:
    @app.tool(title="Run a writing statement", annotations=WRITE, text=render.changed)
    async def write_query(
        ctx: Context,
        catalog: Catalog,
        query: Query,
        params: BindParams = None,
        database: DatabaseName = None,
    ) -> Changed:
        """Run one INSERT, UPDATE, DELETE or DDL statement on a writable database."""
        return await run_change(ctx, catalog, database, [Statement(sql=query, params=params)])

    @app.tool(title="Create a table", annotations=WRITE, text=render.changed)
    async def create_table(
        ctx: Context,
        catalog: Catalog,
        query: Annotated[str, Param(description="One CREATE TABLE statement")],
        database: DatabaseName = None,
    ) -> Changed:
        """Create a table with one CREATE TABLE statement."""
        if not _CREATE_TABLE.match(query):
            raise SqliteError("create_table runs one CREATE TABLE statement; use write_query.")
        return await run_change(ctx, catalog, database, [Statement(sql=query, params=None)])

    @app.tool(title="Run statements in one transaction", annotations=WRITE, text=render.changed)
    async def execute_transaction(
        ctx: Context,
        catalog: Catalog,
        statements: Annotated[list[Statement], Param(min_length=1, max_length=1000)],
        database: DatabaseName = None,
    ) -> Changed:
        """Run several writing statements in one transaction: all of them, or none."""
        return await run_change(ctx, catalog, database, statements)


async def run_read(
    ctx: Context,
    catalog: Catalog,
    database: str | None,
    query: str,
    params: Params,
    *,
    max_rows: int,
    offset: int,
    form: Format,
    timeout_ms: int | None,
) -> Rows:
    """Run one reading statement on `database` (its only one if None) and log what it did.

    Raises:
        SqliteError: no such database, or the statement fails or writes.
    """
    db = await catalog.choose(ctx, database)
    limits = catalog.limits
    result = await db.query(
        query,
        params,
        max_rows=min(max_rows, limits.max_rows),
        offset=offset,
        max_cell_bytes=limits.max_cell_bytes,
        max_result_bytes=limits.max_result_bytes,
        seconds=seconds(catalog, timeout_ms),
        form=form,
        tick=Progress(ctx, "s", total=seconds(catalog, timeout_ms)),
    )
    await _log(ctx, db.name, kind(query), f"{result['row_count']} rows", result["elapsed_ms"])
    return result


async def run_change(
    ctx: Context, catalog: Catalog, database: str | None, statements: Sequence[Statement]
) -> Changed:
    """Run writing statements on `database` in one transaction and log what they did.

    Raises:
        SqliteError: no such database, it is read-only, or a statement fails.
    """
    db = await catalog.choose(ctx, database)
    limits = catalog.limits
    done = await db.change(
        [(s["sql"], s.get("params")) for s in statements],
        seconds=limits.seconds,
        max_cell_bytes=limits.max_cell_bytes,
        max_result_bytes=limits.max_result_bytes,
    )
    kinds = ", ".join(sorted({kind(s["sql"]) for s in statements}))
    await _log(ctx, db.name, kinds, f"{done['rows_affected']} rows affected", None)
    return done


async def _log(ctx: Context, database: str, what: str, outcome: str, ms: float | None) -> None:
    took = "" if ms is None else f" in {ms:g} ms"
    await ctx.log("info", f"{what} on {database}: {outcome}{took}", logger="mcp-sqlite")
