"""The diagnostic tools of the conformance suite 0.2 for the stateless era and its headers.

SEP-2575 (stateless requests) probes a tool that needs a client capability, one that asks
the user while its response streams, one that logs, and hooks that change the tool and
prompt lists; SEP-2243 (HTTP headers) needs a tool argument mirrored in a header.
"""

from collections.abc import Callable, Mapping

from mcpkit import Context, Server, TextContent
from mcpkit.types import SamplingMessage

from .hints import CHANGES_LISTS, READ_ONLY
from .schemas import HEADER_TOOL_SCHEMA, single_field_form


def register_diagnostics(app: Server) -> None:
    """Register the suite's SEP-2575 and SEP-2243 diagnostic tools."""

    @app.tool(annotations=READ_ONLY)
    async def test_missing_capability(ctx: Context) -> str:
        """Ask the client's model something: a client without sampling is refused (-32021)."""
        message = SamplingMessage(role="user", content=TextContent(text="Say hello"))
        answer = await ctx.sample([message], max_tokens=20)
        return f"The model answered ({answer.model})"

    @app.tool(annotations=READ_ONLY)
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Report progress, then ask the user to confirm (never a request on the stream)."""
        await ctx.progress(1, 2, "asking the user")
        answer = await ctx.elicit("Shall I go on?", single_field_form("ok", "boolean"))
        return f"User response: action={answer.action}"

    @app.tool(annotations=READ_ONLY)
    async def test_logging_tool(ctx: Context) -> str:
        """Log at info level: only a request that asked for a log level receives it."""
        await ctx.log("info", "test_logging_tool ran")
        return "Logged one info message."

    @app.tool(annotations=CHANGES_LISTS)
    async def test_trigger_tool_change() -> str:
        """Add test_triggered_tool, or remove it if present: the tool list changes."""
        add_tool = app.tool(annotations=READ_ONLY)
        return _toggle(
            "test_triggered_tool", app.tools, lambda: add_tool(test_triggered_tool), app.remove_tool
        )

    @app.tool(annotations=CHANGES_LISTS)
    async def test_trigger_prompt_change() -> str:
        """Add test_triggered_prompt, or remove it if present: the prompt list changes."""
        add_prompt = app.prompt()
        return _toggle(
            "test_triggered_prompt",
            app.prompts,
            lambda: add_prompt(test_triggered_prompt),
            app.remove_prompt,
        )

    @app.tool(annotations=READ_ONLY, input_schema=HEADER_TOOL_SCHEMA)
    async def test_header_param(region: str, query: str = "") -> str:
        """Echo the region (mirrored in the Mcp-Param-Region header) and the query."""
        return f"region={region} query={query}"


def _toggle(
    name: str,
    present: Mapping[str, object],
    add: Callable[[], object],
    remove: Callable[[str], None],
) -> str:
    """Remove the item `name` if it is `present`, else add it; say which."""
    if name in present:
        remove(name)
        return f"{name} removed"
    add()
    return f"{name} added"


async def test_triggered_tool() -> str:
    """A tool that test_trigger_tool_change adds and removes."""
    return "triggered tool called"


async def test_triggered_prompt() -> str:
    """A prompt that test_trigger_prompt_change adds and removes."""
    return "This prompt comes and goes."
