"""Tools: listing, schemas, results, errors, pagination and list changes."""

import base64
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Literal, NotRequired

import jsonschema
import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from checked import connect
from mcpkit import (
    ImageContent,
    Param,
    Server,
    TextContent,
    ToolAnnotations,
    ToolError,
    ToolResult,
)
from mcpkit.testing import RPCError


class Point(BaseModel):
    x: int
    y: int


@dataclass
class Named:
    name: str


def make_server(page_size: int = 100) -> Server:
    app = Server("tools", "1", page_size=page_size)

    @app.tool(title="Add", annotations=ToolAnnotations(read_only_hint=True))
    async def add(a: int, b: int = 2) -> str:
        """Add two numbers."""
        return str(a + b)

    @app.tool()
    async def point(x: int, y: int) -> Point:
        """Make a point."""
        return Point(x=x, y=y)

    @app.tool()
    async def fail(kind: str) -> str:
        """Fail in the way asked."""
        if kind == "tool":
            raise ToolError("the file is locked; try again later")
        raise RuntimeError("secret internal detail")

    @app.tool()
    async def nothing() -> None:
        """Return nothing."""

    @app.tool()
    async def custom() -> ToolResult:
        """Return a full result."""
        return ToolResult(content=[TextContent(text="x")], is_error=True)

    return app


async def test_listing_derives_schema_description_and_annotations() -> None:
    async with connect(make_server()) as client:
        tools = {t["name"]: t for t in (await client.request("tools/list"))["tools"]}
    assert list(tools) == ["add", "point", "fail", "nothing", "custom"]
    assert tools["add"] == {
        "name": "add",
        "title": "Add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
            "required": ["a"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
    }
    assert tools["point"]["outputSchema"]["properties"] == {
        "x": {"type": "integer"},
        "y": {"type": "integer"},
    }


async def test_param_and_field_describe_and_bound_arguments() -> None:
    app = Server("params", "1")

    @app.tool()
    async def wait(
        seconds: Annotated[float, Param(description="How long", ge=0, le=60)] = 1,
        times: Annotated[int, Field(description="How often", ge=1)] = 1,
    ) -> str:
        """Wait."""
        return f"{seconds} x {times}"

    async with connect(app) as client:
        (tool,) = (await client.request("tools/list"))["tools"]
        result = await client.call_tool("wait", {"seconds": 61, "times": 0})
        assert await client.call_tool("wait", {"seconds": 2}) == {
            "content": [{"type": "text", "text": "2.0 x 1"}]
        }
    assert tool["inputSchema"]["properties"] == {
        "seconds": {
            "type": "number",
            "description": "How long",
            "minimum": 0,
            "maximum": 60,
            "default": 1,
        },
        "times": {"type": "integer", "description": "How often", "minimum": 1, "default": 1},
    }
    assert result["isError"] is True
    assert "seconds: Input should be less than or equal to 60" in result["content"][0]["text"]
    assert "times: Input should be greater than or equal to 1" in result["content"][0]["text"]


@dataclass
class Size:
    """A size in pixels."""

    width_px: int


class Side(BaseModel):
    """A side in pixels."""

    length_px: int


async def test_output_schemas_are_alike_for_dataclasses_and_models() -> None:
    app = Server("outputs", "1")

    @app.tool()
    async def size() -> Size:
        return Size(width_px=2)

    @app.tool()
    async def side() -> Side:
        return Side(length_px=2)

    async with connect(app) as client:
        tools = (await client.request("tools/list"))["tools"]
        assert (await client.call_tool("size"))["structuredContent"] == {"width_px": 2}
    schemas = {t["name"]: t["outputSchema"] for t in tools}
    # No titles derived from names, whatever the kind of class.
    assert schemas == {
        "size": {
            "type": "object",
            "description": "A size in pixels.",
            "properties": {"width_px": {"type": "integer"}},
            "required": ["width_px"],
        },
        "side": {
            "type": "object",
            "description": "A side in pixels.",
            "properties": {"length_px": {"type": "integer"}},
            "required": ["length_px"],
        },
    }


class Leaf(TypedDict):
    """A leaf."""

    label: str


class Node(TypedDict):
    """A node of a tree."""

    label: str
    children: list["Node"]


class Garden(TypedDict):
    leaves: list[Leaf]
    best: Annotated[Leaf | None, Param(description="the best leaf")]
    tree: Node


async def test_schemas_write_definitions_out_unless_they_lead_back_to_themselves() -> None:
    app = Server("inline", "1")

    @app.tool()
    async def garden(leaves: list[Leaf]) -> Garden:
        """Plant leaves."""
        return {"leaves": leaves, "best": None, "tree": {"label": "root", "children": []}}

    async with connect(app) as client:
        (tool,) = (await client.request("tools/list"))["tools"]
        result = await client.call_tool("garden", {"leaves": [{"label": "a"}]})
    leaf = {
        "type": "object",
        "description": "A leaf.",
        "properties": {"label": {"type": "string"}},
        "required": ["label"],
    }
    strict_leaf = {**leaf, "additionalProperties": False}  # arguments have no unknown keys
    assert tool["inputSchema"]["properties"]["leaves"] == {"type": "array", "items": strict_leaf}
    assert "$defs" not in tool["inputSchema"]
    output = tool["outputSchema"]
    assert output["properties"]["leaves"]["items"] == leaf
    best = output["properties"]["best"]
    assert (best["anyOf"], best["description"]) == ([leaf, {"type": "null"}], "the best leaf")
    # A tree's node refers to itself: it stays a definition, the only one.
    assert output["properties"]["tree"] == {"$ref": "#/$defs/Node"}
    assert list(output["$defs"]) == ["Node"]
    children = output["$defs"]["Node"]["properties"]["children"]
    assert children == {"type": "array", "items": {"$ref": "#/$defs/Node"}}
    jsonschema.validate(result["structuredContent"], output)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**result["structuredContent"], "tree": {"label": 1}}, output)


async def test_listing_is_shaped_for_old_versions() -> None:
    async with connect(make_server(), protocol_version="2024-11-05") as client:
        tools = {t["name"]: t for t in (await client.request("tools/list"))["tools"]}
    assert "title" not in tools["add"]
    assert "annotations" not in tools["add"]
    assert "outputSchema" not in tools["point"]


async def test_structured_output_with_text_mirror() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("point", {"x": 1, "y": 2})
    assert result["structuredContent"] == {"x": 1, "y": 2}
    assert result["content"] == [{"type": "text", "text": '{"x":1,"y":2}'}]
    assert "isError" not in result


async def test_structured_output_with_a_lone_surrogate_goes_out_as_replacement() -> None:
    # An undecodable file name reaches Python as a lone surrogate, which is not Unicode.
    app = Server("tools", "1")

    @app.tool()
    async def name() -> Named:
        """Return a name no codec decoded."""
        return Named(name="bad\udcff")

    async with connect(app) as client:
        result = await client.call_tool("name", {})
    assert result["structuredContent"] == {"name": "bad\ufffd"}
    assert result["content"] == [{"type": "text", "text": '{"name":"bad\ufffd"}'}]


class Item(TypedDict):
    name: str
    kind: Literal["a", "b"]
    children: NotRequired[list["Item"]]


class Shelf(TypedDict):
    items: list[Item]
    count: Annotated[int | None, Param(description="how many")]


class Stamped(TypedDict):
    at: datetime


async def test_typeddict_results_and_their_own_text() -> None:
    app = Server("tools", "1")

    @app.tool(text=lambda shelf: "\n".join(item["name"] for item in shelf["items"]))
    async def shelf() -> Shelf:
        """A TypedDict of JSON types: sent as it is, shown by its own text."""
        return {
            "items": [{"name": "x", "kind": "a", "children": [{"name": "y", "kind": "b"}]}],
            "count": 1,
        }

    @app.tool()
    async def stamped() -> Stamped:
        """A TypedDict with a value that is not JSON yet: pydantic makes it JSON."""
        return {"at": datetime(2026, 1, 2, tzinfo=UTC)}

    async with connect(app) as client:
        listed = {t["name"]: t for t in (await client.request("tools/list"))["tools"]}
        assert listed["shelf"]["outputSchema"]["properties"]["count"]["description"] == "how many"
        result = await client.call_tool("shelf", {})
        assert result["structuredContent"]["items"][0]["children"] == [{"name": "y", "kind": "b"}]
        assert result["content"] == [{"type": "text", "text": "x"}]
        result = await client.call_tool("stamped", {})
        assert result["structuredContent"] == {"at": "2026-01-02T00:00:00Z"}
        assert result["content"] == [{"type": "text", "text": '{"at":"2026-01-02T00:00:00Z"}'}]


class Grid(TypedDict):
    cells: list[tuple[int | None, ...]]


async def test_a_typeddict_of_tuples_is_sent_as_it_is() -> None:
    app = Server("tools", "1")

    @app.tool()
    async def grid() -> Grid:
        """Rows as tuples, as a database gives them: JSON arrays, no copy on the way out."""
        return {"cells": [(1, None), (2, 3)]}

    assert app.tools["grid"]._output_adapter is None  # no pydantic pass over the rows
    async with connect(app) as client:
        listed = (await client.request("tools/list"))["tools"][0]
        cells = listed["outputSchema"]["properties"]["cells"]
        assert cells["type"] == "array"
        assert cells["items"]["type"] == "array"
        result = await client.call_tool("grid", {})
    assert result["structuredContent"] == {"cells": [[1, None], [2, 3]]}


def test_a_text_rendering_needs_a_structured_result() -> None:
    app = Server("tools", "1")

    async def plain() -> str:
        """Say hi."""
        return "hi"

    with pytest.raises(TypeError, match="text rendering but no structured result"):
        app.tool(text=str)(plain)


async def test_structured_output_is_text_only_before_2025_06_18() -> None:
    async with connect(make_server(), protocol_version="2025-03-26") as client:
        result = await client.call_tool("point", {"x": 1, "y": 2})
    assert "structuredContent" not in result
    assert result["content"][0]["text"] == '{"x":1,"y":2}'


async def test_invalid_arguments_are_a_readable_tool_error() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("add", {"a": "many", "c": 1})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("Invalid arguments for tool add:")
    assert "a: Input should be a valid integer" in text
    assert "c: Extra inputs are not permitted" in text
    assert "https://" not in text


async def test_tool_error_reaches_the_model() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("fail", {"kind": "tool"})
    assert result == {
        "content": [{"type": "text", "text": "the file is locked; try again later"}],
        "isError": True,
    }


async def test_unexpected_exception_hides_details_from_the_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpkit.tools"):
        async with connect(make_server()) as client:
            result = await client.call_tool("fail", {"kind": "bug"})
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Tool fail failed with an internal error"
    assert "secret internal detail" in caplog.text  # the operator sees the traceback


async def test_unknown_tool_is_invalid_params() -> None:
    async with connect(make_server()) as client:
        with pytest.raises(RPCError) as refused:
            await client.call_tool("missing")
        assert refused.value.code == -32602
        assert refused.value.message == "Unknown tool: missing"
        with pytest.raises(RPCError) as bad:
            await client.request("tools/call", {"name": "add", "arguments": [1]})
        assert bad.value.code == -32602


async def test_none_and_full_results() -> None:
    async with connect(make_server()) as client:
        assert await client.call_tool("nothing") == {"content": []}
        assert await client.call_tool("custom") == {
            "content": [{"type": "text", "text": "x"}],
            "isError": True,
        }


async def test_pagination_and_invalid_cursor() -> None:
    async with connect(make_server(page_size=2)) as client:
        names: list[str] = []
        cursor = None
        for _ in range(10):
            page = await client.request("tools/list", {"cursor": cursor} if cursor else {})
            names += [t["name"] for t in page["tools"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert names == ["add", "point", "fail", "nothing", "custom"]
        # Digits int() does not read (a superscript two, thousands of them) were -32603.
        forged = [f"tools:{offset}".encode() for offset in ("\u00b2", "1" * 5000, "\u0661")]
        encoded = [base64.urlsafe_b64encode(cursor).decode() for cursor in forged]
        for bad in ("garbage!", "dG9vbHM6eA==", 5, *encoded):
            with pytest.raises(RPCError) as refused:
                await client.request("tools/list", {"cursor": bad})
            assert refused.value.code == -32602
        prompts_cursor = "cHJvbXB0czoy"  # a cursor of another list
        with pytest.raises(RPCError):
            await client.request("tools/list", {"cursor": prompts_cursor})


async def test_adding_and_removing_tools_notifies_clients() -> None:
    app = make_server()
    async with connect(app) as client:

        @app.tool()
        async def extra() -> str:
            """Appear at run time."""
            return "extra"

        await client.wait_for_notification("notifications/tools/list_changed")
        assert await client.call_tool("extra") == {"content": [{"type": "text", "text": "extra"}]}
        app.remove_tool("extra")
        assert await client.request("ping") == {}  # the notification was sent before the answer
        changes = [
            n for n in client.notifications if n["method"] == "notifications/tools/list_changed"
        ]
        assert len(changes) == 2
        with pytest.raises(RPCError):
            await client.call_tool("extra")


def test_registration_refuses_what_cannot_work() -> None:
    app = Server("bad", "1")
    with pytest.raises(TypeError, match="async"):
        app.tool()(lambda: "x")  # pyright: ignore[reportArgumentType]

    async def untyped(x) -> str:  # type: ignore[no-untyped-def]
        return str(x)  # pyright: ignore[reportUnknownArgumentType]

    with pytest.raises(TypeError, match="annotation"):
        app.tool()(untyped)  # pyright: ignore[reportUnknownArgumentType]

    async def returns_int() -> int:
        return 1

    with pytest.raises(TypeError, match="returns"):
        app.tool()(returns_int)

    async def returns_strings() -> list[str]:  # no wire form: content blocks, or a model
        return ["a"]

    with pytest.raises(TypeError, match="returns"):
        app.tool()(returns_strings)

    async def returns_blocks() -> list[TextContent | ImageContent]:
        return []

    app.tool()(returns_blocks)
    assert list(app.tools) == ["returns_blocks"]
