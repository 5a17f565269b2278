"""A client for testing servers in-process: `async with connect(app) as client`.

The client talks to the server over an in-memory transport, through the same encoder and
connection code as stdio. It records every message the server sends, answers the server's
requests (roots, sampling, elicitation) with the handlers it is given (a `ProtocolError`
one raises is its error response), and declares the client capabilities that those
handlers imply.
"""

import itertools
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from . import jsonrpc
from .connection import Connection
from .errors import ProtocolError
from .jsonrpc import JSON, RequestId
from .runtime import Runtime
from .server import Server
from .transports.memory import MemoryTransport, memory_pair
from .versions import LATEST_HANDSHAKE_VERSION

ServerRequestHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class RPCError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code: int = error.get("code", 0)
        self.message: str = error.get("message", "")
        self.data: Any = error.get("data")


class Client:
    """A JSON-RPC client bound to one in-memory connection."""

    def __init__(
        self,
        transport: MemoryTransport,
        handlers: Mapping[str, ServerRequestHandler],
        task_group: anyio.abc.TaskGroup,
    ) -> None:
        self._transport = transport
        self._handlers = dict(handlers)
        self._task_group = task_group
        self._ids = itertools.count(1)
        self._waiting: dict[RequestId, anyio.Event] = {}
        self._responses: dict[RequestId, JSON] = {}
        self._arrived = anyio.Event()
        self.messages: list[Any] = []
        """Every message the server sent, in order (batches as lists)."""
        self.sent: list[Any] = []
        """Every message this client sent, in order (raw frames as bytes)."""
        self.initialize_result: JSON = {}

    @property
    def notifications(self) -> list[JSON]:
        """The notifications the server sent, in order."""
        return [m for m in self.messages if isinstance(m, dict) and "method" in m and "id" not in m]

    async def request(self, method: str, params: JSON | None = None) -> JSON:
        """Send a request and return its result.

        Raises:
            RPCError: the server answered with an error.
        """
        request_id = next(self._ids)
        response = await self.request_raw(jsonrpc.request(request_id, method, params))
        if "error" in response:
            raise RPCError(response["error"])
        return response["result"]

    async def request_raw(self, message: JSON) -> JSON:
        """Send a request message as given and return the whole response message."""
        done = self._waiting[message["id"]] = anyio.Event()
        self.send(message)
        await done.wait()
        return self._responses.pop(message["id"])

    async def notify(self, method: str, params: JSON | None = None) -> None:
        """Send a notification."""
        self.send(jsonrpc.notification(method, params))

    def send(self, message: Any) -> None:
        """Send any JSON value as one frame."""
        self.sent.append(message)
        self._transport.send_nowait(jsonrpc.encode(message))

    def send_frame(self, frame: bytes) -> None:
        """Send raw bytes as one frame (to test how the server copes with bad input)."""
        self.sent.append(frame)
        self._transport.send_nowait(frame)

    async def wait_for(self, predicate: Callable[[Any], bool], timeout: float = 5.0) -> Any:
        """Return the first message (already received or to come) that matches `predicate`.

        Raises:
            TimeoutError: none arrives within `timeout` seconds.
        """
        with anyio.fail_after(timeout):
            seen = 0
            while True:
                for message in self.messages[seen:]:
                    if predicate(message):
                        return message
                seen = len(self.messages)
                self._arrived = anyio.Event()
                await self._arrived.wait()

    async def wait_for_notification(self, method: str, timeout: float = 5.0) -> JSON:
        """Return the first notification `method` (received or to come)."""

        def is_wanted(message: Any) -> bool:
            found = jsonrpc.as_object(message)
            return found is not None and found.get("method") == method and "id" not in found

        return await self.wait_for(is_wanted, timeout)

    async def call_tool(
        self, name: str, arguments: JSON | None = None, *, progress_token: str | int | None = None
    ) -> JSON:
        """Call a tool and return its result (an `isError` result is returned, not raised)."""
        params: JSON = {"name": name, "arguments": arguments or {}}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        return await self.request("tools/call", params)

    async def receive_loop(self) -> None:
        """Read the server's messages until it goes away."""
        async for frame in self._transport.frames():
            message = jsonrpc.decode(frame) if isinstance(frame, bytes) else None
            self.messages.append(message)
            self._arrived.set()
            for item in message if isinstance(message, list) else [message]:  # pyright: ignore[reportUnknownVariableType]
                await self._route(item)

    async def _route(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if "method" in message and "id" in message:
            await self._answer(message)  # pyright: ignore[reportUnknownArgumentType]
        elif "method" not in message and message.get("id") in self._waiting:  # pyright: ignore[reportUnknownMemberType]
            self._responses[message["id"]] = message  # pyright: ignore[reportUnknownArgumentType]
            self._waiting.pop(message["id"]).set()  # pyright: ignore[reportUnknownArgumentType]

    async def _answer(self, request: JSON) -> None:
        handler = self._handlers.get(request["method"])
        if handler is None:
            error = {"code": -32601, "message": f"Method not found: {request['method']}"}
            self.send(jsonrpc.error(request["id"], error))
            return

        async def answer() -> None:
            try:
                result = await handler(request.get("params") or {})
            except ProtocolError as exc:  # the handler answers with an error
                self.send(jsonrpc.error(request["id"], exc.to_wire()))
                return
            self.send(jsonrpc.result(request["id"], result))

        self._task_group.start_soon(answer)


def _capabilities(handlers: Mapping[str, ServerRequestHandler]) -> JSON:
    capabilities: JSON = {}
    if "roots/list" in handlers:
        capabilities["roots"] = {"listChanged": True}
    if "sampling/createMessage" in handlers:
        capabilities["sampling"] = {}
    if "elicitation/create" in handlers:
        capabilities["elicitation"] = {"form": {}, "url": {}}
    return capabilities


@asynccontextmanager
async def connect(
    server: Server,
    *,
    protocol_version: str = LATEST_HANDSHAKE_VERSION,
    handlers: Mapping[str, ServerRequestHandler] | None = None,
    capabilities: JSON | None = None,
    initialize: bool = True,
) -> AsyncGenerator[Client]:
    """Run `server` in-process and yield a client connected to it, initialized by default.

    `handlers` answer the server's requests by method (`roots/list`,
    `sampling/createMessage`, `elicitation/create`); the client capabilities follow from
    them unless `capabilities` is given.
    """
    client_end, server_end = memory_pair()
    handlers = handlers or {}
    try:
        async with Runtime(server) as runtime, anyio.create_task_group() as task_group:
            client = Client(client_end, handlers, task_group)
            task_group.start_soon(Connection(runtime, server_end).run)
            task_group.start_soon(client.receive_loop)
            if initialize:
                client.initialize_result = await client.request(
                    "initialize",
                    {
                        "protocolVersion": protocol_version,
                        "capabilities": _capabilities(handlers)
                        if capabilities is None
                        else capabilities,
                        "clientInfo": {"name": "mcpkit-testing", "version": "0"},
                    },
                )
                await client.notify("notifications/initialized")
            try:
                yield client
            finally:
                task_group.cancel_scope.cancel()
    finally:
        await client_end.aclose()
        await server_end.aclose()
