"""Streamable HTTP, handshake era (2025-03-26 to 2025-11-25): POST, GET and DELETE on /mcp.

A POST of the stateless era (2026-07-28) is handed to `modern` as soon as its body is read.

- POST carries client messages. Requests are answered with one JSON response, or an SSE
  stream when the server sends anything else first (progress, logs, its own requests);
  notifications and responses alone get 202.
- GET opens the session's stream for messages unrelated to any request (one at a time), or
  resumes any stream of the session after `Last-Event-ID`.
- DELETE ends the session.
"""

from collections.abc import Sequence
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream

from .. import jsonrpc
from ..jsonrpc import RequestId
from ..runtime import Runtime
from ..session import Phase, before_initialize
from ..versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS, V2025_03_26, V2025_11_25
from . import modern
from .asgi import (
    JSON_TYPE,
    SSE_HEADERS,
    SSE_TYPE,
    Request,
    Response,
    Send,
    drained,
    json_response,
    relay_sse,
    send_chunk,
    sse_event,
    start,
)
from .backlog import Backlogs
from .config import HttpConfig
from .events import EventStore, StoredEvent, parse_event_id
from .posted import Refused, deliver_frame, parse_messages, read_body, refuse
from .sessions import HttpSession, SessionTable, new_session_id
from .streams import Stream

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


class StreamableEndpoint:
    """The handlers of /mcp; sessions run in the app's task group."""

    def __init__(
        self,
        runtime: Runtime,
        config: HttpConfig,
        store: EventStore,
        backlogs: Backlogs,
        sessions: SessionTable,
        task_group: anyio.abc.TaskGroup,
    ) -> None:
        self.runtime = runtime
        self.config = config
        self.store = store
        self.backlogs = backlogs
        self.sessions = sessions
        self.task_group = task_group

    async def post(self, request: Request, principal: str | None, send: Send) -> None:
        """Take client messages; answer requests with JSON or an SSE stream, the rest 202.

        Raises:
            Refused: bad headers, body, session or protocol version.
        """
        if request.content_type != JSON_TYPE:
            raise refuse(415, "Unsupported Media Type: Content-Type must be application/json")
        if not request.accepts(JSON_TYPE) or not (
            self.config.json_response or request.accepts(SSE_TYPE)
        ):
            raise refuse(
                406, "Not Acceptable: Accept must list application/json and text/event-stream"
            )
        body = await read_body(request, self.config.max_body)
        messages, is_batch = parse_messages(body)
        if modern.is_modern_post(request, messages):
            if is_batch:
                raise refuse(400, "Bad Request: a 2026-07-28 POST carries one message")
            await modern.serve(
                self.runtime, self.config, self.backlogs, request, send, messages[0], body
            )
            return
        request_ids = [message["id"] for message in messages if _is_request(message)]
        initialize = any(message.get("method") == "initialize" for message in messages)
        if initialize and is_batch:
            raise refuse(400, "Bad Request: initialize must be sent on its own")
        if self.config.stateless:
            version = None if initialize else header_version(request)
            await self._stateless(request, send, body, is_batch, request_ids, version)
        elif initialize:
            session = self._new_session(principal)
            headers = {SESSION_HEADER: session.id}
            try:
                await self._take(request, send, session, body, is_batch, request_ids, headers)
            finally:  # a refused initialize (or none: a notification) must not hold a slot
                if session.connection.session.phase is Phase.AWAITING_INITIALIZE:
                    self.sessions.remove(session)
        else:
            if request.headers.get(SESSION_HEADER) is None:
                _refuse_sessionless(messages)
            session = self._session(request, principal)
            header_version(request)
            await self._take(request, send, session, body, is_batch, request_ids, {})

    async def get(self, request: Request, principal: str | None, send: Send) -> None:
        """Open the session's GET stream, or resume one of its streams after Last-Event-ID.

        Raises:
            Refused: stateless mode, no SSE in Accept, a bad session, or a second GET stream.
        """
        if self.config.stateless or _is_modern(request):
            raise refuse(405, "Method Not Allowed: no GET stream without a session")
        if not request.accepts(SSE_TYPE):
            raise refuse(406, "Not Acceptable: Accept must list text/event-stream")
        session = self._session(request, principal)
        header_version(request)
        last_event_id = parse_event_id(request.headers.get("last-event-id", ""))
        if last_event_id is not None and last_event_id[0].startswith(f"{session.id}."):
            stream_id, sequence = last_event_id
            stream = session.streams.get(stream_id)
            if stream is None:  # it has ended: what the store kept is all there is
                missed = self.store.after(stream_id, sequence)
                await self._serve(request, send, session, None, missed, None, {})
                return
            missed, events = stream.resume(sequence)
            await self._serve(request, send, session, stream, missed, events, {})
            return
        if session.standalone.attached:
            raise refuse(409, "Conflict: this session's GET stream is already open")
        await self._open(request, send, session, session.standalone, {})

    async def delete(self, request: Request, principal: str | None, send: Send) -> None:
        """End the session.

        Raises:
            Refused: stateless mode, or a missing or unknown session.
        """
        if self.config.stateless or _is_modern(request):
            raise refuse(405, "Method Not Allowed: there is no session to end")
        self.sessions.remove(self._session(request, principal))
        await Response(204).send(send)

    def _new_session(self, principal: str | None) -> HttpSession:
        """Create a session and start its connection.

        Raises:
            Refused: the server has as many sessions as it may hold.
        """
        if not self.sessions.has_room(principal):
            raise refuse(503, "Service Unavailable: too many sessions, try again later")
        session = HttpSession(
            self.runtime,
            self.store,
            self.backlogs,
            session_id=new_session_id(),
            principal=principal,
            json_response=self.config.json_response,
        )
        self.sessions.add(session)
        self.task_group.start_soon(session.run)
        return session

    def _session(self, request: Request, principal: str | None) -> HttpSession:
        """Return the request's session.

        Raises:
            Refused: 400 without a session id, 404 for an unknown or ended one.
        """
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is None:
            raise refuse(400, "Bad Request: the Mcp-Session-Id header is required")
        session = self.sessions.get(session_id, principal)
        if not isinstance(session, HttpSession):
            raise refuse(404, "Not Found: no such session; initialize a new one", -32001)
        return session

    async def _stateless(
        self,
        request: Request,
        send: Send,
        body: bytes,
        is_batch: bool,
        request_ids: list[RequestId],
        version: str | None,
    ) -> None:
        """Serve one POST on a connection of its own that ends with it."""
        session = HttpSession(
            self.runtime,
            self.store,
            self.backlogs,
            session_id=new_session_id(),
            principal=None,
            json_response=self.config.json_response,
            stateless=True,
        )
        if version is not None:
            session.connection.session.assume(version)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(session.run)
            try:
                await self._take(request, send, session, body, is_batch, request_ids, {})
            finally:
                session.close()  # ends the connection: work still running is cancelled

    async def _take(
        self,
        request: Request,
        send: Send,
        session: HttpSession,
        body: bytes,
        is_batch: bool,
        request_ids: list[RequestId],
        headers: dict[str, str],
    ) -> None:
        """Hand POSTed messages to the session's connection and answer the POST."""
        if is_batch and not session.connection.session.accepts_batches:
            raise refuse(400, f"Bad Request: protocol {session.version} does not allow batches")
        if session.in_use(request_ids):
            raise refuse(400, "Bad Request: a request with this id is still being answered")
        if not request_ids:
            await deliver_frame(session, body)
            await Response(202, headers=headers).send(send)
            return
        stream = session.open_stream(request_ids)
        await deliver_frame(session, body)
        answer, answered = None, False
        session.attached += 1
        try:
            # A client that leaves while it waits holds the session no longer: counted as
            # attached, an abandoned call pinned it past every idle timeout.
            with anyio.CancelScope() as waiting:
                async with anyio.create_task_group() as task_group:
                    task_group.start_soon(request.cancel_on_disconnect, waiting)
                    answer = await stream.lone_answer()
                    answered = True
                    waiting.cancel()
        finally:
            session.attached -= 1
        if not answered:  # its work goes on (stateless: it ends with the session)
            stream.keep()
            return
        if answer is not None:
            await Response(200, answer, JSON_TYPE, headers).send(send)
        else:  # cancelled and silent, a request still gets a stream: one that ends at once
            await self._open(request, send, session, stream, headers)

    async def _open(
        self,
        request: Request,
        send: Send,
        session: HttpSession,
        stream: Stream,
        headers: dict[str, str],
    ) -> None:
        """Serve `stream` as a new SSE response, primed for resumption (2025-11-25 on)."""
        priming_id, events = stream.open()
        # 2025-11-25 clients resume from the priming event even if nothing else arrives.
        first = [StoredEvent(priming_id, b"")] if session.version >= V2025_11_25 else []
        await self._serve(request, send, session, stream, first, events, headers)

    async def _serve(
        self,
        request: Request,
        send: Send,
        session: HttpSession,
        stream: Stream | None,
        first: Sequence[StoredEvent],
        events: MemoryObjectReceiveStream[StoredEvent] | None,
        headers: dict[str, str],
    ) -> None:
        """Send an SSE response: `first`, then `events` until the stream or the client ends.

        Keep-alive comments fill quiet spells. A client that disconnects does not cancel
        anything (the spec says so for the handshake era); its stream keeps its events for a
        resume. A stream whose every event went out is forgotten by the store.
        """
        last_sent = ""

        def encode(event: StoredEvent) -> bytes:
            nonlocal last_sent
            last_sent = event.event_id
            return _encode(event, self.config.retry_ms)

        session.attached += 1
        try:
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as task_group:
                    task_group.start_soon(request.cancel_on_disconnect, scope)
                    await start(send, 200, [*SSE_HEADERS, *headers.items()])
                    for event in first:
                        await drained(send)
                        await send_chunk(send, encode(event))
                    if events is not None:
                        await relay_sse(send, events, encode, self.config.keepalive)
                    await send({"type": "http.response.body", "body": b""})
                    if stream is not None and stream.delivered_whole(last_sent):
                        self.store.forget_stream(stream.id)
                    scope.cancel()
        except OSError:  # the client went away while we wrote
            pass
        finally:
            session.attached -= 1
            if stream is not None and events is not None:
                stream.detach(events)


def _is_modern(request: Request) -> bool:
    """Whether a GET or DELETE comes from a 2026-07-28 client: sessionless, it gets 405."""
    return request.headers.get(VERSION_HEADER) in MODERN_VERSIONS


def _is_request(message: dict[str, Any]) -> bool:
    return "method" in message and "id" in message


def _refuse_sessionless(messages: list[dict[str, Any]]) -> None:
    """Refuse requests sent neither in a session nor statelessly, as stdio refuses them.

    Pings and messages that are not requests are left to the session check (400).

    Raises:
        Refused: 400 with -32602 (`session.before_initialize`), with the request's id if
            it came alone.
    """
    asking = [m["method"] for m in messages if _is_request(m) and m["method"] != "ping"]
    if not asking:
        return
    problem = before_initialize(asking[0])
    message = f"{problem.message}, then the Mcp-Session-Id header its answer carries"
    if len(messages) > 1:
        raise refuse(400, message, problem.code)
    error = jsonrpc.error(messages[0]["id"], {"code": problem.code, "message": message})
    raise Refused(json_response(400, error))


def _encode(event: StoredEvent, retry_ms: int) -> bytes:
    """One SSE event; a priming event (no data) also says how soon to reconnect."""
    return sse_event(event.data, event.event_id, retry_ms=None if event.data else retry_ms)


def header_version(request: Request) -> str:
    """Return the MCP-Protocol-Version header's version (absent: 2025-03-26, as the spec says).

    Raises:
        Refused: 400 for a version this server does not speak.
    """
    version = request.headers.get(VERSION_HEADER, V2025_03_26)
    if version not in HANDSHAKE_VERSIONS:
        supported = ", ".join(HANDSHAKE_VERSIONS)
        raise refuse(
            400, f"Bad Request: unsupported MCP-Protocol-Version {version!r} (use {supported})"
        )
    return version
