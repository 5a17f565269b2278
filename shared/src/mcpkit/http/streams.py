"""One resumable SSE stream: a POST's messages, or a session's GET stream.

A POST's stream carries the answers to its requests and what the server sent while handling
them. Its responder waits for the first message: a lone answer goes back as plain JSON;
anything else opens SSE. From then on every message is numbered, kept in the event store
and delivered to whichever HTTP response is attached now. The server may end that response
early (`request_close`, or a client too slow to keep up with the queue, bounded in messages
and bytes); the client
then resumes with `Last-Event-ID` and loses nothing the store still holds.
"""

from collections.abc import Iterable

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..jsonrpc import RequestId
from .backlog import Backlog, Backlogs
from .events import EventStore, StoredEvent, event_id


class Stream:
    """The messages bound for one SSE stream, and the HTTP response delivering them now."""

    def __init__(
        self,
        stream_id: str,
        store: EventStore,
        backlogs: Backlogs,
        request_ids: Iterable[RequestId] | None,
        queue_size: int,
    ) -> None:
        """A POST's stream for `request_ids`, or the GET stream if `request_ids` is None."""
        self.id = stream_id
        self.standalone = request_ids is None
        self.pending: set[RequestId] = set(request_ids or ())
        self.ended = False
        self._store = store
        self._backlogs = backlogs
        self._queue_size = queue_size
        self._sequence = 0
        self._held: list[bytes] = []  # a POST's messages before its responder chose JSON or SSE
        self._resumable = False
        self._close_requested = False
        self._live: MemoryObjectSendStream[StoredEvent] | None = None
        self._backlog: Backlog | None = None  # of `_live`
        self._live_receive: MemoryObjectReceiveStream[StoredEvent] | None = None
        self._wake = anyio.Event()

    @property
    def attached(self) -> bool:
        """Whether an HTTP response is delivering this stream now."""
        return self._live is not None

    @property
    def silent(self) -> bool:
        """Whether nothing has been sent on this stream."""
        return not self._held and self._sequence == 0

    def push(self, frame: bytes) -> None:
        """Deliver one message (a GET stream never opened drops it: nobody listens)."""
        if self._resumable:
            self._record(frame)
        elif not self.standalone:
            self._held.append(frame)
            self._wake.set()

    def finish(self, request_ids: Iterable[RequestId]) -> None:
        """Mark requests answered; when none is left, the stream ends after its last message."""
        self.pending.difference_update(request_ids)
        if not self.pending and not self.standalone:
            self.end()

    def end(self) -> None:
        """End the stream: its responder finishes sending and returns."""
        self.ended = True
        self._end_live()
        self._wake.set()

    def delivered_whole(self, last_sent: str) -> bool:
        """Whether the stream has ended and `last_sent` is the id of its last event."""
        return self.ended and last_sent == event_id(self.id, self._sequence)

    def request_close(self) -> None:
        """End the current HTTP response early; the stream goes on for the client to resume."""
        self._close_requested = True
        self._end_live()
        self._wake.set()

    async def lone_answer(self) -> bytes | None:
        """Wait for the first message; return it if it is the whole stream, else None (SSE)."""
        while not self._held and not self.ended and not self._close_requested:
            await self._wake.wait()
            self._wake = anyio.Event()
        if self.ended and len(self._held) == 1 and not self._close_requested:
            return self._held.pop()
        return None

    def open(self) -> tuple[str, MemoryObjectReceiveStream[StoredEvent]]:
        """Attach a new HTTP response; return the id to prime it with and its event queue.

        A response already attached (an older GET) is ended: one response per stream.
        """
        self._end_live()
        priming_id = event_id(self.id, self._sequence)
        send, receive = anyio.create_memory_object_stream[StoredEvent](self._queue_size)
        self._live, self._live_receive = send, receive
        self._backlog = Backlog(send, receive, self._backlogs)
        if not self._resumable:
            self._resumable = True
            for frame in self._held:
                self._record(frame)
            self._held.clear()
        if self.ended or self._close_requested:
            self._close_requested = False
            self._end_live()
        return priming_id, receive

    def resume(
        self, after: int
    ) -> tuple[list[StoredEvent], MemoryObjectReceiveStream[StoredEvent]]:
        """Attach a reconnecting response: the kept events after `after`, then live ones."""
        missed = self._store.after(self.id, after)
        _, receive = self.open()
        return missed, receive

    def detach(self, receive: MemoryObjectReceiveStream[StoredEvent]) -> None:
        """Forget a response that has gone; messages are kept for the client to resume."""
        if receive is self._live_receive:
            self._end_live()
        receive.close()
        self.keep()

    def keep(self) -> None:
        """Keep the stream's messages in the event store from now, for a client to resume.

        Held for a response that never came, they grew without bound.
        """
        self._resumable = True
        for frame in self._held:
            self._record(frame)
        self._held.clear()

    def _record(self, frame: bytes) -> None:
        self._sequence += 1
        self._store.append(self.id, self._sequence, frame)
        if self._backlog is None:  # no response is attached
            return
        event = StoredEvent(event_id(self.id, self._sequence), frame)
        if not self._backlog.send_nowait(event, len(frame)):
            self._end_live()  # gone, or the client reads too slowly: it resumes from the store

    def _end_live(self) -> None:
        if self._live is not None:
            self._live.close()
            self._live = self._live_receive = self._backlog = None
