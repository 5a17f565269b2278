"""`connect` for tests: the in-memory client, plus a check of everything the server sent.

When the test's `async with` block ends normally, every message the server sent is validated
against the official schema of the negotiated protocol version (see `wire_schema`).
"""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from mcpkit import Server, testing
from mcpkit.jsonrpc import as_list, as_object
from mcpkit.testing import Client
from wire_schema import validate_server_message


def validate_exchange(client: Client) -> int:
    """Validate every message the server sent to `client`; return how many were checked."""
    version = client.initialize_result.get("protocolVersion", "2025-11-25")
    methods: dict[Any, str] = {}
    for message in _messages(client.sent):
        if "method" in message and "id" in message:
            methods[message["id"]] = message["method"]
    received = _messages(client.messages)
    for message in received:
        validate_server_message(version, message, methods.get(message.get("id")))
    return len(received)


def _messages(frames: list[Any]) -> list[dict[str, Any]]:
    """Return the JSON-RPC messages in `frames`, batches unpacked, raw bytes left out."""
    messages: list[dict[str, Any]] = []
    for frame in frames:
        for item in as_list(frame) or [frame]:
            message = as_object(item)
            if message is not None:
                messages.append(message)
    return messages


@asynccontextmanager
async def connect(server: Server, **options: Any) -> AsyncGenerator[Client]:
    """Connect like `mcpkit.testing.connect`, and validate the server's messages at the end."""
    async with testing.connect(server, **options) as client:
        yield client
    validate_exchange(client)
