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
