"""mcp-sqlite: SQLite databases for models, read-only by the engine, with change subscriptions.

`build_server` declares the server: its lifespan opens the operator's databases (a
`Catalog`) and the insights `Memo`, which handlers get by annotation, and follows which
tables exist, to tell clients when the resource list changes; `SqliteError`, the
work's one error, is declared once. Each feature registers from its own module:
`query_tools` (the model's SQL), `canned_tools` (the operator's), `schema_tools`,
`resources` (with subscriptions and completion) and `prompts`. The guards are in `guard`
and `database`.
"""

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from mcpkit import Server

from . import __version__
from .catalog import Catalog, Limits, RootsMode, opened
from .config import DatabaseSpec
from .errors import SqliteError
from .memo import Memo
from .prompts import register_prompts
from .query_tools import register_query_tools
from .resources import (
    follow_tables,
    register_completions,
    register_resources,
    register_watches,
)
from .schema_tools import register_schema_tools

if TYPE_CHECKING:  # canned queries are imported only where given: start-up is measured
    from .canned import CannedQuery

INSTRUCTIONS = (
    "SQLite databases (database_info names them). Look with list_tables and describe_table,"
    " read with read_query (one statement, bound params, pages of rows: next_offset),"
    " explain with explain_query. Writes, where the operator allows them: write_query,"
    " create_table, execute_transaction."
)


DEFAULT_LIMITS = Limits()


def build_server(
    specs: Sequence[DatabaseSpec],
    limits: Limits = DEFAULT_LIMITS,
    roots: RootsMode = "narrow",
    queries: Sequence["CannedQuery"] = (),
) -> Server:
    """Return the mcp-sqlite server of the databases `specs` (see `catalog` for `roots`).

    The write tools are registered only when some database may be written; the operator's
    canned `queries` are tools and prompts.
    """

    @asynccontextmanager
    async def lifespan() -> AsyncGenerator[tuple[Catalog, Memo]]:
        async with opened(specs, limits, roots) as catalog, anyio.create_task_group() as tasks:
            tasks.start_soon(follow_tables, app, catalog)
            try:
                yield catalog, Memo()
            finally:
                tasks.cancel_scope.cancel()

    app = Server(
        "mcp-sqlite",
        __version__,
        title="SQLite",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        errors=(SqliteError,),
    )
    register_query_tools(app, writable=any(spec.writable for spec in specs))
    register_schema_tools(app)
    register_resources(app)
    register_watches(app)
    register_completions(app)
    register_prompts(app)
    if queries:
        from .canned_tools import register_canned_queries  # see TYPE_CHECKING above

        register_canned_queries(app, queries, {spec.name for spec in specs if spec.writable})
    return app
