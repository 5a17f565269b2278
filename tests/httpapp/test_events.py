"""The in-memory event store: bounded, and forgetting streams and sessions whole."""

from mcpkit.http import MemoryEventStore


def test_events_after_a_sequence_come_in_order() -> None:
    store = MemoryEventStore()
    for sequence in (1, 2, 3):
        store.append("s.1", sequence, f"event {sequence}".encode())
    store.append("s.2", 1, b"another stream")
    assert [(e.event_id, e.data) for e in store.after("s.1", 1)] == [
        ("s.1/2", b"event 2"),
        ("s.1/3", b"event 3"),
    ]
    assert store.after("s.9", 0) == []


def test_the_oldest_streams_events_go_first_beyond_the_bounds() -> None:
    store = MemoryEventStore(max_events=3, max_bytes=1000)
    store.append("s.1", 1, b"a")
    store.append("s.1", 2, b"b")
    store.append("s.2", 1, b"c")
    store.append("s.2", 2, b"d")  # a fourth: s.1's first goes
    assert [e.event_id for e in store.after("s.1", 0)] == ["s.1/2"]
    store.append("s.3", 1, b"x" * 1000)  # the bytes bound: all but this one go
    assert store.after("s.1", 0) == store.after("s.2", 0) == []
    assert [e.event_id for e in store.after("s.3", 0)] == ["s.3/1"]


def test_a_forgotten_stream_frees_its_room() -> None:
    store = MemoryEventStore(max_events=2, max_bytes=1000)
    store.append("s.1", 1, b"a")
    store.append("s.1", 2, b"b")
    store.forget_stream("s.1")
    store.append("s.2", 1, b"c")
    store.append("s.2", 2, b"d")  # fits: s.1 no longer counts
    assert [e.event_id for e in store.after("s.2", 0)] == ["s.2/1", "s.2/2"]


def test_forgetting_a_session_drops_only_its_streams() -> None:
    store = MemoryEventStore()
    store.append("a.1", 1, b"a")
    store.append("a.2", 1, b"a")
    store.append("ab.1", 1, b"ab")  # a session id that starts like the other
    store.forget("a")
    assert store.after("a.1", 0) == store.after("a.2", 0) == []
    assert [e.data for e in store.after("ab.1", 0)] == [b"ab"]
