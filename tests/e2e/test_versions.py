"""Initialize, tools, resources and prompts at each protocol version, through the SDK client.

Each test drives a fresh mcp-everything over stdio; the `everything` fixture validates every
message the server sent against the official schema of the negotiated version. Field checks
that depend on the version are made on the raw messages, not on the SDK's parsed models.
"""

import base64
import json
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from e2e.harness import HTTP_MODES, TRANSPORTS, VERSIONS, Everything, over, text_of
from e2e.http_wire import HttpTransport
from mcpkit_everything import __version__

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5E"
    "rkJggg=="
)
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
CONFORMANCE_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_resource_link",
    "get_weather",
    "json_schema_2020_12_tool",
}
TEST_PROMPTS = [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
]


def since(version: str, first: str) -> bool:
    """Whether `version` is `first` or later (versions are ISO dates)."""
    return version >= first


@over(VERSIONS, (*TRANSPORTS, *HTTP_MODES))
async def test_initialize(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        await conn.session.send_ping()
        result = conn.record.result_of("initialize")

    transport = everything.transport
    if isinstance(transport, HttpTransport) and transport.server.mode == "stateless":
        changes: dict[str, Any] = {}  # nothing outlives a request: no notifications
        subscriptions: dict[str, Any] = {}
    else:
        changes = {"listChanged": True}
        subscriptions = {"subscribe": True, **changes}
    expected_capabilities: dict[str, Any] = {
        "logging": {},
        "tools": changes,
        "resources": subscriptions,
        "prompts": changes,
    }
    if since(version, "2025-03-26"):
        expected_capabilities["completions"] = {}
    assert result["protocolVersion"] == version
    assert result["capabilities"] == expected_capabilities
    assert result["instructions"]
    info = result["serverInfo"]
    assert (info["name"], info["version"]) == ("mcp-everything", __version__)
    assert ("title" in info) == since(version, "2025-06-18")
    assert ("websiteUrl" in info) == ("icons" in info) == since(version, "2025-11-25")
    if since(version, "2025-11-25"):
        assert info["icons"] == [
            {"src": f"data:image/png;base64,{PNG}", "mimeType": "image/png", "sizes": ["1x1"]}
        ]
    assert conn.initialize_result.server_info.name == "mcp-everything"


@over(VERSIONS)
async def test_tools_list(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        listed = await conn.session.list_tools()
        raw = {tool["name"]: tool for tool in conn.record.result_of("tools/list")["tools"]}

    assert {tool.name for tool in listed.tools} >= CONFORMANCE_TOOLS
    assert set(raw) == {tool.name for tool in listed.tools}
    for tool in raw.values():
        assert tool["inputSchema"]["type"] == "object"
        assert "description" in tool
        if not since(version, "2025-06-18"):
            assert "title" not in tool
            assert "outputSchema" not in tool
        assert ("annotations" in tool) == since(version, "2025-03-26")
        assert ("icons" in tool) == (
            since(version, "2025-11-25") and tool["name"] == "test_simple_text"
        )
    weather = raw["get_weather"]
    assert weather["inputSchema"]["required"] == ["city"]
    if since(version, "2025-06-18"):
        schema = weather["outputSchema"]
        assert schema["type"] == "object"
        assert set(schema["properties"]) == {"city", "temperature_celsius", "conditions"}
    if since(version, "2025-03-26"):
        assert raw["test_simple_text"]["annotations"] == {
            "readOnlyHint": True,
            "openWorldHint": False,
        }
    schema_2020 = raw["json_schema_2020_12_tool"]["inputSchema"]
    assert schema_2020["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema_2020["properties"]["address"] == {"$ref": "#/$defs/address"}


@over(VERSIONS, (*TRANSPORTS, *HTTP_MODES))
async def test_tools_call(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        call = conn.session.call_tool

        result = await call("test_simple_text", {})
        assert text_of(result) == "This is a simple text response for testing."
        assert not result.is_error

        result = await call("test_image_content", {})
        (image,) = result.content
        assert isinstance(image, types.ImageContent)
        assert (image.data, image.mime_type) == (PNG, "image/png")
        assert base64.b64decode(image.data).startswith(b"\x89PNG")

        result = await call("test_embedded_resource", {})
        (embedded,) = result.content
        assert isinstance(embedded, types.EmbeddedResource)
        assert isinstance(embedded.resource, types.TextResourceContents)
        assert embedded.resource.uri == "test://embedded-resource"
        assert embedded.resource.text == "This is an embedded resource content."
        assert embedded.resource.mime_type == "text/plain"

        result = await call("test_multiple_content_types", {})
        assert [block.type for block in result.content] == ["text", "image", "resource"]
        text, image, embedded = result.content
        assert isinstance(text, types.TextContent)
        assert text.text == "Multiple content types test:"
        assert isinstance(embedded, types.EmbeddedResource)
        assert isinstance(embedded.resource, types.TextResourceContents)
        assert json.loads(embedded.resource.text) == {"test": "data", "value": 123}

        result = await call("echo", {"text": "héllo ✓ 𝄞"})
        assert text_of(result) == "héllo ✓ 𝄞"

        result = await call("json_schema_2020_12_tool", {"name": "Ada", "address": {"city": "X"}})
        assert text_of(result) == 'Received name=\'Ada\', address={"city": "X"}'

        result = await call("test_error_handling", {})
        assert result.is_error
        assert text_of(result) == "This tool intentionally returns an error for testing"

        # Invalid arguments are a tool error the model can read, not a protocol error.
        result = await call("get_weather", {"city": 42})
        assert result.is_error
        assert "city" in text_of(result)

        with pytest.raises(MCPError) as unknown:
            await call("no_such_tool", {})
        assert unknown.value.error.code == types.INVALID_PARAMS

        record = conn.record
        for tool in ("test_simple_text", "test_image_content", "test_embedded_resource"):
            assert "isError" not in record.result_of("tools/call", name=tool)
        assert record.result_of("tools/call", name="test_error_handling")["isError"] is True


@over(VERSIONS)
async def test_tools_call_version_shaped(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        call = conn.session.call_tool
        audio = await call("test_audio_content", {})
        link = await call("test_resource_link", {})
        weather = await call("get_weather", {"city": "Paris"})
        record = conn.record

    # Audio content exists from 2025-03-26; 2024-11-05 gets a text stand-in.
    (block,) = record.result_of("tools/call", name="test_audio_content")["content"]
    if since(version, "2025-03-26"):
        assert block == {"type": "audio", "data": WAV, "mimeType": "audio/wav"}
        assert isinstance(audio.content[0], types.AudioContent)
    else:
        assert block["type"] == "text"
        assert "audio" in block["text"]

    # Resource links exist from 2025-06-18; older sessions get the URI as text.
    (block,) = record.result_of("tools/call", name="test_resource_link")["content"]
    if since(version, "2025-06-18"):
        assert block == {
            "type": "resource_link",
            "uri": "test://static-text",
            "name": "static-text",
            "mimeType": "text/plain",
        }
        assert isinstance(link.content[0], types.ResourceLink)
    else:
        assert block["type"] == "text"
        assert "test://static-text" in block["text"]

    # Structured content exists from 2025-06-18; the same JSON is always there as text.
    expected = {"city": "Paris", "temperature_celsius": 21.5, "conditions": "sunny"}
    raw = record.result_of("tools/call", name="get_weather")
    assert json.loads(text_of(weather)) == expected
    if since(version, "2025-06-18"):
        assert raw["structuredContent"] == expected
        assert weather.structured_content == expected
    else:
        assert "structuredContent" not in raw


@over(VERSIONS)
async def test_resources(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        session = conn.session
        listed = await session.list_resources()
        templates = await session.list_resource_templates()
        text = await session.read_resource("test://static-text")
        binary = await session.read_resource("test://static-binary")
        templated = await session.read_resource("test://template/123/data")
        with pytest.raises(MCPError) as missing:
            await session.read_resource("test://no-such-resource")
        record = conn.record

    assert {r.uri for r in listed.resources} >= {
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    }
    raw_resources = {r["uri"]: r for r in record.result_of("resources/list")["resources"]}
    assert raw_resources["test://static-text"] == {
        "uri": "test://static-text",
        "name": "static-text",
        "description": "A static text resource.",
        "mimeType": "text/plain",
    }
    assert raw_resources["test://static-binary"]["mimeType"] == "image/png"
    (template,) = templates.resource_templates
    assert record.result_of("resources/templates/list")["resourceTemplates"] == [
        {
            "uriTemplate": "test://template/{id}/data",
            "name": "template-data",
            "description": "A JSON document for any id.",
            "mimeType": "application/json",
        }
    ]
    assert template.uri_template == "test://template/{id}/data"

    assert record.result_of("resources/read", uri="test://static-text")["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    assert isinstance(text.contents[0], types.TextResourceContents)
    assert record.result_of("resources/read", uri="test://static-binary")["contents"] == [
        {"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}
    ]
    assert isinstance(binary.contents[0], types.BlobResourceContents)
    (contents,) = record.result_of("resources/read", uri="test://template/123/data")["contents"]
    assert contents["uri"] == "test://template/123/data"
    assert contents["mimeType"] == "application/json"
    assert json.loads(contents["text"]) == {
        "id": "123",
        "templateTest": True,
        "data": "Data for ID: 123",
    }
    assert isinstance(templated.contents[0], types.TextResourceContents)
    assert missing.value.error.code == -32002  # the spec's "resource not found"


@over(VERSIONS)
async def test_prompts(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        session = conn.session
        listed = await session.list_prompts()
        simple = await session.get_prompt("test_simple_prompt")
        with_args = await session.get_prompt(
            "test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"}
        )
        embedded = await session.get_prompt(
            "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
        )
        image = await session.get_prompt("test_prompt_with_image")
        with pytest.raises(MCPError) as missing_argument:
            await session.get_prompt("test_prompt_with_arguments", {"arg1": "only one"})
        with pytest.raises(MCPError) as unknown:
            await session.get_prompt("no_such_prompt")
        record = conn.record

    assert [p.name for p in listed.prompts][: len(TEST_PROMPTS)] == TEST_PROMPTS
    raw = {p["name"]: p for p in record.result_of("prompts/list")["prompts"]}
    assert raw["test_prompt_with_arguments"]["arguments"] == [
        {"name": "arg1", "description": "First test argument", "required": True},
        {"name": "arg2", "description": "Second test argument", "required": True},
    ]
    assert [a["name"] for a in raw["test_prompt_with_embedded_resource"]["arguments"]] == [
        "resourceUri"
    ]
    for prompt in raw.values():
        assert since(version, "2025-06-18") or "title" not in prompt

    (message,) = simple.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "This is a simple prompt for testing."

    (message,) = with_args.messages
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "Prompt with arguments: arg1='hello', arg2='world'"

    assert record.result_of("prompts/get", name="test_prompt_with_embedded_resource")[
        "messages"
    ] == [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": "test://example-resource",
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                },
            },
        },
        {
            "role": "user",
            "content": {"type": "text", "text": "Please process the embedded resource above."},
        },
    ]
    assert isinstance(embedded.messages[0].content, types.EmbeddedResource)

    first, second = image.messages
    assert isinstance(first.content, types.ImageContent)
    assert (first.content.data, first.content.mime_type) == (PNG, "image/png")
    assert isinstance(second.content, types.TextContent)

    assert missing_argument.value.error.code == types.INVALID_PARAMS
    assert unknown.value.error.code == types.INVALID_PARAMS
