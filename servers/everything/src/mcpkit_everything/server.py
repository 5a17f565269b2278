"""mcp-everything: every protocol feature, under the names the conformance suite calls.

This module only registers; the data lives in `fixtures`. `build_server(watched_path)` returns
the server; the file at `watched_path` backs test://watched-resource. The server's lifespan
makes that file (in a temporary directory by default), a `Journal` and the `Places` of
clients, and hands each to the handlers that annotate a parameter with its type.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import anyio

from mcpkit import (
    AudioContent,
    Context,
    EmbeddedResource,
    Icon,
    ImageContent,
    Message,
    Param,
    ResourceLink,
    SamplingMessage,
    Server,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
    ToolError,
    oplog,
)
from mcpkit.watch import Changed

from . import __version__, fixtures
from .diagnostics import register_diagnostics
from .fixtures import WatchedFile
from .hints import READ_ONLY
from .inputs import register_input_tools
from .journal import register_journal
from .polling import register_polling
from .schemas import ADDRESS_TOOL_SCHEMA, DEFAULTS_FORM, ENUMS_FORM, USER_FORM
from .state import held_while_running
from .workspace import register_workspace

ICON = Icon(
    src=f"data:image/png;base64,{fixtures.RED_PIXEL_PNG}", mime_type="image/png", sizes=["1x1"]
)


# Dataclasses and `Param`, not pydantic's models and `Field`: pydantic is then imported on
# the first listing or call, not at start-up, where it would be some 40% of the work.


@dataclass
class Weather:
    """Structured output of get_weather."""

    city: str
    temperature_celsius: float
    conditions: str


@dataclass
class Roots:
    """Structured output of list_roots."""

    roots: list[str]


def build_server(watched_path: Path | None = None) -> Server:
    """Return the mcp-everything server, its watched resource backed by `watched_path`.

    Without `watched_path`, a file in a temporary directory that lasts while the server runs.
    """
    app = Server(
        "mcp-everything",
        __version__,
        title="MCP Everything",
        instructions="A test server: every MCP feature, with the conformance suite's fixtures.",
        website_url="https://github.com/mcpkit/mcpkit",
        icons=[ICON],
        lifespan=partial(held_while_running, watched_path),
    )
    oplog.describe(app, ["a scratch directory of its own (read-write)"], roots="narrow")
    _register_content_tools(app)
    _register_interaction_tools(app)
    _register_client_request_tools(app)
    _register_resources(app)
    _register_prompts(app)
    _register_completions(app)
    _register_dynamic_items(app)
    register_input_tools(app)
    register_diagnostics(app)
    register_journal(app)
    register_polling(app)
    register_workspace(app)

    @app.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True
        )
    )
    async def update_watched_resource(text: str, watched: WatchedFile) -> str:
        """Replace the text of test://watched-resource; subscribers get an update notification."""
        await anyio.to_thread.run_sync(watched.write, text)
        return "test://watched-resource updated"

    return app


def _register_content_tools(app: Server) -> None:
    @app.tool(annotations=READ_ONLY, icons=[ICON])
    async def test_simple_text() -> str:
        """Return a simple text response."""
        return fixtures.SIMPLE_TEXT

    @app.tool(annotations=READ_ONLY)
    async def test_image_content() -> ImageContent:
        """Return a 1x1 PNG image."""
        return ImageContent(data=fixtures.RED_PIXEL_PNG, mime_type="image/png")

    @app.tool(annotations=READ_ONLY)
    async def test_audio_content() -> AudioContent:
        """Return a short WAV audio clip."""
        return AudioContent(data=fixtures.SILENT_WAV, mime_type="audio/wav")

    @app.tool(annotations=READ_ONLY)
    async def test_embedded_resource() -> EmbeddedResource:
        """Return an embedded text resource."""
        text = fixtures.EMBEDDED_TEXT
        resource = TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text=text
        )
        return EmbeddedResource(resource=resource)

    @app.tool(annotations=READ_ONLY)
    async def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
        """Return text, an image and an embedded resource together."""
        resource = TextResourceContents(
            uri="test://mixed-content-resource",
            mime_type="application/json",
            text=fixtures.MIXED_JSON,
        )
        return [
            TextContent(text="Multiple content types test:"),
            ImageContent(data=fixtures.RED_PIXEL_PNG, mime_type="image/png"),
            EmbeddedResource(resource=resource),
        ]

    @app.tool(annotations=READ_ONLY)
    async def test_resource_link() -> ResourceLink:
        """Return a link to test://static-text."""
        return ResourceLink(uri="test://static-text", name="static-text", mime_type="text/plain")

    @app.tool(annotations=READ_ONLY)
    async def get_weather(city: Annotated[str, Param(description="City name")]) -> Weather:
        """Return (made-up) weather for a city, as structured content."""
        return Weather(city=city, temperature_celsius=21.5, conditions="sunny")

    @app.tool(annotations=READ_ONLY)
    async def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @app.tool(annotations=READ_ONLY, input_schema=ADDRESS_TOOL_SCHEMA)
    async def json_schema_2020_12_tool(
        name: str,
        address: dict[str, Any] | None = None,
        contactMethod: str | None = None,
        phone: str | None = None,
        email: str | None = None,
    ) -> str:
        """Accept a name, an address and a contact; the schema uses JSON Schema 2020-12."""
        given = {"method": contactMethod, "phone": phone, "email": email}
        contact = {key: value for key, value in given.items() if value is not None}
        suffix = f", contact={json.dumps(contact)}" if contact else ""
        return f"Received name={name!r}, address={json.dumps(address)}{suffix}"


def _register_interaction_tools(app: Server) -> None:
    @app.tool(annotations=READ_ONLY)
    async def test_tool_with_logging(ctx: Context) -> str:
        """Send three log messages while running."""
        await ctx.log("info", "Tool execution started")
        await anyio.sleep(0.05)
        await ctx.log("info", "Tool processing data")
        await anyio.sleep(0.05)
        await ctx.log("info", "Tool execution completed")
        return "Logging test completed"

    @app.tool(annotations=READ_ONLY)
    async def test_tool_with_progress(ctx: Context) -> str:
        """Report progress three times while running."""
        for done in (0, 50, 100):
            await ctx.progress(done, 100, f"{done}% done")
            await anyio.sleep(0.05)
        return "Progress test completed"

    @app.tool(annotations=READ_ONLY)
    async def test_error_handling() -> str:
        """Fail on purpose, as a tool error the model can read."""
        raise ToolError(fixtures.ERROR_MESSAGE)

    @app.tool(annotations=READ_ONLY)
    async def long_running_operation(
        ctx: Context,
        duration: Annotated[float, Param(description="Seconds to run", ge=0, le=600)] = 10,
        steps: Annotated[int, Param(description="Progress reports", ge=1, le=1000)] = 5,
    ) -> str:
        """Run for a while, reporting progress; cancellable."""
        for step in range(1, steps + 1):
            await anyio.sleep(duration / steps)
            await ctx.progress(step, steps, f"step {step} of {steps}")
        return f"Long running operation completed: {duration:g} s, {steps} steps"

    @app.tool(annotations=READ_ONLY)
    async def test_reconnection(ctx: Context) -> str:
        """End this call's SSE stream mid-call; the client reconnects for the result (SEP-1699)."""
        ctx.close_sse_stream()
        await anyio.sleep(0.1)  # the result arrives while the client is away
        return "Reconnection test completed: the result came after the client reconnected."


def _register_client_request_tools(app: Server) -> None:
    @app.tool(annotations=READ_ONLY)
    async def test_sampling(ctx: Context, prompt: str) -> str:
        """Ask the client's model to answer a prompt."""
        message = SamplingMessage(role="user", content=TextContent(text=prompt))
        answer = await ctx.sample([message], max_tokens=100)
        text = (
            answer.content.text
            if isinstance(answer.content, TextContent)
            else f"[{answer.content.type}]"
        )
        return f"LLM response: {text}"

    @app.tool(annotations=READ_ONLY)
    async def test_elicitation(ctx: Context, message: str) -> str:
        """Ask the user for a username and an email address."""
        return _elicit_reply(await ctx.elicit(message, USER_FORM))

    @app.tool(annotations=READ_ONLY)
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Ask the user to confirm a form whose fields all have defaults."""
        return _elicit_reply(await ctx.elicit("Please review your details", DEFAULTS_FORM))

    @app.tool(annotations=READ_ONLY)
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Ask the user to choose from each kind of enum field."""
        return _elicit_reply(await ctx.elicit("Please make your choices", ENUMS_FORM))

    @app.tool(annotations=READ_ONLY)
    async def test_url_elicitation(ctx: Context, url: str) -> str:
        """Ask the user to complete a step on a web page (URL-mode elicitation)."""
        return _elicit_reply(
            await ctx.elicit_url("Please complete this step", url, "everything-url-1")
        )

    @app.tool(annotations=READ_ONLY)
    async def list_roots(ctx: Context) -> Roots:
        """Return the roots the client shared."""
        return Roots(roots=[root.uri for root in await ctx.roots()])


def _elicit_reply(result: Any) -> str:
    return f"User response: action={result.action}, content={json.dumps(result.content)}"


def _register_resources(app: Server) -> None:
    @app.resource("test://static-text", name="static-text", mime_type="text/plain")
    async def static_text() -> str:
        """A static text resource."""
        return fixtures.STATIC_TEXT

    @app.resource("test://static-binary", name="static-binary", mime_type="image/png")
    async def static_binary() -> bytes:
        """A static binary resource (a 1x1 PNG)."""
        import base64

        return base64.b64decode(fixtures.RED_PIXEL_PNG)

    @app.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
    async def template_data(id: str) -> str:
        """A JSON document for any id."""
        return fixtures.template_data(id)

    @app.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
    async def watched_resource(watched: WatchedFile) -> str:
        """A file-backed resource: subscribe, then call update_watched_resource."""
        return await anyio.to_thread.run_sync(watched.read)

    @app.watch("test://watched-resource")
    async def watch_watched_resource(changed: Changed, watched: WatchedFile) -> None:
        await changed.follow_files([watched.path])


def _register_prompts(app: Server) -> None:
    @app.prompt()
    async def test_simple_prompt() -> str:
        """A prompt without arguments."""
        return "This is a simple prompt for testing."

    @app.prompt()
    async def test_prompt_with_arguments(
        arg1: Annotated[str, Param(description="First test argument")],
        arg2: Annotated[str, Param(description="Second test argument")],
    ) -> str:
        """A prompt with two required arguments."""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @app.prompt()
    async def test_prompt_with_embedded_resource(
        resourceUri: Annotated[str, Param(description="URI of the resource to embed")],
    ) -> list[Message]:
        """A prompt that embeds a resource."""
        text = fixtures.PROMPT_RESOURCE_TEXT
        resource = TextResourceContents(uri=resourceUri, mime_type="text/plain", text=text)
        return [
            Message(role="user", content=EmbeddedResource(resource=resource)),
            Message(
                role="user", content=TextContent(text="Please process the embedded resource above.")
            ),
        ]

    @app.prompt()
    async def test_prompt_with_image() -> list[Message]:
        """A prompt that contains an image."""
        return [
            Message(
                role="user",
                content=ImageContent(data=fixtures.RED_PIXEL_PNG, mime_type="image/png"),
            ),
            Message(role="user", content=TextContent(text="Please analyze the image above.")),
        ]


def _register_completions(app: Server) -> None:
    @app.complete(prompt="test_prompt_with_arguments", argument="arg1")
    async def complete_arg1(ctx: Context, value: str, arguments: Mapping[str, str]) -> list[str]:
        return fixtures.starting_with(value, fixtures.COMPLETION_WORDS)

    @app.complete(resource="test://template/{id}/data", argument="id")
    async def complete_id(ctx: Context, value: str, arguments: Mapping[str, str]) -> list[str]:
        return fixtures.starting_with(value, fixtures.TEMPLATE_IDS)


def _register_dynamic_items(app: Server) -> None:
    async def test_dynamic_tool() -> str:
        """A tool that exists only while dynamic items are on."""
        return "dynamic tool called"

    async def dynamic_resource() -> str:
        """A resource that exists only while dynamic items are on."""
        return "dynamic resource content"

    async def test_dynamic_prompt() -> str:
        """A prompt that exists only while dynamic items are on."""
        return "This is a dynamic prompt."

    @app.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True
        )
    )
    async def set_dynamic_items(present: bool) -> str:
        """Add or remove test_dynamic_tool, test://dynamic-resource and test_dynamic_prompt."""
        if present:
            app.tool(annotations=READ_ONLY)(test_dynamic_tool)
            app.resource(
                "test://dynamic-resource", name="dynamic-resource", mime_type="text/plain"
            )(dynamic_resource)
            app.prompt()(test_dynamic_prompt)
        else:
            app.remove_tool("test_dynamic_tool")
            app.remove_resource("test://dynamic-resource")
            app.remove_prompt("test_dynamic_prompt")
        return f"dynamic items {'added' if present else 'removed'}"
