"""One handshake-era connection: read frames, answer them, talk back to the client.

This is the only module that runs handlers, and the one exception-to-wire boundary. Rules:
- Cheap methods (`ping`, `initialize`, `logging/setLevel`) are answered by the reader at
  once; every other request runs in its own task and cancel scope, so a `ping` is
  answered while a long tool call runs.
- `notifications/cancelled` cancels the request's scope, and no response is sent.
- Notifications are never answered; a request id already in flight is refused, and so is
  a request past `running.MAX_IN_FLIGHT` running, or past the server's bounds.
- A batch (2025-03-26 sessions only) is answered with one array of responses.
- At end of input, requests already received are answered (for `END_GRACE` seconds at
  most); then what still runs is cancelled and the connection ends.
"""

import logging
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any

import anyio
import anyio.abc

from . import answers, jsonrpc, modern
from .context import Context, ListKind
from .errors import (
    CannotAsk,
    ClientRequestError,
    InternalError,
    InvalidParams,
    InvalidRequest,
    ProtocolError,
    ToolError,
)
from .inputs import Inputs, gather_answers
from .jsonrpc import JSON, RequestId
from .running import check_room, weight
from .runtime import Runtime
from .session import Session
from .shape import dump
from .transports import FrameTooLarge, Transport
from .types import LogLevel, Root

logger = logging.getLogger("mcpkit.connection")

END_GRACE = 1.0
"""Seconds the requests received before the end of input have to be answered."""

Handling = Coroutine[Any, Any, dict[str, Any]]
"""A handler's work for one request, not yet started."""
Answer = JSON | Awaitable[JSON | None] | None
"""What handling a message gives: the response now, one to await (None if cancelled), or none."""


class Connection:
    """Serves one client over one transport until the client closes it."""

    def __init__(self, runtime: Runtime, transport: Transport, *, stateless: bool = False) -> None:
        """Serve over `transport`; `stateless`: nothing outlives a request (stateless HTTP)."""
        self.runtime = runtime
        self.server = runtime.server
        self.transport = transport
        self.stateless = stateless
        self.session = Session()
        self._capabilities: dict[str, Any] = {}
        self._in_flight: dict[RequestId, anyio.CancelScope] = {}
        self._waiters: dict[RequestId, answers.Waiter] = {}
        self._roots = answers.KnownRoots()
        self._task_group: anyio.abc.TaskGroup | None = None
        self._answered = anyio.Event()  # set when nothing but streams is in flight
        self._streams: set[RequestId] = set()  # subscriptions/listen: never answered, only ended

    async def run(self) -> None:
        """Serve until end of input, answer what was asked, then cancel what still runs."""
        self.runtime.connections.add(self)
        try:
            async with anyio.create_task_group() as task_group:
                self._task_group = task_group
                async for frame in self.transport.frames():
                    self._receive(frame)
                self._answered = anyio.Event()
                with anyio.move_on_after(END_GRACE):
                    if not self._settled():
                        await self._answered.wait()
                task_group.cancel_scope.cancel()
        finally:
            self.runtime.disconnect(self)

    def _settled(self) -> bool:
        """Whether every request in flight is a stream, which waiting would not answer."""
        return self._in_flight.keys() <= self._streams

    # Peer, for Context ------------------------------------------------------------------

    @property
    def version(self) -> str:
        """The negotiated protocol version."""
        return self.session.version

    @property
    def client_info(self) -> dict[str, Any]:
        """The client's name and version, as it reported them."""
        return self.session.client_info

    @property
    def client_known(self) -> bool:
        """Whether the client told its capabilities: not to a stateless server's handshake era."""
        return self.session.client_known

    def client_supports(self, *path: str) -> bool:
        """Whether the client declared the capability at `path`."""
        return self.session.client_supports(*path)

    def wants_log(self, level: LogLevel) -> bool:
        """Whether the client wants log messages at `level`."""
        return self.session.wants_log(level)

    def capability_error(self, *path: str, what: str) -> Exception:
        """The error for a capability the client did not declare at initialize."""
        return ClientRequestError(f"The client does not support {what}")

    async def notify(self, method: str, params: dict[str, Any], related: RequestId | None) -> None:
        """Send a notification, on the stream of request `related` if the transport has one."""
        self._send(jsonrpc.notification(method, params), related)
        await self.transport.drain()

    async def request(
        self, method: str, params: dict[str, Any], timeout: float, related: RequestId | None
    ) -> dict[str, Any]:
        """Send a request to the client and wait for its result.

        Raises:
            CannotAsk: no stream would carry the request now.
            ClientRequestError: the client answered with an error, or not within `timeout`.
        """
        if not self.transport.can_ask(related):
            raise CannotAsk(
                f"The client cannot be sent {method} now: it has no open stream to receive it"
            )
        request_id = self.session.next_request_id()
        waiter = self._waiters[request_id] = answers.Waiter()
        self._send(jsonrpc.request(request_id, method, params), related)
        try:
            with anyio.fail_after(timeout):
                await waiter.done.wait()
        except TimeoutError:
            self._cancel_request(request_id, "timed out", related)
            raise ClientRequestError(
                f"The client did not answer {method} within {timeout:g} s"
            ) from None
        except anyio.get_cancelled_exc_class():
            self._cancel_request(request_id, "the server's request was cancelled", related)
            raise
        finally:
            del self._waiters[request_id]
        return waiter.result(method)

    async def roots(self, timeout: float, related: RequestId | None) -> list[Root]:
        """Return the client's roots, asking again only after it said they changed."""
        return await self._roots.get(lambda: self.request("roots/list", {}, timeout, related))

    def close_stream(self, related: RequestId) -> None:
        """End the stream of request `related` early (HTTP); the client resumes it."""
        self.transport.close_stream(related)

    async def notify_list_changed(self, kind: ListKind) -> None:
        """Tell every connected client that the `kind` list changed."""
        self.runtime.notify_list_changed(kind)

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell every subscriber of `uri` that it changed."""
        self.runtime.notify_resource_updated(uri)

    # Subscriber, for Runtime ------------------------------------------------------------

    def notify_nowait(self, method: str, params: dict[str, Any] | None) -> None:
        """Queue a notification to the client, unrelated to any of its requests."""
        self._send(jsonrpc.notification(method, params), None)

    def wants_list_changed(self, kind: ListKind) -> bool:
        """Whether this client was told at initialize that `kind` lists may change."""
        return kind in self._capabilities

    # Inbound ----------------------------------------------------------------------------

    def _send(self, message: JSON, related: RequestId | None) -> None:
        self.transport.send_nowait(jsonrpc.encode(message), related)

    def _reply(self, response: JSON | list[JSON] | None, request_ids: list[RequestId]) -> None:
        """Send the answer to `request_ids` (None if cancelled): they are done."""
        frame = None if response is None else jsonrpc.encode(response)
        self.transport.reply_nowait(frame, request_ids)

    def _cancel_request(
        self, request_id: RequestId, reason: str, related: RequestId | None
    ) -> None:
        params = {"requestId": request_id, "reason": reason}
        self._send(jsonrpc.notification("notifications/cancelled", params), related)

    def _receive(self, frame: bytes | FrameTooLarge) -> None:
        """Handle one inbound frame: a message or a batch."""
        if isinstance(frame, FrameTooLarge):  # answered with the id its start shows, if any
            refusal = InvalidRequest(f"Invalid Request: {frame}").to_wire()
            self._send(jsonrpc.error(jsonrpc.id_in_start(frame.head), refusal, self.version), None)
            return
        try:
            message = jsonrpc.decode(frame)
        except ProtocolError as exc:
            self._send(jsonrpc.error(None, exc.to_wire(), self.version), None)
            return
        batch = jsonrpc.as_list(message)
        if batch is not None:
            self._receive_batch(batch, weight(frame))
            return
        answer = self._dispatch(message, weight(frame))
        request_ids = jsonrpc.request_ids([message])
        if isinstance(answer, dict):
            self._reply(answer, request_ids)
        elif answer is not None:
            self._spawn(self._reply_when_done, answer, request_ids)

    def _receive_batch(self, batch: list[Any], size: int) -> None:
        """Handle a batch: allowed in 2025-03-26 sessions only, answered with one array."""
        if not self.session.accepts_batches:
            problem = InvalidRequest(f"Invalid Request: no batches in {self.session.version}")
        elif not batch:
            problem = InvalidRequest("Invalid Request: empty batch")
        else:
            share = size // len(batch) + 1  # of the frame's weight, for each message
            answers = [self._dispatch(message, share, in_batch=True) for message in batch]
            self._spawn(self._reply_batch, answers, jsonrpc.request_ids(batch))
            return
        self._send(jsonrpc.error(None, problem.to_wire(), self.version), None)

    async def _reply_batch(self, answers: list[Answer], request_ids: list[RequestId]) -> None:
        """Wait for every answer of a batch, then send the responses as one array."""
        responses: list[JSON | None] = [None] * len(answers)

        async def settle(index: int, answer: Answer) -> None:
            responses[index] = (
                answer if isinstance(answer, dict) or answer is None else await answer
            )

        async with anyio.create_task_group() as task_group:
            for index, answer in enumerate(answers):
                task_group.start_soon(settle, index, answer)
        sent = [response for response in responses if response is not None]
        self._reply(sent or None, request_ids)

    async def _reply_when_done(
        self, pending: Awaitable[JSON | None], request_ids: list[RequestId]
    ) -> None:
        self._reply(await pending, request_ids)

    def _spawn(self, work: Callable[..., Coroutine[Any, Any, None]], *arguments: Any) -> None:
        assert self._task_group is not None
        self._task_group.start_soon(work, *arguments)

    def _dispatch(self, message: Any, size: int, *, in_batch: bool = False) -> Answer:
        """Handle one message (weighing `size`): the response now, one to await, or None."""
        try:
            kind = jsonrpc.classify(message)
        except InvalidRequest as exc:
            return jsonrpc.error(jsonrpc.readable_id(message), exc.to_wire(), self.version)
        if kind == "response":
            self._resolve(message)
            return None
        if kind == "notification":
            self._on_notification(message["method"], message.get("params"))
            return None
        request_id: RequestId = message["id"]
        try:
            method, params = message["method"], message.get("params")
            return self._on_request(request_id, method, params, in_batch, size)
        except ProtocolError as exc:
            return jsonrpc.error(request_id, exc.to_wire())
        except Exception:  # a bug costs this request, not the connection
            logger.exception("Request %r failed", request_id)
            return jsonrpc.error(request_id, InternalError("Internal error").to_wire())

    def _on_request(
        self, request_id: RequestId, method: str, params: Any, in_batch: bool, size: int
    ) -> JSON | Awaitable[JSON | None]:
        """Answer a cheap request at once, or return the coroutine of a handler's answer.

        Raises:
            ProtocolError: the request is refused.
        """
        params = {} if params is None else jsonrpc.as_object(params)
        if params is None:
            raise InvalidParams("Invalid params: params must be an object")
        if request_id in self._in_flight:
            raise InvalidRequest(f"Invalid Request: request id {request_id!r} is already in use")
        if modern.is_modern(params):
            if in_batch:  # batches are of 2025-03-26 alone
                raise InvalidRequest("Invalid Request: a 2026-07-28 request cannot be batched")
            return self._on_modern_request(request_id, method, params, size)
        self.session.check_request(method)
        if method == "ping":
            return jsonrpc.result(request_id, {})
        if method == "initialize":
            if in_batch:
                raise InvalidRequest("Invalid Request: initialize cannot be part of a batch")
            return jsonrpc.result(request_id, self._initialize(params))
        if method == "logging/setLevel":
            self.session.set_log_level(params.get("level"))
            return jsonrpc.result(request_id, {})
        check_room(len(self._in_flight))
        if method in ("resources/subscribe", "resources/unsubscribe"):
            handler = partial(self.runtime.subscription, self, method, stateless=self.stateless)
        else:
            handler = self.server.handler(method)
        scope = self._in_flight[request_id] = anyio.CancelScope()
        context = Context(self, request_id, params.get("_meta"), self.runtime.provided)
        return self._run(request_id, handler(context, params), scope, size)

    def _on_modern_request(
        self, request_id: RequestId, method: str, params: dict[str, Any], size: int
    ) -> JSON | Awaitable[JSON | None]:
        """Serve a stateless-era request on what it carries alone (see `modern`).

        Raises:
            ProtocolError: bad `_meta`, an unknown method, or a forged requestState.
        """
        meta = modern.RequestMeta.parse(params)
        if method == "server/discover":
            return jsonrpc.result(request_id, modern.discover(self.server))
        states = self.runtime.states
        inputs = Inputs(method, gather_answers(states, method, params))
        peer = modern.ModernPeer(self.runtime, self._send, self.transport.drain, meta, inputs)
        ctx = Context(peer, request_id, params["_meta"], self.runtime.provided)
        check_room(len(self._in_flight))
        if method == "subscriptions/listen":
            self._streams.add(request_id)
            handling = modern.listen(self.server, self.runtime, self._send, request_id, params, ctx)
        else:
            handler = self.server.handler(method)
            handle = partial(handler, ctx, params)
            handling = modern.answer(self.server, states, method, params, handle)
        scope = self._in_flight[request_id] = anyio.CancelScope()
        return self._run(request_id, handling, scope, size)

    async def _run(
        self, request_id: RequestId, handling: Handling, scope: anyio.CancelScope, size: int
    ) -> JSON | None:
        """Await a handler in its cancel scope; return its response, or None if cancelled."""
        response: JSON | None = None
        try:
            with scope:
                try:
                    result = await self.runtime.running.run(handling, size)
                    response = jsonrpc.result(request_id, result)
                except ProtocolError as exc:
                    response = jsonrpc.error(request_id, exc.to_wire())
                except ClientRequestError as exc:
                    response = jsonrpc.error(request_id, InternalError(str(exc)).to_wire())
                except ToolError as exc:  # in a resource or prompt: its message is for the client
                    response = jsonrpc.error(request_id, InvalidParams(str(exc)).to_wire())
                except Exception:
                    logger.exception("Request %r failed", request_id)
                    response = jsonrpc.error(request_id, InternalError("Internal error").to_wire())
            return None if scope.cancel_called else response  # even if it ended (shielded)
        finally:
            if self._in_flight.get(request_id) is scope:  # else cancelled: the id is reused
                del self._in_flight[request_id]
            self._streams.discard(request_id)
            if self._settled():
                self._answered.set()

    def _initialize(self, params: dict[str, Any]) -> JSON:
        version = self.session.initialize(params)
        self._capabilities = self.server.capabilities(version, notifies=not self.stateless)
        result: JSON = {
            "protocolVersion": version,
            "capabilities": self._capabilities,
            "serverInfo": dump(self.server.info, version),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return result

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "notifications/initialized":
            self.session.initialized()
        elif method == "notifications/cancelled":
            # The id is free at once: the client may reuse it before the handler unwinds.
            request_id = (jsonrpc.as_object(params) or {}).get("requestId")
            if jsonrpc.is_request_id(request_id) and request_id in self._in_flight:
                self._in_flight.pop(request_id).cancel()
        elif method == "notifications/roots/list_changed":
            self._roots.forget()
            if self.server.resource_lister is not None and self.wants_list_changed("resources"):
                self.notify_nowait("notifications/resources/list_changed", None)

    def _resolve(self, response: JSON) -> None:
        request_id = response.get("id")  # any id: a response is never answered
        waiter = self._waiters.get(request_id) if jsonrpc.is_request_id(request_id) else None
        if waiter is None or not waiter.settle(response):
            logger.debug("Ignoring a response to no request awaiting one: %r", request_id)
