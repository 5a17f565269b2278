"""Where SSE events wait to be replayed to a client that reconnects with `Last-Event-ID`.

An event id is `<stream id>/<sequence number>`, and a stream id starts with its session's
id, so ids are unique across the process and a client can only resume its own streams.
"""

from collections import deque
from typing import NamedTuple, Protocol


class StoredEvent(NamedTuple):
    """One event as sent on an SSE stream."""

    event_id: str
    data: bytes


def event_id(stream_id: str, sequence: int) -> str:
    """Return the id of event number `sequence` on stream `stream_id`."""
    return f"{stream_id}/{sequence}"


def parse_event_id(value: str) -> tuple[str, int] | None:
    """Return (stream id, sequence number) of an event id, or None if it is not one of ours."""
    stream_id, _, sequence = value.rpartition("/")
    if not stream_id or not sequence.isdigit():
        return None
    return stream_id, int(sequence)


class EventStore(Protocol):
    """Keeps sent events for replay. Implement it over a shared store to resume anywhere."""

    def append(self, stream_id: str, sequence: int, data: bytes) -> None:
        """Keep event `sequence` of stream `stream_id`."""
        ...

    def after(self, stream_id: str, sequence: int) -> list[StoredEvent]:
        """Return the kept events of `stream_id` that came after `sequence`, in order."""
        ...

    def forget(self, session_id: str) -> None:
        """Drop every event of the session `session_id` (it has ended)."""
        ...


class MemoryEventStore:
    """An EventStore in memory, bounded by event count and bytes: the oldest go first.

    A client that comes back after its events were pushed out misses them; the bounds keep a
    slow or vanished client from growing memory without limit.
    """

    def __init__(self, max_events: int = 10_000, max_bytes: int = 32 << 20) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._events: deque[tuple[str, int, bytes]] = deque()
        self._bytes = 0

    def append(self, stream_id: str, sequence: int, data: bytes) -> None:
        """Keep an event, pushing out the oldest ones beyond the bounds."""
        self._events.append((stream_id, sequence, data))
        self._bytes += len(data)
        while len(self._events) > self.max_events or self._bytes > self.max_bytes:
            self._bytes -= len(self._events.popleft()[2])

    def after(self, stream_id: str, sequence: int) -> list[StoredEvent]:
        """Return the kept events of `stream_id` after `sequence` (a scan: resumes are rare)."""
        return [
            StoredEvent(event_id(stream, number), data)
            for stream, number, data in self._events
            if stream == stream_id and number > sequence
        ]

    def forget(self, session_id: str) -> None:
        """Drop the events of every stream of `session_id`."""
        prefix = f"{session_id}."
        kept = deque(event for event in self._events if not event[0].startswith(prefix))
        self._bytes = sum(len(event[2]) for event in kept)
        self._events = kept
