"""Streamable HTTP sessions: each one a Connection, its streams, and who may use it.

A session is the transport of its Connection: inbound frames come from POSTs; each
outbound message goes to the stream of the request it belongs to, and everything else to
the session's GET stream.
"""

import itertools
import logging
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from typing import Protocol

import anyio

from ..connection import Connection
from ..jsonrpc import RequestId
from ..runtime import Runtime
from ..transports import FrameTooLarge
from ..versions import V2025_11_25
from .backlog import Backlogs
from .events import EventStore
from .streams import Stream

logger = logging.getLogger("mcpkit.http")
INBOUND_QUEUE = 64  # frames waiting for the connection; a POST waits when it is full
STREAM_QUEUE = 1024  # events waiting for a slow client before its response is ended
CROWDED_IDLE = 60.0
"""Seconds idle after which, in a full table, a session makes room for a new one: 1,000
initializes, never used again, had kept every new client out for the whole idle timeout."""


class ManagedSession(Protocol):
    """What the session table needs of a session, Streamable HTTP or legacy SSE."""

    id: str
    principal: str | None
    last_active: float
    attached: int

    def close(self) -> None:
        """End the session: its connection stops and in-flight work is cancelled."""
        ...


class Inbox(Protocol):
    """A session as a POST handler sees it: where the POSTed frames go."""

    async def deliver(self, frame: bytes) -> None:
        """Hand one frame to the session's connection (waits while its queue is full).

        Raises:
            anyio.ClosedResourceError: the session has ended.
        """
        ...


def new_session_id() -> str:
    """Return a fresh session id: 256 bits from the system's secure source, URL-safe."""
    return secrets.token_urlsafe(32)


class Inflow:
    """The part every HTTP session shares: an owner, and POSTed frames on their way in.

    POST handlers `deliver` frames; the session's Connection reads them from `frames()`
    while `run()` serves it.
    """

    connection: Connection

    def __init__(self, session_id: str, principal: str | None) -> None:
        self.id = session_id
        self.principal = principal
        self.last_active = time.monotonic()
        self._inbound_send, self._inbound = anyio.create_memory_object_stream[bytes](INBOUND_QUEUE)

    async def frames(self) -> AsyncIterator[bytes | FrameTooLarge]:
        """Yield the frames POSTed to this session until it closes."""
        async for frame in self._inbound:
            yield frame

    async def deliver(self, frame: bytes) -> None:
        """Hand one POSTed frame to the connection (waits while its queue is full).

        Raises:
            anyio.ClosedResourceError: the session has ended.
        """
        await self._inbound_send.send(frame)

    async def run(self) -> None:
        """Serve the connection until the session closes; a failure ends this session alone."""
        with self._inbound:  # closed even when cancelled before the first read
            try:
                await self.connection.run()
            except Exception:  # sessions share the app's task group: a raise would end them all
                logger.exception("Session %s failed and has ended", self.id)
                self.close()  # its open responses end too

    def close(self) -> None:
        """End the session: its connection stops and its responses end."""
        raise NotImplementedError


class HttpSession(Inflow):
    """A Streamable HTTP session (or, stateless, the life of one POST)."""

    def __init__(
        self,
        runtime: Runtime,
        store: EventStore,
        backlogs: Backlogs,
        *,
        session_id: str,
        principal: str | None,
        json_response: bool,
        stateless: bool = False,
    ) -> None:
        super().__init__(session_id, principal)
        self.attached = 0  # HTTP responses being served now
        self.json_response = json_response
        self.connection = Connection(runtime, self, stateless=stateless)
        self.streams: dict[str, Stream] = {}
        self._store = store
        self._backlogs = backlogs
        self._numbers = itertools.count()
        self._routes: dict[RequestId, Stream] = {}
        self.standalone = self._new_stream(None)

    @property
    def version(self) -> str:
        """The negotiated protocol version."""
        return self.connection.version

    # Transport, for the Connection ------------------------------------------------------

    def send_nowait(self, frame: bytes, related: RequestId | None = None) -> None:
        """Send on the stream of request `related`, else on the GET stream."""
        stream = None if related is None or self.json_response else self._routes.get(related)
        (stream or self.standalone).push(frame)

    def reply_nowait(self, frame: bytes | None, request_ids: Sequence[RequestId]) -> None:
        """Send the answer to `request_ids` on their stream, which ends when all are answered."""
        stream = self._routes.get(request_ids[0]) if request_ids else None
        if stream is None:  # not a POSTed request (cannot happen): do not lose the answer
            if frame is not None:
                self.standalone.push(frame)
            return
        if frame is not None:
            stream.push(frame)
        for request_id in request_ids:
            self._routes.pop(request_id, None)
        stream.finish(request_ids)
        if stream.ended:
            self.streams.pop(stream.id, None)

    def close_stream(self, request_id: RequestId) -> None:
        """End the HTTP response carrying `request_id` now; the client resumes the stream.

        Only from 2025-11-25, whose streams open with a priming event id: an older client
        may have no event id to resume from, and would lose the answer.
        """
        stream = self._routes.get(request_id)
        if stream is not None and not self.json_response and self.version >= V2025_11_25:
            stream.request_close()

    def can_ask(self, related: RequestId | None) -> bool:
        """Whether a request to the client, sent now, would reach it and come back.

        It travels on the POST stream of `related` (when answers are SSE), else on an open
        GET stream; never when stateless, where the answer would reach another connection.
        """
        if self.connection.stateless:
            return False
        if related is not None and not self.json_response and related in self._routes:
            return True
        return self.standalone.attached

    async def drain(self) -> None:
        """Nothing to wait for: each stream's queue is bounded on its own."""

    # For the HTTP handlers --------------------------------------------------------------

    def in_use(self, request_ids: Sequence[RequestId]) -> bool:
        """Whether any of `request_ids` is still being answered."""
        return any(request_id in self._routes for request_id in request_ids)

    def open_stream(self, request_ids: Sequence[RequestId]) -> Stream:
        """Return a new stream for the answers to `request_ids`."""
        stream = self._new_stream(request_ids)
        for request_id in request_ids:
            self._routes[request_id] = stream
        return stream

    def close(self) -> None:
        """End the session: the connection stops, streams end, kept events are dropped."""
        self._inbound_send.close()
        for stream in [self.standalone, *self.streams.values()]:
            stream.end()
        self.streams.clear()
        self._routes.clear()
        self._store.forget(self.id)

    def _new_stream(self, request_ids: Sequence[RequestId] | None) -> Stream:
        stream_id = f"{self.id}.{next(self._numbers)}"
        stream = Stream(stream_id, self._store, self._backlogs, request_ids, STREAM_QUEUE)
        self.streams[stream_id] = stream
        return stream


class SessionTable:
    """The live sessions: capped in number, expired when idle, bound to their credential."""

    def __init__(self, max_sessions: int, idle_timeout: float) -> None:
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._sessions: dict[str, ManagedSession] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def has_room(self, principal: str | None) -> bool:
        """Whether another session of `principal` may start, once expired sessions are dropped.

        In a full table, the principal (a user and client, with OAuth) holding the most
        sessions makes room: its session idle longest goes, at once if it holds more than
        the newcomer's principal then would, else once idle for `CROWDED_IDLE` seconds (a
        client whose session is closed initializes anew). One client that held every
        session, pinging each, kept every other client out and evicted theirs.
        """
        if len(self._sessions) >= self.max_sessions:
            self.expire()
        if len(self._sessions) >= self.max_sessions:
            self._make_room(principal)
        return len(self._sessions) < self.max_sessions

    def _make_room(self, principal: str | None) -> None:
        """Close a session for one of `principal` (see `has_room`), if one may go."""
        held = Counter(session.principal for session in self._sessions.values())
        most = max(held.values())
        idle = [s for s in self._sessions.values() if s.attached == 0 and held[s.principal] == most]
        idlest = min(idle, key=lambda session: session.last_active, default=None)
        if idlest is None:
            return
        if most > held[principal] + 1 or idlest.last_active < time.monotonic() - CROWDED_IDLE:
            self.remove(idlest)

    def add(self, session: ManagedSession) -> None:
        """Add a session (check `has_room` first)."""
        self._sessions[session.id] = session

    def get(self, session_id: str, principal: str | None) -> ManagedSession | None:
        """Return the session, if it exists and `principal` is the one that created it.

        Another principal gets None, as for an unknown id: ids cannot be probed.
        """
        session = self._sessions.get(session_id)
        if session is None:
            return None
        # Compared as bytes: compare_digest refuses non-ASCII strings.
        owner, caller = (session.principal or "").encode(), (principal or "").encode()
        if not secrets.compare_digest(owner, caller):
            return None
        session.last_active = time.monotonic()
        return session

    def remove(self, session: ManagedSession) -> None:
        """Close a session and forget it."""
        if self._sessions.pop(session.id, None) is not None:
            session.close()

    def expire(self) -> None:
        """Close the sessions idle for longer than the timeout (none of their responses open)."""
        deadline = time.monotonic() - self.idle_timeout
        for session in list(self._sessions.values()):
            if session.attached == 0 and session.last_active < deadline:
                self.remove(session)

    def close_all(self) -> None:
        """Close every session (the server is shutting down)."""
        for session in list(self._sessions.values()):
            self.remove(session)
