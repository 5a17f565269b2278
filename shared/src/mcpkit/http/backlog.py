"""The bytes waiting in response queues for clients that read slowly: `Backlog`, `Backlogs`.

Each SSE response is fed through a memory stream bounded in messages. Messages can be large
(a request id or progress token is the client's to choose, and is copied into every
progress notification), so the bytes are bounded too: past `QUEUE_BYTES` the client is
taken as too slow, as it is past the count. Its queue is then closed: its response ends
after what it holds, and a client of a resumable stream resumes from the event store.

The queues of one server are bounded together as well (`TOTAL_QUEUE_BYTES`): clients that
never read, each holding less than its own bound, would otherwise hold it a thousand times
over. Past the total, the queue holding the most is emptied and its response ended, so a
client that reads as it should keeps being served while one that does not is cut off.
"""

import contextlib
from collections import deque
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

QUEUE_BYTES = 16 * 1024 * 1024
"""Bytes of messages one response may hold for a client that does not read: 1,024 queued
messages of a 1 MB progress token each took 1.3 GB."""
TOTAL_QUEUE_BYTES = 256 * 1024 * 1024
"""Bytes of messages all responses of a server may hold together: a thousand connections,
each holding just under `QUEUE_BYTES`, held 16 GB."""


class Backlog:
    """What the messages still queued on one memory stream weigh, and whether more fit.

    It counts the messages the reader has not taken yet, and can empty the queue: it holds
    the stream's receiving end beside the reader's.
    """

    def __init__(
        self,
        send: MemoryObjectSendStream[Any],
        receive: MemoryObjectReceiveStream[Any],
        backlogs: "Backlogs",
        limit: int = QUEUE_BYTES,
    ) -> None:
        self._send = send
        self._receive = receive
        self._backlogs = backlogs
        self._limit = limit
        self._sizes: deque[int] = deque()  # of the messages queued and maybe not read yet
        self.held = 0
        """Bytes of the messages queued and maybe not read yet (see `recount`)."""
        self.dropped = False
        """Whether the queue was emptied: what it held never reached its reader."""
        backlogs.add(self)

    @property
    def finished(self) -> bool:
        """Whether the queue is done with: its reader has gone, or it has ended and is empty."""
        statistics = self._send.statistics()
        return not statistics.open_receive_streams or (
            not statistics.open_send_streams and not statistics.current_buffer_used
        )

    def recount(self) -> int:
        """Forget the messages read since the last count; return the bytes still held."""
        waiting = self._send.statistics().current_buffer_used
        while len(self._sizes) > waiting:  # read since: a queue gives its oldest first
            self._count(-self._sizes.popleft())
        return self.held

    def send_nowait(self, item: Any, size: int) -> bool:
        """Queue `item`, a message of `size` bytes; return False if the client is too slow.

        Too slow: the queue holds its most messages, or `limit` bytes (a larger message
        may wait alone): it is closed, and its response ends after what it holds. Or all
        queues together hold `TOTAL_QUEUE_BYTES` and this one holds the most: it is emptied
        and closed. A queue whose reader has gone, or that was closed, takes nothing.
        """
        statistics = self._send.statistics()
        if not statistics.open_receive_streams or not statistics.open_send_streams:
            return False  # checked first: making room for it would end another for nothing
        full = statistics.current_buffer_used >= statistics.max_buffer_size
        if full or (self.recount() and self.held + size > self._limit):
            self._send.close()
            return False
        if not self._backlogs.make_room(self, size):
            self.drop()
            return False
        self._send.send_nowait(item)  # the reader is there and there is room: it cannot fail
        self._sizes.append(size)
        self._count(size)
        return True

    def drop(self) -> None:
        """Empty the queue and close it: the reader ends after the message it holds, if any."""
        self._send.close()
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
            while True:  # ends once empty: the sending end is closed
                self._receive.receive_nowait()
                self.dropped = True
        self._sizes.clear()
        self._count(-self.held)

    def _count(self, change: int) -> None:
        self.held += change
        self._backlogs.held += change


class Backlogs:
    """The response queues of one server, bounded in bytes together."""

    def __init__(self, limit: int = TOTAL_QUEUE_BYTES) -> None:
        self.held = 0
        """Bytes held in all queues, messages read since their queue's last count included."""
        self._limit = limit
        self._queues: set[Backlog] = set()
        self._counted_queues = 0  # queues kept at the last full count

    def add(self, backlog: Backlog) -> None:
        """Count a new queue; forget finished ones whenever the number kept has doubled.

        Or whenever the queues hold over half the total: what finished ones held (clients
        gone mid-answer) was kept until a push went past the total, 180 MB on an idle server.
        """
        self._queues.add(backlog)
        if len(self._queues) > 2 * self._counted_queues or self.held > self._limit // 2:
            self._recount()

    def make_room(self, asking: Backlog, size: int) -> bool:
        """Whether `size` more bytes fit for `asking`, after emptying the queues holding most.

        A queue holding more than `asking` is emptied (its response ends) until the bytes
        fit; if `asking` holds the most, it is refused instead.
        """
        if self.held + size <= self._limit:
            return True
        if size > self._limit:
            return False
        held = self._recount()
        while self.held + size > self._limit:
            largest = max(held, key=held.__getitem__, default=None)
            if largest is None or largest is asking:
                return False
            del held[largest]
            largest.drop()
        return True

    def _recount(self) -> dict[Backlog, int]:
        """Count every queue afresh and forget finished ones; return what each holds."""
        held: dict[Backlog, int] = {}
        for backlog in list(self._queues):
            if backlog.finished:
                backlog.drop()  # what its gone reader left is let go with it
                self._queues.discard(backlog)
            elif backlog.recount():
                held[backlog] = backlog.held
        self._counted_queues = len(self._queues)
        return held
