"""A response's queue is bounded in bytes too: a client that does not read cannot make the
server hold gigabytes of messages it chose the size of (a progress token is copied into
every progress notification)."""

import anyio

from mcpkit.http import MemoryEventStore
from mcpkit.http.backlog import QUEUE_BYTES, Backlog
from mcpkit.http.modern import Exchange
from mcpkit.http.streams import Stream

MEGABYTE = b"x" * (1 << 20)
FITTING = QUEUE_BYTES // len(MEGABYTE)


async def test_a_streams_response_ends_past_queue_bytes_and_the_store_keeps_the_rest() -> None:
    # 1,000 progress notifications of a 1 MB token each, never read: 1.3 GB held.
    stream = Stream("s.1", MemoryEventStore(max_bytes=64 << 20), [1], queue_size=1024)
    _, receive = stream.open()
    for _ in range(FITTING):
        stream.push(MEGABYTE)
    assert stream.attached
    stream.push(MEGABYTE)  # one too many: the response ends, the client may resume
    assert not stream.attached
    with receive:
        assert len([event async for event in receive]) == FITTING
    missed, again = stream.resume(FITTING)
    stream.detach(again)
    assert [event.data for event in missed] == [MEGABYTE]


async def test_a_stateless_response_ends_past_queue_bytes() -> None:
    exchange = Exchange(b"{}", json_only=False)
    for _ in range(FITTING):
        exchange.send_nowait(MEGABYTE)
    assert not exchange.answered.is_set()
    exchange.send_nowait(MEGABYTE)
    assert exchange.answered.is_set()
    with exchange.messages:
        assert len([frame async for frame in exchange.messages]) == FITTING


async def test_what_was_read_leaves_the_backlog_and_one_large_message_may_wait_alone() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](10)
    backlog = Backlog(send, limit=100)
    assert backlog.admits(1000)  # nothing waits: a message larger than the bound passes
    send.send_nowait(b"a" * 1000)
    backlog.added(1000)
    assert not backlog.admits(1)
    await receive.receive()
    assert backlog.admits(100)
    send.close()
    receive.close()
