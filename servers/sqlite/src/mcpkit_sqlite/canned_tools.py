"""The operator's canned queries as tools, `query_NAME {its parameters}`, and as prompts.

A tool's arguments are its query's parameters, typed as the file declares them, and for a
read the paging of read_query (`max_rows`, `offset`, `format`, `timeout_ms`). Each query is
served by a function made for it, whose signature holds the query's parameters
(`with_parameters`): mcpkit validates the model's values and lists their schema as for any
tool. The prompt of the same name asks the model to run the query with the user's values
and say what the rows show (never pasting the rows in as instructions).
"""

import inspect
from collections.abc import Callable, Collection, Sequence
from typing import Annotated, Any, TypeVar

from mcpkit import Context, Param, Server

from . import render
from .canned import NO_DEFAULT, CannedQuery, Parameter
from .catalog import Catalog
from .query_tools import (
    READ,
    WRITE,
    MaxRows,
    Offset,
    Statement,
    TimeoutMs,
    run_change,
    run_read,
)
from .results import Changed, Format, Rows

F = TypeVar("F", bound=Callable[..., Any])


def register_canned_queries(
    app: Server, queries: Sequence[CannedQuery], writable: Collection[str]
) -> None:
    """Register each query's tool and prompt (a write query's where its database may be).

    `writable`: the names of the databases that may be written.
    """
    for query in queries:
        if query.write and query.database not in writable:
            continue
        summary = query.description or query.title or f"The canned query {query.name}."
        description = f"{summary}\n\nRuns on database {query.database}:\n{query.sql.strip()}"
        arguments = [_argument(parameter) for parameter in query.params]
        worded = [_argument(parameter, prompt=True) for parameter in query.params]
        app.tool(
            name=query.tool_name,
            title=query.title,
            description=description,
            annotations=WRITE if query.write else READ,
            text=render.changed if query.write else render.rows,
        )(with_parameters(_writer(query) if query.write else _reader(query), arguments))
        app.prompt(name=query.tool_name, title=query.title, description=summary)(
            with_parameters(_prompt(query), worded)
        )


def with_parameters(fn: F, parameters: Sequence[inspect.Parameter]) -> F:
    """Return `fn`, its `**values` replaced by `parameters` (keyword-only) in its signature.

    Its injected parameters (`Context`, `Catalog`) stay first, its own arguments last.
    """
    signature = inspect.signature(fn)
    own = [
        parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for parameter in signature.parameters.values()
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    injected = [p for p in own if p.annotation in (Context, Catalog)]
    rest = [p for p in own if p not in injected]
    fn.__signature__ = signature.replace(parameters=[*injected, *parameters, *rest])  # pyright: ignore[reportFunctionMemberAccess]
    fn.__annotations__ = {**fn.__annotations__, **{p.name: p.annotation for p in parameters}}
    return fn


def _argument(parameter: Parameter, *, prompt: bool = False) -> inspect.Parameter:
    """Return the tool argument a parameter makes (its type and default), or its prompt's.

    A prompt's arguments are text, "" when optional.
    """
    default = parameter.default
    if default is NO_DEFAULT:
        default = inspect.Parameter.empty
    elif prompt:
        default = ""
    kind = str if prompt else parameter.kind
    annotation = Annotated[kind, Param(description=parameter.description)]
    return inspect.Parameter(
        parameter.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _reader(query: CannedQuery) -> Callable[..., Any]:
    async def run(
        ctx: Context,
        catalog: Catalog,
        max_rows: MaxRows = 500,
        offset: Offset = 0,
        format: Format = "json",
        timeout_ms: TimeoutMs = None,
        **values: Any,
    ) -> Rows:
        return await run_read(
            ctx,
            catalog,
            query.database,
            query.sql,
            values,
            max_rows=max_rows,
            offset=offset,
            form=format,
            timeout_ms=timeout_ms,
        )

    return run


def _writer(query: CannedQuery) -> Callable[..., Any]:
    async def run(ctx: Context, catalog: Catalog, **values: Any) -> Changed:
        return await run_change(
            ctx, catalog, query.database, [Statement(sql=query.sql, params=values)]
        )

    return run


def _prompt(query: CannedQuery) -> Callable[..., Any]:
    async def prompt(**values: str) -> str:
        given = ", ".join(f"{name} = {value!r}" for name, value in values.items() if value)
        with_values = f" with {given}" if given else ""
        outcome = "what it changed" if query.write else "what its rows show"
        return (
            f"Run the canned query {query.tool_name}{with_values}, then say in a few sentences"
            f" {outcome}. If a value is not of the type the tool asks for, ask me for it"
            " rather than guessing."
        )

    return prompt
