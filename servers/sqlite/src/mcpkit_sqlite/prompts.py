"""mcp-sqlite's prompts: the reference's `mcp-demo`, explore, answer a question, optimise.

Each asks the model to use the tools; none puts a database's rows in the prompt, as rows
are data another party may have written, not instructions.
"""

from typing import Annotated

from mcpkit import Context, Param, Server

from .catalog import Catalog
from .resources import complete_database, complete_table

Topic = Annotated[str, Param(description="The business domain to build the demo around")]
DatabaseArg = Annotated[str, Param(description="Which database (the only one if empty)")]


def register_prompts(app: Server) -> None:
    """Register the prompts and the completion of their database and table arguments."""

    @app.prompt(name="mcp-demo", title="Demo: a business scenario")
    async def mcp_demo(catalog: Catalog, topic: Topic) -> str:
        """Walk through a business scenario on the database (the reference server's demo)."""
        writing = (
            "Create two or three tables for the scenario with create_table and fill them with"
            " write_query, using bound params."
            if catalog.writable
            else "The databases are read-only here: explore the tables that exist instead."
        )
        return (
            f"Let us explore {topic!r} as a business analyst would, with this SQLite server."
            f" Start with list_tables and describe_table. {writing} Then ask three questions a"
            " manager of that business would ask, answer each with read_query, and record what"
            " you learn with append_insight; memo://insights gathers the insights. Finish with a"
            " short summary of the memo."
        )

    @app.prompt(title="Explore a database")
    async def explore_database(ctx: Context, catalog: Catalog, database: DatabaseArg = "") -> str:
        """Describe what a database holds and how its tables relate."""
        name = (await catalog.choose(ctx, database or None)).name
        return (
            f"Explore the SQLite database {name}: list_tables, describe_table for each table,"
            " then explain what the data is about, how the tables relate (foreign keys, shared"
            " columns), and three useful questions it can answer, each with its SQL."
        )

    @app.prompt(title="Answer a question with SQL")
    async def answer_question(
        ctx: Context,
        catalog: Catalog,
        question: Annotated[str, Param(description="What to find out")],
        database: DatabaseArg = "",
        table: Annotated[str, Param(description="A table to start from")] = "",
    ) -> str:
        """Write and run the SQL that answers a question."""
        name = (await catalog.choose(ctx, database or None)).name
        start = f" Start from table {table!r}." if table else ""
        return (
            f"Answer this question from the SQLite database {name}: {question}\n"
            f"Look at the schema first (list_tables, describe_table).{start} Write one SELECT,"
            " run it with read_query (bound params for values), check that the result makes"
            " sense, then answer in words and show the SQL."
        )

    @app.prompt(title="Optimise a query")
    async def optimize_query(
        ctx: Context,
        catalog: Catalog,
        query: Annotated[str, Param(description="The slow query")],
        database: DatabaseArg = "",
    ) -> str:
        """Find why a query is slow and how to make it faster."""
        name = (await catalog.choose(ctx, database or None)).name
        return (
            f"This query on the SQLite database {name} is slow:\n{query}\n"
            "Read its plan with explain_query and the tables it uses with describe_table; say"
            " which step costs most and propose a rewrite or an index (as SQL), explaining the"
            " plan you expect then."
        )

    for prompt in ("explore_database", "answer_question", "optimize_query"):
        app.complete(prompt=prompt, argument="database")(complete_database)
    app.complete(prompt="answer_question", argument="table")(complete_table)
