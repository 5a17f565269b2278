"""The methods a server answers from what is registered: listing, calls, reads, completion.

Each is `async def method(server, ctx, params) -> result`; `Server.handler(method)` finds
them through `HANDLERS`, which also names the feature each belongs to (a server without
prompts has no `prompts/list`).
"""

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from .completions import Completion, completion_result
from .context import Context
from .errors import InvalidParams, ResourceNotFound
from .pagination import page
from .params import params_object, params_string
from .shape import dump, dump_all

if TYPE_CHECKING:
    from .server import Server

Method = Callable[["Server", Context, dict[str, Any]], Coroutine[Any, Any, dict[str, Any]]]


async def list_tools(server: "Server", ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Answer `tools/list`: a page of tool definitions."""
    tools, cursor = page(
        list(server.tools.values()), params.get("cursor"), "tools", server.page_size
    )
    result: dict[str, Any] = {"tools": [dump(t.definition, ctx.protocol_version) for t in tools]}
    return _with_cursor(result, cursor)


async def call_tool(server: "Server", ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Answer `tools/call`: the tool's result (its failures are `isError` results).

    Raises:
        InvalidParams: no tool of that name, or malformed params.
    """
    name = params_string(params, "name")
    tool = server.tools.get(name)
    if tool is None:
        raise InvalidParams(f"Unknown tool: {name}")
    return await tool.call(ctx, params_object(params, "arguments"))


async def list_resources(server: "Server", ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Answer `resources/list`: registered resources, then those listed per client."""
    listing = [r.listing() for r in server.resources.values() if not r.is_template]
    if server.resource_lister is not None:
        listing += await server.resource_lister(ctx)
    items, cursor = page(listing, params.get("cursor"), "resources", server.page_size)
    return _with_cursor({"resources": dump_all(items, ctx.protocol_version)}, cursor)


async def list_templates(server: "Server", ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Answer `resources/templates/list`: a page of resource templates."""
    templates = [r for r in server.resources.values() if r.is_template]
    items, cursor = page(templates, params.get("cursor"), "templates", server.page_size)
    listing = [r.listing() for r in items]
    return _with_cursor({"resourceTemplates": dump_all(listing, ctx.protocol_version)}, cursor)


async def read_resource(server: "Server", ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Answer `resources/read`: the contents of the URI.

    Raises:
        ResourceNotFound: nothing serves the URI.
    """
    uri = params_string(params, "uri")
    resource, variables = server.find_resource(uri)
    try:
        contents = await resource.read(ctx, uri, variables)
    except server.errors as exc:
        raise ResourceNotFound(uri, str(exc)) from None
    return {"contents": dump_all(contents, ctx.protocol_version)}


async def list_prompts(server: "Server", ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Answer `prompts/list`: a page of prompt definitions."""
    prompts, cursor = page(
        list(server.prompts.values()), params.get("cursor"), "prompts", server.page_size
    )
    result = {"prompts": dump_all([p.definition for p in prompts], ctx.protocol_version)}
    return _with_cursor(result, cursor)


async def get_prompt(server: "Server", ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Answer `prompts/get`: the prompt's messages for the given arguments.

    Raises:
        InvalidParams: no prompt of that name, or invalid arguments.
    """
    name = params_string(params, "name")
    prompt = server.prompts.get(name)
    if prompt is None:
        raise InvalidParams(f"Unknown prompt: {name}")
    try:
        messages = await prompt.render(ctx, params_object(params, "arguments"))
    except server.errors as exc:
        raise InvalidParams(str(exc)) from None
    result: dict[str, Any] = {"messages": dump_all(messages, ctx.protocol_version)}
    if prompt.definition.description:
        result["description"] = prompt.definition.description
    return result


async def complete(server: "Server", ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Answer `completion/complete`: the completer's values, or none if there is none.

    Raises:
        InvalidParams: malformed params.
    """
    # A prompt or template we lack has nothing to offer: an empty answer, not an error,
    # as completion only suggests (generic clients probe it with names of their own).
    ref = params_object(params, "ref")
    argument = params_object(params, "argument")
    kind = ref.get("type")
    target = ref.get("name") if kind == "ref/prompt" else ref.get("uri")
    if kind not in ("ref/prompt", "ref/resource"):
        raise InvalidParams("ref.type must be ref/prompt or ref/resource")
    name = params_string(argument, "name")
    value = params_string(argument, "value")
    completer = server.completers.get((kind, str(target), name))
    arguments = params_object(params_object(params, "context"), "arguments")
    try:
        found = Completion([], 0) if completer is None else await completer(ctx, value, arguments)
    except server.errors as exc:
        raise InvalidParams(str(exc)) from None
    return {"completion": completion_result(found)}


def _with_cursor(result: dict[str, Any], cursor: str | None) -> dict[str, Any]:
    if cursor is not None:
        result["nextCursor"] = cursor
    return result


HANDLERS: dict[str, tuple[str, Method]] = {
    "tools/list": ("tools", list_tools),
    "tools/call": ("tools", call_tool),
    "resources/list": ("resources", list_resources),
    "resources/templates/list": ("resources", list_templates),
    "resources/read": ("resources", read_resource),
    "prompts/list": ("prompts", list_prompts),
    "prompts/get": ("prompts", get_prompt),
    "completion/complete": ("completions", complete),
}
