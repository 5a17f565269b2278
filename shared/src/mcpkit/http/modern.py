"""Streamable HTTP, stateless era (2026-07-28): one POST, one request, one connection.

A POST is of this era when its body carries `_meta["io.modelcontextprotocol/protocolVersion"]`
or its `MCP-Protocol-Version` header names a stateless-era version. It is served on a
connection of its own that ends with it; no session id is minted, echoed or read. Before the
request runs, its `_meta` and its standard headers are checked (`headers`), and its method
must exist: the errors answer with HTTP 400 (404 for an unknown method). The answer is one
JSON response, or request-scoped SSE (no event ids: nothing resumes) when anything comes
before it; a `subscriptions/listen` stream is SSE whatever else the server prefers. Quiet SSE
responses carry keep-alive comments. A client that closes the response cancels the request:
nothing more is sent.
"""

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anyio

from .. import jsonrpc, modern
from ..connection import Connection
from ..errors import InvalidRequest, ProtocolError
from ..jsonrpc import RequestId
from ..runtime import Runtime
from ..session import before_initialize
from ..transports import FrameTooLarge
from ..versions import MODERN_VERSIONS
from .asgi import (
    JSON_TYPE,
    SSE_HEADERS,
    SSE_TYPE,
    Request,
    Response,
    Send,
    error_response,
    json_response,
    relay_sse,
    send_chunk,
    sse_event,
    start,
)
from .backlog import Backlog, Backlogs
from .config import HttpConfig
from .headers import VERSION_HEADER, check_headers

STREAM_QUEUE = 1024
"""Messages waiting for a slow client; past that (or `QUEUE_BYTES`) its response (and
request) ends."""

ERROR_STATUS = {-32020: 400, -32021: 400, -32022: 400, -32602: 400, -32601: 404}
"""The HTTP status of a request refused before it runs, by JSON-RPC error code."""

ANSWER_STATUS = {-32021: 400}
"""The HTTP status of a handler's error answered as JSON (others are 200)."""


_OWN_METHODS = ("server/discover", "subscriptions/listen")
"""Methods the core answers itself, whatever the server registers."""

_LISTEN_NEEDS_SSE = (
    "Not Acceptable: a subscriptions/listen answer is an SSE stream; "
    "Accept must list text/event-stream"
)


def is_modern_post(request: Request, messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a POST is of the stateless era: by its header, or its lone message's `_meta`."""
    if request.headers.get(VERSION_HEADER, "").strip() in MODERN_VERSIONS:
        return True
    params = jsonrpc.as_object(messages[0].get("params")) if len(messages) == 1 else None
    return params is not None and modern.is_modern(params)


class Exchange:
    """The transport of one stateless-era POST: its message in, what answers it out."""

    def __init__(self, body: bytes, json_only: bool, backlogs: Backlogs) -> None:
        """`json_only`: the answer goes back as JSON, so request-scoped messages are dropped."""
        self.answered = anyio.Event()
        self._body = body
        self._json_only = json_only
        self._out, self.messages = anyio.create_memory_object_stream[bytes](STREAM_QUEUE)
        self._backlog = Backlog(self._out, self.messages, backlogs)

    async def frames(self) -> AsyncIterator[bytes | FrameTooLarge]:
        """Yield the POSTed message, then wait until it is answered."""
        yield self._body
        await self.answered.wait()

    def send_nowait(self, frame: bytes, related: RequestId | None = None) -> None:
        """Send a message on the response (dropped when answers are JSON only)."""
        if not self._json_only:
            self._push(frame)

    def reply_nowait(self, frame: bytes | None, request_ids: Sequence[RequestId]) -> None:
        """Send the answer (None: cancelled): the response ends after it."""
        if frame is not None:
            self._push(frame)
        self.finish()

    def close_stream(self, request_id: RequestId) -> None:
        """Nothing to do: this era's streams do not resume, so they are not closed early."""

    def can_ask(self, related: RequestId | None) -> bool:
        """Never: the stateless era asks the client through input-required results."""
        return False

    async def drain(self) -> None:
        """Nothing to wait for: the response's queue is bounded on its own."""

    @property
    def cut(self) -> bool:
        """Whether messages were dropped from the queue (room was made for other clients)."""
        return self._backlog.dropped

    def finish(self) -> None:
        """End the response after what is queued, and the connection with it."""
        self._out.close()
        self.answered.set()

    def _push(self, frame: bytes) -> None:
        if not self._backlog.send_nowait(frame, len(frame)):
            self.finish()  # too slow, or answered or ended already: its response ends


async def serve(
    runtime: Runtime,
    config: HttpConfig,
    backlogs: Backlogs,
    request: Request,
    send: Send,
    message: Mapping[str, Any],
    body: bytes,
) -> None:
    """Answer one stateless-era POST: checked first, then run on a connection of its own.

    The answer is JSON alone when the server is set to answer so (`config.json_response`) or
    the client accepts nothing else, except for `subscriptions/listen`: its answer is a
    stream, always SSE, so a client that does not accept SSE gets 406 for it.
    """
    request_id: RequestId | None = message.get("id")
    try:
        check_request(runtime, request, message)
    except ProtocolError as exc:
        error = jsonrpc.error(request_id, exc.to_wire())
        await json_response(ERROR_STATUS.get(exc.code, 400), error).send(send)
        return
    if request_id is None:
        await Response(202).send(send)  # no notification of this era changes anything here
        return
    sse = request.accepts(SSE_TYPE)
    listen = message["method"] == "subscriptions/listen"
    if listen and not sse:
        await error_response(406, _LISTEN_NEEDS_SSE).send(send)
        return
    exchange = Exchange(body, not sse or (config.json_response and not listen), backlogs)
    try:
        async with anyio.create_task_group() as task_group, exchange.messages:
            task_group.start_soon(Connection(runtime, exchange, stateless=True).run)
            task_group.start_soon(request.cancel_on_disconnect, task_group.cancel_scope)
            await _respond(send, exchange, config.keepalive)
            task_group.cancel_scope.cancel()
    finally:
        exchange.finish()  # cancelled before the answer: nothing more can be sent


def check_request(runtime: Runtime, request: Request, message: Mapping[str, Any]) -> None:
    """Check what must hold before a stateless-era request runs.

    Raises:
        InvalidParams: params are not an object, or `_meta` lacks a required field.
        HeaderMismatch: a standard header is missing or disagrees with the body (checked
            before the version: a header that disagrees is the error, whatever the version).
        UnsupportedVersion: `_meta` names a version this server does not speak.
        MethodNotFound: the server has no such method.
        InvalidRequest: the message is a response, which no client sends of this era.
    """
    method = message.get("method")
    if not isinstance(method, str):
        raise InvalidRequest("Invalid Request: a 2026-07-28 POST carries a request or notification")
    params = jsonrpc.as_object(message.get("params", {}))
    if params is None or not modern.is_modern(params):
        raise before_initialize(method)
    check_headers(runtime.server, request.headers, method, params)
    modern.RequestMeta.parse(params)
    if "id" in message and method not in _OWN_METHODS:
        runtime.server.handler(method)


async def _respond(send: Send, exchange: Exchange, keepalive: float) -> None:
    """Send the answer as JSON when it comes alone, else stream everything as SSE."""
    try:
        first = await exchange.messages.receive()
    except anyio.EndOfStream:  # ended without a word (a client too slow, or cancelled)
        await Response(202).send(send)
        return
    alone = not exchange.messages.statistics().current_buffer_used and not exchange.cut
    if exchange.answered.is_set() and alone:  # else the first may not be the answer
        await Response(_answer_status(first), first, JSON_TYPE).send(send)
        return
    try:
        await start(send, 200, SSE_HEADERS)
        await send_chunk(send, sse_event(first))
        await relay_sse(send, exchange.messages, sse_event, keepalive)
        await send({"type": "http.response.body", "body": b""})
    except OSError:  # the client went away while we wrote: the request is cancelled
        pass


def _answer_status(frame: bytes) -> int:
    """The HTTP status of a JSON answer: 200, or what its error code calls for."""
    error = jsonrpc.as_object(json.loads(frame).get("error"))
    code = error.get("code") if error is not None else None
    return ANSWER_STATUS.get(code, 200) if isinstance(code, int) else 200
