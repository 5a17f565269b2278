"""Where SSE events wait to be replayed to a client that reconnects with `Last-Event-ID`.

An event id is `<stream id>/<sequence number>`, and a stream id starts with its session's
id, so ids are unique across the process and a client can only resume its own streams.
"""

from collections import deque
from collections.abc import Iterable
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
    # isdigit() alone takes "²", which int() does not; and no stream sends 10**19 events.
    if not stream_id or not (sequence.isascii() and sequence.isdigit()) or len(sequence) > 18:
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

    def forget_stream(self, stream_id: str) -> None:
        """Drop every event of the stream `stream_id` (it was delivered whole)."""
        ...

    def forget(self, session_id: str) -> None:
        """Drop every event of the session `session_id` (it has ended)."""
        ...


class MemoryEventStore:
    """An EventStore in memory, bounded by event count and bytes: the oldest streams' go first.

    A client that comes back after its events were pushed out misses them; the bounds keep a
    slow or vanished client from growing memory without limit. A stream delivered whole is
    forgotten at once: otherwise every answer of a long session stayed in memory until the
    session ended (issue 23).
    """

    def __init__(self, max_events: int = 10_000, max_bytes: int = 32 << 20) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._streams: dict[str, deque[tuple[int, bytes]]] = {}  # oldest stream first
        self._events = 0
        self._bytes = 0

    def append(self, stream_id: str, sequence: int, data: bytes) -> None:
        """Keep an event, pushing out the oldest streams' first events beyond the bounds."""
        self._streams.setdefault(stream_id, deque()).append((sequence, data))
        self._events += 1
        self._bytes += len(data)
        while self._events > self.max_events or self._bytes > self.max_bytes:
            oldest = next(iter(self._streams))
            events = self._streams[oldest]
            self._drop([events.popleft()])
            if not events:
                del self._streams[oldest]

    def after(self, stream_id: str, sequence: int) -> list[StoredEvent]:
        """Return the kept events of `stream_id` after `sequence`."""
        return [
            StoredEvent(event_id(stream_id, number), data)
            for number, data in self._streams.get(stream_id, ())
            if number > sequence
        ]

    def forget_stream(self, stream_id: str) -> None:
        """Drop the events of `stream_id`."""
        self._drop(self._streams.pop(stream_id, ()))

    def forget(self, session_id: str) -> None:
        """Drop the events of every stream of `session_id`."""
        prefix = f"{session_id}."
        for stream_id in [s for s in self._streams if s.startswith(prefix)]:
            self.forget_stream(stream_id)

    def _drop(self, events: Iterable[tuple[int, bytes]]) -> None:
        """Count `events` out of the bounds."""
        for _, data in events:
            self._events -= 1
            self._bytes -= len(data)
