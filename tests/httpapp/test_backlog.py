"""Response queues are bounded in bytes, each and all together: clients that do not read
cannot make the server hold gigabytes of messages they chose the size of (a progress token
is copied into every progress notification)."""

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from mcpkit.http import MemoryEventStore
from mcpkit.http.asgi import Event, relay_sse
from mcpkit.http.backlog import QUEUE_BYTES, Backlog, Backlogs
from mcpkit.http.modern import Exchange
from mcpkit.http.modern import _respond as modern_respond  # pyright: ignore[reportPrivateUsage]
from mcpkit.http.streams import Stream

MEGABYTE = b"x" * (1 << 20)
FITTING = QUEUE_BYTES // len(MEGABYTE)


def new_stream(backlogs: Backlogs, name: str = "s.1") -> Stream:
    """A POST's stream for request 1, its events kept in a store of its own."""
    return Stream(name, MemoryEventStore(max_bytes=64 << 20), backlogs, [1], queue_size=1024)


def waiting(receive: MemoryObjectReceiveStream[object]) -> int:
    """How many messages wait in a queue, unread."""
    return receive.statistics().current_buffer_used


def ended(receive: MemoryObjectReceiveStream[object]) -> bool:
    """Whether a queue has been let go: nothing waits in it, and nothing more will come."""
    try:
        receive.receive_nowait()
    except anyio.EndOfStream:
        return True
    except anyio.WouldBlock:
        return False
    raise AssertionError("a message was waiting")


async def test_a_streams_response_ends_past_queue_bytes_and_the_store_keeps_the_rest() -> None:
    # 1,000 progress notifications of a 1 MB token each, never read: 1.3 GB held.
    backlogs = Backlogs()
    stream = new_stream(backlogs)
    _, receive = stream.open()
    for _ in range(FITTING):
        stream.push(MEGABYTE)
    assert stream.attached
    stream.push(MEGABYTE)  # one too many: the response ends after what it holds
    assert not stream.attached
    with receive:
        assert len([event async for event in receive]) == FITTING
    missed, again = stream.resume(FITTING)  # the client resumes from the store
    stream.detach(again)
    assert [event.data for event in missed] == [MEGABYTE]


async def test_a_stateless_response_ends_past_queue_bytes() -> None:
    backlogs = Backlogs()
    exchange = Exchange(b"{}", False, backlogs)
    for _ in range(FITTING):
        exchange.send_nowait(MEGABYTE)
    assert not exchange.answered.is_set()
    exchange.send_nowait(MEGABYTE)
    assert exchange.answered.is_set()
    with exchange.messages:
        assert len([frame async for frame in exchange.messages]) == FITTING


async def test_what_was_read_leaves_the_backlog_and_one_large_message_may_wait_alone() -> None:
    send, receive = anyio.create_memory_object_stream[bytes](10)
    backlogs = Backlogs()
    backlog = Backlog(send, receive, backlogs, limit=100)
    assert backlog.send_nowait(b"a" * 1000, 1000)  # nothing waits: larger than the bound
    await receive.receive()
    assert backlog.send_nowait(b"b" * 100, 100)  # what was read no longer counts
    assert backlog.recount() == backlogs.held == 100
    assert not backlog.send_nowait(b"c", 1)  # past the bound: the queue is closed
    assert receive.receive_nowait() == b"b" * 100  # what it held still reaches its reader
    assert ended(receive)
    assert backlog.recount() == backlogs.held == 0
    receive.close()


async def test_past_the_total_the_queue_holding_most_is_let_go_not_the_one_reading() -> None:
    # Three clients that never read, each well within its own bound, and one that reads.
    backlogs = Backlogs(limit=(9 << 20) + (1 << 19))
    hogs = [new_stream(backlogs, f"hog.{n}") for n in range(3)]
    queues = [hog.open()[1] for hog in hogs]
    for count, hog in zip((4, 3, 2), hogs, strict=True):
        for _ in range(count):
            hog.push(MEGABYTE)
    assert backlogs.held == 9 << 20
    reader = new_stream(backlogs, "reader")
    _, reading = reader.open()
    for _ in range(5):  # each read before the next: it never holds more than one
        reader.push(MEGABYTE)
        await reading.receive()
    assert reader.attached
    assert ended(queues[0])  # the largest was let go: its response ends
    assert [waiting(queue) for queue in queues[1:]] == [3, 2]
    assert backlogs.held == 6 << 20
    for stream, queue in [*zip(hogs, queues, strict=True), (reader, reading)]:
        stream.detach(queue)


async def test_past_the_total_a_queue_holding_most_is_refused_itself() -> None:
    backlogs = Backlogs(limit=3 << 20)
    hog, other = new_stream(backlogs, "hog"), new_stream(backlogs, "other")
    (_, hog_queue), (_, other_queue) = hog.open(), other.open()
    other.push(MEGABYTE)
    for _ in range(3):
        hog.push(MEGABYTE)  # the third does not fit, and this queue holds the most
    assert not hog.attached
    assert other.attached
    assert waiting(hog_queue) == 0
    assert waiting(other_queue) == 1
    assert backlogs.held == 1 << 20
    hog.detach(hog_queue)
    other.detach(other_queue)


async def test_queues_whose_reader_has_gone_are_forgotten_and_let_go() -> None:
    # Responses whose clients went away mid-stream leave messages in their queues.
    backlogs = Backlogs(limit=8 << 20)
    for number in range(100):
        stream = new_stream(backlogs, f"gone.{number}")
        _, receive = stream.open()
        stream.push(MEGABYTE)
        receive.close()  # the client went away without reading
    assert backlogs.held <= 8 << 20  # let go as room was needed
    last = new_stream(backlogs, "last")
    _, receive = last.open()
    last.push(MEGABYTE)
    assert last.attached
    last.detach(receive)


async def test_a_queue_that_cannot_take_a_message_ends_no_other_for_it() -> None:
    # Room was made for a message whose own queue then refused it (its reader had gone):
    # another client's response ended for nothing.
    backlogs = Backlogs(limit=3 << 20)
    live, dead = new_stream(backlogs, "live"), new_stream(backlogs, "dead")
    (_, live_queue), (_, dead_queue) = live.open(), dead.open()
    for _ in range(3):
        live.push(MEGABYTE)
    dead_queue.close()  # its client went away
    dead.push(MEGABYTE)
    assert waiting(live_queue) == 3
    live.detach(live_queue)
    dead.detach(dead_queue)


async def test_a_stateless_answer_is_sent_as_json_only_when_it_came_alone() -> None:
    # The reader took a progress notification; the answer then waited in the queue, which
    # room for another client emptied: the notification went back as the JSON answer.
    backlogs = Backlogs(limit=2 << 20)
    exchange = Exchange(b"{}", False, backlogs)
    hog = new_stream(backlogs, "hog")
    _, hog_queue = hog.open()
    sent: list[Event] = []

    async def record(message: Event) -> None:
        sent.append(message)

    with exchange.messages:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(modern_respond, record, exchange, 15)
            await anyio.wait_all_tasks_blocked()  # the reader waits for the first message
            exchange.send_nowait(b'{"jsonrpc":"2.0","method":"notifications/progress"}')
            exchange.reply_nowait(b"x" * (3 << 19), [1])  # the answer waits in the queue
            hog.push(MEGABYTE)  # room is made: the exchange's queue holds the most
    assert sent[0]["status"] == 200
    assert (b"content-type", b"application/json") not in sent[0]["headers"]
    hog.detach(hog_queue)


async def test_what_queues_left_by_their_readers_hold_is_let_go_as_new_ones_come() -> None:
    # Clients that went away mid-answer left 180 MB counted, kept until a push went past
    # the total, however many responses came meanwhile.
    backlogs = Backlogs(limit=8 << 20)
    gone, new = new_stream(backlogs, "gone"), new_stream(backlogs, "new")
    _, receive = gone.open()
    gone.push(MEGABYTE * 5)
    receive.close()  # the client went away without reading
    assert backlogs.held == 5 << 20
    _, receive = new.open()  # a new response: what the other held is let go
    assert backlogs.held == 0
    new.detach(receive)


async def test_a_relay_leaves_what_its_client_has_not_room_for_in_the_queue() -> None:
    # It took the next message and made its chunk, then waited for the socket to drain:
    # a chunk outside every count for each client that reads nothing (300 resumes of a
    # stream of 4 MB events held 1.6 GB).
    send_items, items = anyio.create_memory_object_stream[bytes](10)
    written: list[bytes] = []

    async def send(message: Event) -> None:
        if written:  # as uvicorn: the socket is full, so every send waits for it to drain
            await anyio.sleep_forever()
        if message["body"]:  # uvicorn writes nothing for an empty chunk
            written.append(message["body"])

    with send_items, items:
        for frame in (b"1", b"2", b"3"):
            send_items.send_nowait(frame)
        with anyio.move_on_after(0.2):
            await relay_sse(send, items, bytes, keepalive=60)
        assert written == [b"1"]
        assert waiting(items) == 2  # counted by their backlog still
