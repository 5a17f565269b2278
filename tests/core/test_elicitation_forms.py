"""An elicitation form reaches each client holding only what its protocol version defines."""

from typing import Any

import pytest

from checked import connect
from mcpkit import Context, Server

MODERN = "2026-07-28"

FORM: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "Ada", "pattern": "^[A-Z]"},
        "age": {"type": "integer", "minimum": 0, "default": 36},
        "team": {"type": "string", "enum": ["core", "docs"], "default": "core"},
        "sure": {"type": "boolean", "default": True},
    },
    "required": ["name"],
    "additionalProperties": False,
}
"""What a handler asks: defaults on every field, plus keywords no form version defines."""

AS_2025_11_25: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "Ada"},
        "age": {"type": "integer", "minimum": 0, "default": 36},
        "team": {"type": "string", "enum": ["core", "docs"], "default": "core"},
        "sure": {"type": "boolean", "default": True},
    },
    "required": ["name"],
}
"""FORM as 2025-11-25 and 2026-07-28 define forms: no `pattern`, no `additionalProperties`."""

AS_2025_06_18: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "age": {"type": "integer", "minimum": 0},
        "team": {"type": "string", "enum": ["core", "docs"]},
        "sure": {"type": "boolean", "default": True},  # booleans had a default already
    },
    "required": ["name"],
}
"""FORM as 2025-06-18 defines forms: also no `$schema` and no default but a boolean's."""


def make_server() -> Server:
    app = Server("forms", "1")

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Ask the user to fill in FORM."""
        answer = await ctx.elicit("Who are you?", FORM)
        return f"{answer.action} {answer.content}"

    return app


@pytest.mark.parametrize(
    ("version", "expected"), [("2025-06-18", AS_2025_06_18), ("2025-11-25", AS_2025_11_25)]
)
async def test_a_session_gets_the_form_its_version_defines(
    version: str, expected: dict[str, Any]
) -> None:
    seen: list[dict[str, Any]] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": "accept", "content": {"name": "Bo"}}

    handlers = {"elicitation/create": elicit}
    async with connect(make_server(), protocol_version=version, handlers=handlers) as client:
        result = await client.call_tool("ask")
    assert result["content"][0]["text"] == "accept {'name': 'Bo'}"
    (params,) = seen
    assert params["requestedSchema"] == expected
    assert FORM["properties"]["name"]["default"] == "Ada"  # the handler's form is not changed


async def test_an_input_required_result_carries_the_form_its_version_defines() -> None:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }
    call: dict[str, Any] = {"name": "ask", "arguments": {}, "_meta": meta}
    async with connect(make_server(), initialize=False, wire_version=MODERN) as client:
        result = await client.request("tools/call", call)
    assert result["resultType"] == "input_required"
    (question,) = result["inputRequests"].values()
    assert question["method"] == "elicitation/create"
    assert question["params"]["requestedSchema"] == AS_2025_11_25


MULTI: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tags": {
            "type": "array",
            "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]},
            "maxItems": 2,
        },
        "level": {"type": "number", "maximum": 1.5},
        "note": {"type": "string", "maxLength": 3},
    },
}


@pytest.mark.parametrize(
    ("form", "content", "problem"),
    [
        (FORM, {"name": "Bo", "sure": "no"}, "'sure' must be of type boolean"),  # was taken as yes
        (FORM, {"name": "Bo", "age": True}, "'age' must be of type integer"),
        (FORM, {"name": "Bo", "age": 2.5}, "'age' must be of type integer"),
        (FORM, {"name": "Bo", "age": -1}, "'age' must be at least 0"),
        (FORM, {"name": "Bo", "team": "ops"}, "'team' must be one of ['core', 'docs']"),
        (FORM, {"name": ["Bo"]}, "'name' must be of type string"),
        (FORM, {"name": "Bo", "admin": True}, "'admin' is not a field of the form"),
        (FORM, {"age": 3}, "'name' is required"),
        (MULTI, {"tags": ["a", "c"]}, "'tags' must hold only ['a', 'b']"),
        (MULTI, {"tags": ["a", "b", "a"]}, "'tags' must be at most 2 items"),
        (MULTI, {"tags": "a"}, "'tags' must be a list of strings"),
        (MULTI, {"level": 2}, "'level' must be at most 1.5"),
        (MULTI, {"note": "long"}, "'note' must be at most 3 characters"),
    ],
)
async def test_an_accepted_answer_must_fit_the_form(
    form: dict[str, Any], content: dict[str, Any], problem: str
) -> None:
    app = Server("forms", "1")

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Ask the user to fill in the form."""
        answer = await ctx.elicit("Fill this in", form)
        return f"{answer.action} {answer.content}"

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": content}

    handlers = {"elicitation/create": elicit}
    async with connect(app, protocol_version="2025-11-25", handlers=handlers) as client:
        result = await client.call_tool("ask")
    assert result["isError"] is True
    assert f"does not fit the form: {problem}" in result["content"][0]["text"]


async def test_an_answer_that_fits_leaves_optional_fields_out_or_empty() -> None:
    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Bo", "age": 3, "team": None}}

    handlers = {"elicitation/create": elicit}
    async with connect(make_server(), protocol_version="2025-11-25", handlers=handlers) as client:
        result = await client.call_tool("ask")
    assert result["content"][0]["text"] == "accept {'name': 'Bo', 'age': 3, 'team': None}"
