"""uvicorn's HTTP/1.1 protocol, read through a buffer, with heads due and connections bounded.

asyncio reads the socket of a plain `asyncio.Protocol` with `recv(256 KiB)`: 256 KiB
allocated for every read, then shrunk to what came, which grew the heap under hours of
requests (mcp-fs `write_file` over HTTP: +0.2 MiB a minute, every minute; see
`mcpkit.readbuffer`). A `BufferedProtocol` is handed a buffer instead, and what came is
copied out at its exact size. All connections served by one thread share its buffer:
asyncio reads into it and hands it back in one call, so no two reads ever use it at once,
and a thousand connections do not each keep 64 KiB.

uvicorn gives a client all the time it likes to send a request's head: a client that
trickles heads on thousands of connections held every descriptor the process may open,
and no check of host, origin or token runs before a head is whole. A head is therefore due
`HEAD_SECONDS` after its first byte (or after the connection opens), and past
`max_connections()` open connections a new one takes the place of the one idle longest
of those in no request (a head unfinished since it connected, or idle since its last
answer): a client that held every slot with heads it never finished, reconnecting as they
were closed, locked every other client out. Only when every connection is in a request is
a new one closed at once.

uvicorn reads on each time the app waits for a client to leave, as every answer does, and
keeps what comes after the request being answered (pipelined requests) unbounded: one
connection that sent requests far ahead of their answers piled up 1.3 GB. A client that
sends more than `AHEAD_BYTES` ahead is cut off; no MCP client pipelines at all.

Nor does uvicorn give up on a client that leaves what it is sent unread: the answer being
written, and the request it answers, were held for ever (150 such connections, 1.8 GB). A
connection whose socket has taken nothing for `WRITE_STALL_SECONDS` is cut off. Until then
each such connection holds a message unsent, up to megabytes (a progress token is the
client's to choose), and all of them together at most `UNSENT_BYTES`: past that, those
holding the most are cut off at once.

A request answered before its body was whole ends its connection (`on_response_complete`).
"""

import asyncio  # noqa: TID251 - uvicorn, which runs on asyncio only, takes asyncio protocols
import resource
from operator import attrgetter

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..readbuffer import thread_buffer

HEAD_SECONDS = 10.0
"""Seconds a client has to finish a request's head once it begins it (or connects)."""
AHEAD_BYTES = 1 << 20
"""Bytes a client may send beyond the request being answered."""
MAX_CONNECTIONS = 1000
"""Open connections at most, fewer where the process may open few descriptors."""
WRITE_STALL_SECONDS = 60.0
"""Seconds a client may leave its socket full (reading nothing) before it is cut off."""
UNSENT_BYTES = 256 * 1024 * 1024
"""Bytes the connections whose clients do not read may hold unsent, all together: 300 that
resumed a stored stream of 4 MB events, reading nothing, held 1.6 GB."""


def max_connections() -> int:
    """Return how many connections may be open at once: half the descriptors, at most 1,000."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_CONNECTIONS if soft == resource.RLIM_INFINITY else min(MAX_CONNECTIONS, soft // 2)


# uvicorn's connection_made takes a Transport, narrower than asyncio's BaseTransport.
class BufferedH11Protocol(H11Protocol, asyncio.BufferedProtocol):  # pyright: ignore[reportIncompatibleMethodOverride]
    """uvicorn's h11 protocol, fed through its thread's read buffer, heads due in time."""

    _head_due: asyncio.TimerHandle | None = None
    _stall_due: asyncio.TimerHandle | None = None
    _idle_since = 0.0  # loop time: when it connected, or its last answer ended

    def connection_made(self, transport: asyncio.Transport) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Take the connection, making room for it when too many are open, or close it."""
        super().connection_made(transport)
        if len(self.connections) > max_connections() and not self._make_room():
            transport.close()
            return
        self._idle_since = self.loop.time()
        self._head_due = self.loop.call_later(HEAD_SECONDS, self._head_late)

    def _make_room(self) -> bool:
        """Close the connection idle longest of those in no request; return whether one was."""
        idle = [other for other in self._ours() if other is not self and other.in_no_request()]
        if not idle:
            return False
        min(idle, key=attrgetter("_idle_since")).transport.close()
        return True

    def _ours(self) -> list["BufferedH11Protocol"]:
        """The open connections of this server (uvicorn's own, if any, left out)."""
        return [other for other in self.connections if isinstance(other, BufferedH11Protocol)]

    def on_response_complete(self) -> None:
        """Note when the connection fell idle, then let uvicorn go on to the next request.

        A request answered before its body was whole (refused, or out of time) ends its
        connection: uvicorn read the rest and dropped it for as long as the client sent
        it, and a byte a second kept such a connection open with no deadline to end it.
        """
        self._idle_since = self.loop.time()
        super().on_response_complete()
        if self.conn.their_state is h11.SEND_BODY:
            self.transport.close()

    def in_no_request(self) -> bool:
        """Whether the connection is open, but its next request's head is not whole yet."""
        return self.conn.their_state is h11.IDLE and not self.transport.is_closing()

    def get_buffer(self, sizehint: int) -> memoryview:
        """Return the buffer the next read lands in (asyncio calls this before each read)."""
        return thread_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        """Hand uvicorn a copy of the `nbytes` just read: the buffer is reused at once."""
        self.data_received(thread_buffer()[:nbytes].tobytes())
        # Read whole, the request is being answered: what h11 holds is sent ahead.
        if self.conn.their_state is h11.DONE and len(self.conn.trailing_data[0]) > AHEAD_BYTES:
            self.transport.close()
            return
        if self.conn.their_state is not h11.IDLE:  # the head is whole
            self._cancel_head_due()
        elif self._head_due is None:  # a head begun on a kept-alive connection
            self._head_due = self.loop.call_later(HEAD_SECONDS, self._head_late)

    def pause_writing(self) -> None:
        """The socket is full: the client has until `WRITE_STALL_SECONDS` to read some."""
        super().pause_writing()
        if self._stall_due is None:
            self._stall_due = self.loop.call_later(WRITE_STALL_SECONDS, self.transport.abort)
        self._bound_unsent()

    def _bound_unsent(self) -> None:
        """Cut off the stalled connections holding most while they hold over `UNSENT_BYTES`.

        A stalled connection writes nothing more until its client reads (uvicorn waits for
        the socket to drain before each write), so counting as each one stalls bounds them.
        """
        unsent = {
            other: other.transport.get_write_buffer_size()
            for other in self._ours()
            if other.stalled()
        }
        total = sum(unsent.values())
        while total > UNSENT_BYTES:
            largest = max(unsent, key=unsent.__getitem__)
            total -= unsent.pop(largest)
            largest.transport.abort()

    def stalled(self) -> bool:
        """Whether the socket is full: the client has read nothing of the last write yet."""
        return self._stall_due is not None

    def resume_writing(self) -> None:
        """The client read: it is not cut off."""
        self._cancel_stall_due()
        super().resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection, and its deadlines."""
        self._cancel_head_due()
        self._cancel_stall_due()
        super().connection_lost(exc)

    def _cancel_stall_due(self) -> None:
        if self._stall_due is not None:
            self._stall_due.cancel()
            self._stall_due = None

    def _cancel_head_due(self) -> None:
        if self._head_due is not None:
            self._head_due.cancel()
            self._head_due = None

    def _head_late(self) -> None:
        self._head_due = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()
