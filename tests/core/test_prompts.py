"""Prompts and completions."""

from collections.abc import Mapping
from typing import Annotated

import pytest
from pydantic import Field

from checked import connect
from mcpkit import Completion, Context, Message, Param, Server, TextContent
from mcpkit.testing import RPCError


def make_server() -> Server:
    app = Server("prompts", "1")

    @app.prompt(title="Review")
    async def review(
        path: Annotated[str, Field(description="File to review")],
        focus: Annotated[str, Param(description="What to look for")] = "correctness",
    ) -> str:
        """Review a file."""
        return f"Review {path} for {focus}."

    @app.prompt()
    async def dialogue() -> list[Message]:
        """Two turns."""
        return [
            Message(role="user", content=TextContent(text="Hi")),
            Message(role="assistant", content=TextContent(text="Hello")),
        ]

    @app.resource("mem://files/{name}")
    async def file(name: str) -> str:
        return name

    @app.complete(prompt="review", argument="focus")
    async def focuses(ctx: Context, value: str, arguments: Mapping[str, str]) -> list[str]:
        options = ["correctness", "clarity", "security", f"path:{arguments.get('path', '')}"]
        return [option for option in options if option.startswith(value)]

    @app.complete(resource="mem://files/{name}", argument="name")
    async def names(ctx: Context, value: str, arguments: Mapping[str, str]) -> list[str]:
        return [f"{value}{n}" for n in range(250)]

    return app


async def test_listing_derives_arguments() -> None:
    async with connect(make_server()) as client:
        prompts = (await client.request("prompts/list"))["prompts"]
    assert prompts[0] == {
        "name": "review",
        "title": "Review",
        "description": "Review a file.",
        "arguments": [
            {"name": "path", "description": "File to review", "required": True},
            {"name": "focus", "description": "What to look for", "required": False},
        ],
    }


async def test_get_renders_messages() -> None:
    async with connect(make_server()) as client:
        result = await client.request(
            "prompts/get", {"name": "review", "arguments": {"path": "a.py"}}
        )
        assert result == {
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": "Review a.py for correctness."},
                }
            ],
            "description": "Review a file.",
        }
        result = await client.request("prompts/get", {"name": "dialogue"})
        assert [m["role"] for m in result["messages"]] == ["user", "assistant"]


@pytest.mark.parametrize(
    "params",
    [
        {"name": "nope"},
        {"name": "review"},
        {"name": "review", "arguments": {"path": "a", "extra": "x"}},
        {"name": "review", "arguments": {"path": 5}},
        {"name": "review", "arguments": "path=a"},
    ],
)
async def test_bad_prompt_requests_are_invalid_params(params: dict[str, object]) -> None:
    async with connect(make_server()) as client:
        with pytest.raises(RPCError) as refused:
            await client.request("prompts/get", params)
        assert refused.value.code == -32602


async def test_completion_of_a_prompt_argument_with_context() -> None:
    async with connect(make_server()) as client:
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "review"},
                "argument": {"name": "focus", "value": "c"},
            },
        )
        assert result == {
            "completion": {"values": ["correctness", "clarity"], "total": 2, "hasMore": False}
        }
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "review"},
                "argument": {"name": "focus", "value": "path"},
                "context": {"arguments": {"path": "a.py"}},
            },
        )
        assert result["completion"]["values"] == ["path:a.py"]


async def test_completion_is_capped_at_100() -> None:
    async with connect(make_server()) as client:
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "mem://files/{name}"},
                "argument": {"name": "name", "value": "x"},
            },
        )
    completion = result["completion"]
    assert len(completion["values"]) == 100
    assert completion["total"] == 250
    assert completion["hasMore"] is True


async def test_a_completer_may_say_how_many_it_found_beyond_those_it_returns() -> None:
    app = Server("counted", "1")

    @app.prompt()
    async def pick(name: str) -> str:
        return name

    @app.complete(prompt="pick", argument="name")
    async def complete_name(value: str) -> Completion:
        return Completion([f"{value}{n}" for n in range(3)], 1_000_000)

    async with connect(app) as client:
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "pick"},
                "argument": {"name": "name", "value": "x"},
            },
        )
    assert result["completion"] == {
        "values": ["x0", "x1", "x2"],
        "total": 1_000_000,
        "hasMore": True,
    }


async def test_completion_of_an_argument_without_completer_is_empty() -> None:
    async with connect(make_server()) as client:
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "review"},
                "argument": {"name": "path", "value": ""},
            },
        )
        assert result["completion"] == {"values": [], "total": 0, "hasMore": False}
        for ref in (
            {"type": "ref/prompt", "name": "nope"},
            {"type": "ref/resource", "uri": "x://"},
        ):
            unknown = await client.request(
                "completion/complete", {"ref": ref, "argument": {"name": "a", "value": ""}}
            )
            assert unknown["completion"] == {"values": [], "total": 0, "hasMore": False}
        with pytest.raises(RPCError) as refused:
            await client.request(
                "completion/complete",
                {"ref": {"type": "x"}, "argument": {"name": "a", "value": ""}},
            )
        assert refused.value.code == -32602
