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
    slow or vanished client from growing memory without limit. One session keeps at most
    `1 / SESSION_SHARE` of them, so a client's burst pushes out its own events before the
    answers other sessions wait to resume. A stream delivered whole is forgotten at once:
    otherwise every answer of a long session stayed in memory until the session ended
    (issue 23).
    """

    def __init__(self, max_events: int = 10_000, max_bytes: int = 32 << 20) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._streams: dict[str, deque[tuple[int, bytes]]] = {}  # oldest stream first
        # Each session's streams, oldest first (a dict as an ordered set): a search of all
        # streams for a session's oldest, at each event over its share, took 0.8 ms an
        # event with 7,500 streams kept.
        self._sessions: dict[str, dict[str, None]] = {}
        self._events = 0
        self._bytes = 0
        self._held: dict[str, tuple[int, int]] = {}  # session id -> its events and bytes

    def append(self, stream_id: str, sequence: int, data: bytes) -> None:
        """Keep an event, pushing out the oldest streams' first events beyond the bounds."""
        session = _session_of(stream_id)
        if stream_id not in self._streams:
            self._streams[stream_id] = deque()
            self._sessions.setdefault(session, {})[stream_id] = None
        self._streams[stream_id].append((sequence, data))
        self._count(stream_id, 1, len(data))
        while self._over_share(session):
            self._push_out(next(iter(self._sessions[session])))
        while self._events > self.max_events or self._bytes > self.max_bytes:
            self._push_out(next(iter(self._streams)))

    def after(self, stream_id: str, sequence: int) -> list[StoredEvent]:
        """Return the kept events of `stream_id` after `sequence`."""
        return [
            StoredEvent(event_id(stream_id, number), data)
            for number, data in self._streams.get(stream_id, ())
            if number > sequence
        ]

    def forget_stream(self, stream_id: str) -> None:
        """Drop the events of `stream_id`."""
        for _, data in self._streams.pop(stream_id, ()):
            self._count(stream_id, -1, -len(data))
        self._drop(stream_id)

    def forget(self, session_id: str) -> None:
        """Drop the events of every stream of `session_id`."""
        for stream_id in list(self._sessions.get(session_id, ())):
            self.forget_stream(stream_id)

    def _over_share(self, session: str) -> bool:
        """Whether `session` holds more than its share, in more than one event."""
        events, size = self._held.get(session, (0, 0))
        over = events > self.max_events // SESSION_SHARE or size > self.max_bytes // SESSION_SHARE
        return over and events > 1  # one event alone is kept, whatever its size

    def _push_out(self, stream_id: str) -> None:
        """Drop the first event of `stream_id`, and the stream once it is empty."""
        events = self._streams[stream_id]
        _, data = events.popleft()
        self._count(stream_id, -1, -len(data))
        if not events:
            del self._streams[stream_id]
            self._drop(stream_id)

    def _drop(self, stream_id: str) -> None:
        """Take `stream_id` out of its session's streams."""
        session = _session_of(stream_id)
        streams = self._sessions.get(session, {})
        streams.pop(stream_id, None)
        if not streams:
            self._sessions.pop(session, None)

    def _count(self, stream_id: str, events: int, size: int) -> None:
        """Count events in (or out, negative) of the bounds, the store's and the session's."""
        self._events += events
        self._bytes += size
        session = _session_of(stream_id)
        held_events, held_bytes = self._held.get(session, (0, 0))
        if held_events + events:
            self._held[session] = (held_events + events, held_bytes + size)
        else:
            self._held.pop(session, None)


SESSION_SHARE = 4
"""A session keeps at most a quarter of the store's events and bytes: one client's 40 MB
of progress had pushed out the answer another session was to resume."""


def _session_of(stream_id: str) -> str:
    """Return the session id a stream id begins with (`<session id>.<number>`)."""
    return stream_id.rpartition(".")[0]
