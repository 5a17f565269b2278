"""The little of ASGI this package needs: requests, bodies, responses and SSE framing.

Written against the ASGI 3 specification directly, so the app runs under any ASGI server
(uvicorn, hypercorn, ...) and mounts inside any ASGI framework.
"""

import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

Scope = MutableMapping[str, Any]
Event = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Event]]
Send = Callable[[Event], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"
SSE_HEADERS = (
    ("content-type", SSE_TYPE),
    ("cache-control", "no-cache, no-transform"),
    ("x-accel-buffering", "no"),  # proxies must pass events on at once
)
"""The headers of every SSE response."""

KEEPALIVE_COMMENT = b": keep-alive\n\n"
"""An SSE comment: clients skip it, and its blank line dispatches no event (no data)."""

_Item = TypeVar("_Item")


class ClientGone(Exception):
    """The client disconnected before the request body arrived."""


class BodyTooLarge(Exception):
    """The request body is larger than the configured limit."""


class BodyTooSlow(Exception):
    """The request body did not arrive within `BODY_SECONDS`."""


class BodiesFull(Exception):
    """The bodies arriving at once hold all the bytes they may (`Bodies`)."""


BODY_SECONDS = 30.0
"""Seconds a request's body may take to arrive: a body stopped short of its length held
its bytes (up to the limit) for as long as the client kept the connection."""
BODIES_BYTES = 64 << 20
"""Bytes of request bodies that may be arriving at once, on all connections together: a
hundred connections each sending all but the last byte of a 4 MiB body took 410 MB, and
the server takes a thousand."""
OWN_BYTES = 64 << 10
"""Bytes of each body that `BODIES_BYTES` does not count: small requests (a ping, most
calls) arrive whatever large bodies are stalled (seventeen uploads of 4 MiB stopped one
byte short had every POST refused). A thousand connections hold 64 MiB so, at most."""


class Bodies:
    """The bytes of the request bodies arriving now, on every connection, and their bound."""

    def __init__(self, largest: int = 0) -> None:
        """Bound them at `BODIES_BYTES`, or at `largest` if more: a body so large must fit."""
        self.limit = max(BODIES_BYTES, largest)
        self.held = 0

    def take(self, size: int) -> None:
        """Count `size` more bytes in.

        Raises:
            BodiesFull: they would pass the bound.
        """
        if self.held + size > self.limit:
            raise BodiesFull
        self.held += size


def _shared(size: int) -> int:
    """The bytes of a body of `size` bytes so far that count against `BODIES_BYTES`."""
    return max(0, size - OWN_BYTES)


class Request:
    """The parts of an HTTP request scope that the transport reads."""

    def __init__(self, scope: Scope, receive: Receive, bodies: Bodies | None = None) -> None:
        """Read `scope`; a body read arrives within `bodies` (one of its own if None)."""
        self.method: str = scope["method"]
        self.bodies = bodies or Bodies()
        self.path: str = scope["path"]
        self.root_path: str = scope.get("root_path", "")
        # Mounted under a prefix, the path may still carry it (ASGI leaves that to servers).
        self.route = self.path.removeprefix(self.root_path) or "/"
        self.receive = receive
        self.headers: dict[str, str] = {}
        for raw_name, raw_value in scope["headers"]:
            name = raw_name.decode("latin-1").lower()
            value = raw_value.decode("latin-1")
            # Repeated headers are one comma-separated list (RFC 9110 section 5.3).
            self.headers[name] = f"{self.headers[name]}, {value}" if name in self.headers else value
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        self.query = {name: values[0] for name, values in query.items()}

    @property
    def content_type(self) -> str:
        """The media type of the body, lowercased, without parameters."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def accepts(self, media_type: str) -> bool:
        """Whether the Accept header admits `media_type` (wildcards included)."""
        kind = media_type.split("/")[0]
        for item in self.headers.get("accept", "").split(","):
            accepted = item.split(";")[0].strip().lower()
            if accepted in (media_type, f"{kind}/*", "*/*"):
                return True
        return False

    async def body(self, limit: int) -> bytes:
        """Return the request body.

        Raises:
            BodyTooLarge: the body is longer than `limit` bytes.
            BodyTooSlow: it did not arrive within `BODY_SECONDS`.
            BodiesFull: the bodies arriving at once would hold more than they may.
            ClientGone: the client disconnected first.
        """
        declared = self.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge
        chunks: list[bytes] = []
        size = 0
        try:
            with anyio.move_on_after(BODY_SECONDS):
                while True:
                    event = await self.receive()
                    if event["type"] == "http.disconnect":
                        raise ClientGone
                    chunk: bytes = event.get("body", b"")
                    if size + len(chunk) > limit:
                        raise BodyTooLarge
                    self.bodies.take(_shared(size + len(chunk)) - _shared(size))
                    size += len(chunk)
                    chunks.append(chunk)
                    if not event.get("more_body", False):
                        return b"".join(chunks)
            raise BodyTooSlow
        finally:
            self.bodies.held -= _shared(size)  # arrived (or not), it is the request's now

    async def wait_disconnect(self) -> None:
        """Return when the client disconnects (the body must have been read)."""
        while (await self.receive())["type"] != "http.disconnect":
            pass

    async def cancel_on_disconnect(self, scope: anyio.CancelScope) -> None:
        """Cancel `scope` when the client disconnects (run it as a task beside the response)."""
        await self.wait_disconnect()
        scope.cancel()


@dataclass
class Response:
    """A complete (non-streaming) HTTP response."""

    status: int
    body: bytes = b""
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict[str, str])

    async def send(self, send: Send, extra: Iterable[tuple[str, str]] = ()) -> None:
        """Send the whole response, with `extra` headers (CORS) added."""
        headers = [*self.headers.items(), *extra, ("content-length", str(len(self.body)))]
        if self.content_type is not None:
            headers.append(("content-type", self.content_type))
        await start(send, self.status, headers)
        await send({"type": "http.response.body", "body": self.body})


def json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
    """A response whose body is `payload` as compact JSON."""
    body = json.dumps(payload, separators=(",", ":")).encode()
    return Response(status, body, JSON_TYPE, headers or {})


def error_response(
    status: int, message: str, code: int = -32600, headers: dict[str, str] | None = None
) -> Response:
    """An HTTP error whose body is a JSON-RPC error for no particular request.

    The id is null, as JSON-RPC 2.0 has it for an error that answers no readable request.
    MCP schemas before 2025-11-25 have no such error (2025-11-25 lets the id be left out),
    but the official SDK client reads a null id and drops an error without one, so null
    is what lets clients show the reason.
    """
    payload = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return json_response(status, payload, headers)


async def start(send: Send, status: int, headers: Iterable[tuple[str, str]]) -> None:
    """Send the status line and headers of a response."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (name.encode("latin-1"), value.encode("latin-1")) for name, value in headers
            ],
        }
    )


def sse_event(
    data: bytes,
    event_id: str | None = None,
    *,
    event: str | None = None,
    retry_ms: int | None = None,
) -> bytes:
    """Encode one server-sent event; `data` must not contain a line break (compact JSON)."""
    lines: list[bytes] = []
    if event_id is not None:
        lines.append(b"id: " + event_id.encode())
    if event is not None:
        lines.append(b"event: " + event.encode())
    if retry_ms is not None:
        lines.append(b"retry: %d" % retry_ms)
    lines.append(b"data: " + data if data else b"data:")
    return b"\n".join(lines) + b"\n\n"


async def send_chunk(send: Send, chunk: bytes) -> None:
    """Send part of a streamed response body; more follows."""
    await send({"type": "http.response.body", "body": chunk, "more_body": True})


async def drained(send: Send) -> None:
    """Wait until the client has taken what was sent to it before.

    uvicorn waits so before each write, and writes nothing for an empty chunk. The next
    chunk is to be made only then: a client that reads nothing then holds one chunk, in its
    socket's buffer (bounded for all clients by `protocol.UNSENT_BYTES`), not also a chunk
    made and waiting to be written (300 resumes of a stream of 4 MB events held 1.6 GB).
    """
    await send_chunk(send, b"")


async def relay_sse(
    send: Send,
    items: MemoryObjectReceiveStream[_Item],
    encode: Callable[[_Item], bytes],
    keepalive: float,
) -> None:
    """Send each of `items`, as `encode` frames it, until they end.

    After each `keepalive` seconds without one, `KEEPALIVE_COMMENT` goes instead.

    Raises:
        OSError: the client went away (how ASGI servers report a write to a closed socket).
    """
    while True:
        await drained(send)  # what waits stays in `items`, whose bytes are bounded
        chunk = KEEPALIVE_COMMENT
        with anyio.move_on_after(keepalive):
            try:
                chunk = encode(await items.receive())
            except anyio.EndOfStream:
                return
        await send_chunk(send, chunk)
