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
from wire_schema import ALL_VERSIONS, validate_server_message

_MODERN_KEY = "io.modelcontextprotocol/protocolVersion"
"""A request naming its version here is answered in that version, whatever the session's."""


def validate_exchange(client: Client, version: str | None = None) -> int:
    """Validate every message the server sent to `client`; return how many were checked.

    The version is the negotiated one unless given (2026-07-28 requests have no handshake).
    """
    negotiated: str = version or client.initialize_result.get("protocolVersion", "2025-11-25")
    methods: dict[Any, str] = {}
    versions: dict[Any, str] = {}
    for message in _messages(client.sent):
        if "method" in message and "id" in message:
            methods[message["id"]] = message["method"]
            meta = (as_object(message.get("params")) or {}).get("_meta")
            requested = (as_object(meta) or {}).get(_MODERN_KEY, negotiated)
            # A version we do not speak is refused in the latest one's terms.
            versions[message["id"]] = requested if requested in ALL_VERSIONS else "2026-07-28"
    received = _messages(client.messages)
    for message in received:
        answered = message.get("id")
        validate_server_message(versions.get(answered, negotiated), message, methods.get(answered))
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
async def connect(
    server: Server, *, wire_version: str | None = None, **options: Any
) -> AsyncGenerator[Client]:
    """Connect like `mcpkit.testing.connect`; validate the server's messages at the end.

    `wire_version` is the schema to validate against when no handshake names it.
    """
    async with testing.connect(server, **options) as client:
        yield client
    validate_exchange(client, wire_version)


async def stateless(
    client: Client, method: str, params: dict[str, Any], capabilities: dict[str, Any]
) -> dict[str, Any]:
    """Send a 2026-07-28 request (its `_meta` says all) and return its result.

    Raises:
        RPCError: the server answered with an error.
    """
    meta = {
        _MODERN_KEY: "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "checked", "version": "0"},
    }
    return await client.request(method, {**params, "_meta": meta})
