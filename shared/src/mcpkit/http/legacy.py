"""The deprecated HTTP+SSE transport of protocol 2024-11-05, for clients that only speak it.

`GET /sse` opens the session: its first event, `endpoint`, names the URL to POST messages
to (`/messages?session_id=...`). Every POST is answered 202 at once; the answers travel on
the SSE stream, which lives as long as the session.
"""

import anyio

from ..connection import Connection
from ..jsonrpc import RequestId
from ..runtime import Runtime
from ..transports import OneStream
from .asgi import (
    JSON_TYPE,
    SSE_HEADERS,
    SSE_TYPE,
    Request,
    Response,
    Send,
    relay_sse,
    send_chunk,
    sse_event,
    start,
)
from .backlog import Backlog, Backlogs
from .config import HttpConfig
from .posted import deliver_frame, parse_messages, read_body, refuse
from .sessions import STREAM_QUEUE, Inflow, SessionTable, new_session_id


class LegacySession(Inflow, OneStream):
    """One HTTP+SSE session: every message the server sends goes down its one SSE stream."""

    def __init__(self, runtime: Runtime, principal: str | None, backlogs: Backlogs) -> None:
        super().__init__(new_session_id(), principal)
        self.attached = 1  # the SSE response is the session: it is never idle while it lasts
        self.connection = Connection(runtime, self)
        self._outbound, self.outbound = anyio.create_memory_object_stream[bytes](STREAM_QUEUE)
        self._backlog = Backlog(self._outbound, self.outbound, backlogs)

    def send_nowait(self, frame: bytes, related: RequestId | None = None) -> None:
        """Queue a message for the SSE stream; a client too slow to read it loses the session.

        Too slow: see `Backlog.send_nowait`. A session closed already takes nothing.
        """
        if not self._backlog.send_nowait(frame, len(frame)):
            self.close()

    def event(self, frame: bytes) -> bytes:
        """Return a message taken from the queue as an SSE event."""
        return sse_event(frame, event="message")

    async def drain(self) -> None:
        """Nothing to wait for: the queue is bounded and overflow ends the session."""

    def close(self) -> None:
        """End the session: the connection stops and the SSE response ends."""
        self._inbound_send.close()
        self._outbound.close()


class LegacyEndpoint:
    """The handlers of /sse and /messages."""

    def __init__(
        self, runtime: Runtime, config: HttpConfig, sessions: SessionTable, backlogs: Backlogs
    ) -> None:
        self.runtime = runtime
        self.backlogs = backlogs
        self.config = config
        self.sessions = sessions

    async def sse(self, request: Request, principal: str | None, send: Send) -> None:
        """Open a session and stream its messages until the client disconnects.

        Raises:
            Refused: no SSE in Accept, or too many sessions.
        """
        if not request.accepts(SSE_TYPE):
            raise refuse(406, "Not Acceptable: Accept must list text/event-stream")
        if not self.sessions.has_room(principal):
            raise refuse(503, "Service Unavailable: too many sessions, try again later")
        session = LegacySession(self.runtime, principal, self.backlogs)
        self.sessions.add(session)
        endpoint = f"{request.root_path}/messages?session_id={session.id}"
        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(session.run)
                task_group.start_soon(_close_on_disconnect, request, session)
                await start(send, 200, SSE_HEADERS)
                await send_chunk(send, sse_event(endpoint.encode(), event="endpoint"))
                async with session.outbound:
                    await relay_sse(send, session.outbound, session.event, self.config.keepalive)
                await send({"type": "http.response.body", "body": b""})
                task_group.cancel_scope.cancel()
        except OSError:  # the client went away while we wrote
            pass
        finally:
            self.sessions.remove(session)

    async def messages(self, request: Request, principal: str | None, send: Send) -> None:
        """Take one POSTed message (or batch) for a session; its answer goes on the stream.

        Raises:
            Refused: no or unknown session id, bad content type, body or JSON.
        """
        session_id = request.query.get("session_id")
        if session_id is None:
            raise refuse(400, "Bad Request: the session_id query parameter is required")
        session = self.sessions.get(session_id, principal)
        if not isinstance(session, LegacySession):
            raise refuse(404, "Not Found: no such session; open a new one with GET /sse")
        if request.content_type != JSON_TYPE:
            raise refuse(415, "Unsupported Media Type: Content-Type must be application/json")
        body = await read_body(request, self.config.max_body)
        parse_messages(body)
        await deliver_frame(session, body)
        await Response(202, b"Accepted", "text/plain").send(send)


async def _close_on_disconnect(request: Request, session: LegacySession) -> None:
    await request.wait_disconnect()
    session.close()
