"""An MCP-over-HTTP test client speaking raw HTTP, and an in-process server to aim it at.

The official SDK client hides the transport; these tests need to see it: status codes,
headers, how each message travels (JSON body or SSE event), event ids. Every JSON-RPC
message the server sends is validated against the official schema of the session's version.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
import httpx
import uvicorn

from mcpkit.http import HttpApp, HttpConfig
from mcpkit.http.serve import uvicorn_config
from mcpkit.server import Server
from mcpkit_everything.server import build_server
from wire_schema import validate_server_message

JSON = dict[str, Any]
ACCEPT_BOTH = "application/json, text/event-stream"
LATEST = "2025-11-25"


@dataclass
class SseEvent:
    """One server-sent event."""

    data: str
    id: str | None = None
    event: str | None = None
    retry: int | None = None


def parse_sse(text: str) -> list[SseEvent]:
    """Parse a complete SSE body into its events."""
    events: list[SseEvent] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        event = SseEvent(data="")
        data: list[str] = []
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
            elif name == "id":
                event.id = value
            elif name == "event":
                event.event = value
            elif name == "retry":
                event.retry = int(value)
        event.data = "\n".join(data)
        events.append(event)
    return events


async def read_lines_until(lines: AsyncIterator[str], prefix: str) -> list[str]:
    """Read a stream's lines up to the first that starts with `prefix` (within 5 s).

    Raises:
        AssertionError: the stream ended first.
    """
    seen: list[str] = []
    with anyio.fail_after(5):
        async for line in lines:
            seen.append(line)
            if line.startswith(prefix):
                return seen
    raise AssertionError(f"the stream ended before a line starting {prefix!r}: {seen}")


@dataclass
class Served:
    """A running in-process server and the HTTP client that talks to it."""

    app: HttpApp
    base: str
    http: httpx.AsyncClient
    connections: set[Any]
    """The connections uvicorn has open (its protocol objects)."""
    version: str = LATEST
    requests: dict[Any, str] = field(default_factory=dict[Any, str])
    """The method of every request sent, by id, to validate the results that answer them."""

    @property
    def url(self) -> str:
        """The Streamable HTTP endpoint."""
        return f"{self.base}/mcp"

    def headers(self, session: str | None = None, **extra: str) -> dict[str, str]:
        """The headers of a well-formed POST, for `session` if given."""
        headers = {"content-type": "application/json", "accept": ACCEPT_BOTH}
        if session is not None:
            headers["mcp-session-id"] = session
            headers["mcp-protocol-version"] = self.version
        headers.update({name.replace("_", "-"): value for name, value in extra.items()})
        return headers

    async def post(
        self, payload: Any, session: str | None = None, **headers: str
    ) -> httpx.Response:
        """POST `payload` (a message, a batch, or raw bytes) to /mcp."""
        messages = cast(list[Any], payload) if isinstance(payload, list) else [payload]
        for message in messages:
            if isinstance(message, dict) and "method" in message and "id" in message:
                self.requests[message["id"]] = message["method"]
        content = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        return await self.http.post(
            self.url, content=content, headers=self.headers(session, **headers)
        )

    async def initialize(self, version: str = LATEST, capabilities: JSON | None = None) -> str:
        """Open a session at `version`; return its id."""
        self.version = version
        response = await self.post(
            request(
                0,
                "initialize",
                {
                    "protocolVersion": version,
                    "capabilities": capabilities or {},
                    "clientInfo": {"name": "mcpkit-http-tests", "version": "0"},
                },
            )
        )
        assert response.status_code == 200, response.text
        session = response.headers["mcp-session-id"]
        self.messages(response)
        initialized = await self.post(notification("notifications/initialized"), session)
        assert initialized.status_code == 202
        return session

    def messages(self, response: httpx.Response) -> list[JSON]:
        """Return the JSON-RPC messages of a JSON or SSE response, each schema-validated."""
        kind = response.headers.get("content-type", "")
        if kind.startswith("application/json"):
            payload: Any = response.json()
            messages = cast(list[JSON], payload) if isinstance(payload, list) else [payload]
        else:
            assert kind.startswith("text/event-stream"), kind
            messages = [json.loads(event.data) for event in parse_sse(response.text) if event.data]
        for message in messages:
            self.validate(message)
        return messages

    def validate(self, message: JSON) -> None:
        """Check one server message against the schema of the session's version."""
        method = self.requests.get(message.get("id")) if "method" not in message else None
        validate_server_message(self.version, message, method)


def request(request_id: int | str, method: str, params: JSON | None = None) -> JSON:
    """A JSON-RPC request."""
    message: JSON = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: JSON | None = None) -> JSON:
    """A JSON-RPC notification."""
    message: JSON = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(request_id: int, tool: str, arguments: JSON | None = None, **meta: Any) -> JSON:
    """A tools/call request, with `_meta` if given."""
    params: JSON = {"name": tool, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return request(request_id, "tools/call", params)


@asynccontextmanager
async def serving(
    tmp_path: Path,
    make_server: Callable[[Path], Server] = lambda tmp: build_server(tmp / "watched.txt"),
    **settings: Any,
) -> AsyncGenerator[Served]:
    """Run mcp-everything's HTTP app under uvicorn on a free loopback port while in the block."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        app = HttpApp(make_server(tmp_path), HttpConfig(port=port, **settings))
        config = uvicorn_config(app, "127.0.0.1", port, "warning")  # as mcp-* --transport http
        config.timeout_graceful_shutdown = 1
        server = uvicorn.Server(config)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.serve, [listener])
            with anyio.fail_after(5):
                while not server.started:  # noqa: ASYNC110 - uvicorn offers no event to await
                    await anyio.sleep(0.01)
            async with httpx.AsyncClient(timeout=10) as http:
                connections = server.server_state.connections
                yield Served(app, f"http://127.0.0.1:{port}", http, connections)
            server.should_exit = True
