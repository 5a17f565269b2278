"""The bytes waiting in a response's queue for a client that reads slowly: `Backlog`.

Each SSE response is fed through a memory stream bounded in messages. Messages can be large
(a request id or progress token is the client's to choose, and is copied into every
progress notification), so the bytes are bounded too: past `QUEUE_BYTES` the client is
taken as too slow, as it is past the count.
"""

from collections import deque
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

QUEUE_BYTES = 16 * 1024 * 1024
"""Bytes of messages one response may hold for a client that does not read: 1,024 queued
messages of a 1 MB progress token each took 1.3 GB."""


class Backlog:
    """What the messages still queued on one memory stream weigh, and whether more fit."""

    def __init__(self, queue: MemoryObjectSendStream[Any], limit: int = QUEUE_BYTES) -> None:
        self._queue = queue
        self._limit = limit
        self._sizes: deque[int] = deque()  # of the messages queued and maybe not read yet
        self._bytes = 0

    def admits(self, size: int) -> bool:
        """Whether a message of `size` bytes may be queued: always when none waits."""
        waiting = self._queue.statistics().current_buffer_used
        while len(self._sizes) > waiting:  # read since: a queue gives its oldest first
            self._bytes -= self._sizes.popleft()
        return not self._sizes or self._bytes + size <= self._limit

    def send_nowait(self, item: Any, size: int) -> bool:
        """Queue `item`, a message of `size` bytes; return False if the client is too slow.

        Too slow: the queue holds its most messages, or `limit` bytes (a larger message
        may wait alone). Nothing is queued then.

        Raises:
            anyio.ClosedResourceError, anyio.BrokenResourceError: the queue has ended.
        """
        if not self.admits(size):
            return False
        try:
            self._queue.send_nowait(item)
        except anyio.WouldBlock:
            return False
        self.added(size)
        return True

    def added(self, size: int) -> None:
        """Count a message of `size` bytes just queued."""
        self._sizes.append(size)
        self._bytes += size
