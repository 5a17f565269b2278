"""Errors at one edge: a server's own exception types become protocol errors where they land."""

import anyio
import pytest

from checked import connect
from mcpkit import Changed, Server
from mcpkit.testing import RPCError


class ShelfError(Exception):
    """A server's own error, free of mcpkit: declared once with Server(errors=...)."""


async def test_a_servers_own_errors_are_turned_into_protocol_errors_at_one_edge() -> None:
    app = Server("shelf", "1", errors=(ShelfError,))

    @app.tool()
    async def take(name: str) -> str:
        """Take a book."""
        raise ShelfError(f"No book {name}: list the shelf first")

    @app.resource("shelf://{name}")
    async def book(name: str) -> str:
        raise ShelfError(f"No book {name}")

    @app.prompt()
    async def summarise(name: str) -> str:
        """Summarise a book."""
        raise ShelfError(f"No book {name} to summarise")

    @app.complete(prompt="summarise", argument="name")
    async def names(value: str) -> list[str]:
        raise ShelfError("The shelf cannot be listed")

    async def admit(name: str) -> None:
        raise ShelfError(f"{name} is not yours")

    @app.watch("shelf://{name}", admit=admit)
    async def watch(name: str, changed: Changed) -> None:
        await anyio.sleep_forever()

    @app.tool()
    async def broken() -> str:
        """Fail with a bug: not one of the declared errors."""
        raise KeyError("internal detail")

    async with connect(app) as client:
        took = await client.call_tool("take", {"name": "Emma"})
        failed = await client.call_tool("broken")
        with pytest.raises(RPCError) as read:
            await client.request("resources/read", {"uri": "shelf://Emma"})
        with pytest.raises(RPCError) as got:
            await client.request("prompts/get", {"name": "summarise", "arguments": {"name": "E"}})
        ref = {"type": "ref/prompt", "name": "summarise"}
        argument = {"name": "name", "value": "E"}
        with pytest.raises(RPCError) as completed:
            await client.request("completion/complete", {"ref": ref, "argument": argument})
        with pytest.raises(RPCError) as subscribed:
            await client.request("resources/subscribe", {"uri": "shelf://Emma"})
    assert took == {
        "content": [{"type": "text", "text": "No book Emma: list the shelf first"}],
        "isError": True,
    }
    assert failed["isError"] is True
    assert "internal detail" not in failed["content"][0]["text"]
    assert (read.value.code, read.value.message) == (-32002, "No book Emma")
    assert (got.value.code, got.value.message) == (-32602, "No book E to summarise")
    assert (completed.value.code, completed.value.message) == (-32602, "The shelf cannot be listed")
    assert (subscribed.value.code, subscribed.value.message) == (-32002, "Emma is not yours")
