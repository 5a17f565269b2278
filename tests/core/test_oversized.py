"""A message over the size limit is refused with its id, so the client is not left waiting.

The server reads here as it reads stdio: lines, a few bytes at a time, through the same
`Framer`, with a small limit in place of stdio's 64 MiB (tests/e2e/test_stdio_raw.py sends
that much to a real process).
"""

import math
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from checked import validate_exchange
from mcpkit import Server
from mcpkit.connection import Connection
from mcpkit.runtime import Runtime
from mcpkit.testing import Client
from mcpkit.transports import FrameTooLarge
from mcpkit.transports.framing import Framer
from mcpkit.transports.memory import MemoryTransport

LIMIT = 4096
READ = 512  # bytes per read, as stdio reads a pipe-full at a time


class SmallReads(MemoryTransport):
    """The server's end: each client frame arrives as a line, read in pieces and framed."""

    async def frames(self) -> AsyncIterator[bytes | FrameTooLarge]:
        """Yield the frames a stdio server would see, oversized ones as FrameTooLarge."""
        framer = Framer(LIMIT)
        async for frame in super().frames():
            assert isinstance(frame, bytes)  # what the client sent, never refused yet
            line = frame + b"\n"
            for start in range(0, len(line), READ):
                for item in framer.feed(line[start : start + READ]):
                    yield item


def make_server() -> Server:
    app = Server("oversized", "1")

    @app.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    return app


@asynccontextmanager
async def connect(version: str) -> AsyncGenerator[Client]:
    """Run the server over SmallReads, initialized at `version`; validate all it sent."""
    to_server_send, to_server_receive = anyio.create_memory_object_stream[bytes](math.inf)
    to_client_send, to_client_receive = anyio.create_memory_object_stream[bytes](math.inf)
    client_end = MemoryTransport(to_server_send, to_client_receive)
    server_end = SmallReads(to_client_send, to_server_receive)
    try:
        async with Runtime(make_server()) as runtime, anyio.create_task_group() as task_group:
            client = Client(client_end, {}, task_group)
            task_group.start_soon(Connection(runtime, server_end).run)
            task_group.start_soon(client.receive_loop)
            info = {"name": "oversized-test", "version": "0"}
            client.initialize_result = await client.request(
                "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
            )
            await client.notify("notifications/initialized")
            yield client
            validate_exchange(client)
            task_group.cancel_scope.cancel()
    finally:
        await client_end.aclose()
        await server_end.aclose()


def call(request_id: object, text: str, *, id_first: bool = True) -> dict[str, Any]:
    """A tools/call of echo; its id first (as most clients write it) or after the params."""
    params = {"name": "echo", "arguments": {"text": text}}
    if id_first:
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return {"jsonrpc": "2.0", "method": "tools/call", "params": params, "id": request_id}


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
@pytest.mark.parametrize("request_id", [7, "call-7"])
async def test_an_oversized_request_is_refused_with_its_id(
    version: str, request_id: str | int
) -> None:
    async with connect(version) as client:
        with anyio.fail_after(5):  # the client gets its answer: it does not wait for ever
            answer = await client.request_raw(call(request_id, "a" * LIMIT))
        assert answer["id"] == request_id
        assert answer["error"]["code"] == -32600
        assert f"larger than {LIMIT} bytes" in answer["error"]["message"]
        small = await client.request_raw(call(8, "still here"))
        assert small["result"]["content"] == [{"type": "text", "text": "still here"}]


@pytest.mark.parametrize(("version", "null_id"), [("2025-06-18", True), ("2025-11-25", False)])
async def test_an_oversized_message_without_a_visible_id_gets_null_where_an_id_is_required(
    version: str, null_id: bool
) -> None:
    async with connect(version) as client:
        # Its id comes after params that exceed the limit: the refused start does not show it.
        client.send(call(9, "a" * 2 * LIMIT, id_first=False))
        answer = await client.wait_for(lambda m: isinstance(m, dict) and "error" in m)
        assert answer["error"]["code"] == -32600
        if null_id:
            assert answer["id"] is None
        else:
            assert "id" not in answer
        assert (await client.request("ping")) == {}
