"""What a hostile HTTP client sends: each is a 4xx or a closed connection, never a 500.

An audit's findings: a batch of 80,000 pings held the whole server for seconds; a response
POSTed in the 2026-07-28 era, a tool named by a list, or a forged Last-Event-ID raised
inside the server (a 500, and a traceback logged for each); heads trickled on 20,000
connections took every descriptor; bodies stopped short of their length were held for ever.
"""

import contextlib
import json
import re
import socket
import time
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from e2e.harness import wait_until
from httpapp.mcphttp import Served, parse_sse, request, serving
from httpapp.test_modern import send, stateless
from mcpkit import running
from mcpkit.http import asgi, protocol
from mcpkit.http.posted import MAX_BATCH
from mcpkit.http.sessions import CROWDED_IDLE, SessionTable


async def test_a_batch_holds_at_most_max_batch_messages(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize("2025-03-26")
        full = await served.post([request(n, "ping") for n in range(MAX_BATCH)], session)
        over = await served.post([request(n, "ping") for n in range(MAX_BATCH + 1)], session)
    assert full.status_code == 200
    assert len(full.json()) == MAX_BATCH
    assert over.status_code == 400
    assert over.json()["error"]["code"] == -32600
    assert f"at most {MAX_BATCH} messages" in over.json()["error"]["message"]


async def test_a_response_posted_in_the_stateless_era_is_a_bad_request(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        served.version = "2026-07-28"
        answered = await served.post(
            {"jsonrpc": "2.0", "id": 1, "result": {}}, mcp_protocol_version="2026-07-28"
        )
    assert answered.status_code == 400
    assert answered.json()["error"]["code"] == -32600


@pytest.mark.parametrize("name", [[], {}, 7])
async def test_a_tool_named_by_anything_but_a_string_is_an_error(
    tmp_path: Path, name: object
) -> None:
    message = stateless(1, "tools/call", {"name": name, "arguments": {}})
    async with serving(tmp_path) as served:
        answered = await send(served, message, mcp_name="x")
    assert answered.status_code in (200, 400)
    assert answered.json()["error"]["code"] in (-32600, -32602, -32020)


@pytest.mark.parametrize("sequence", ["²", "9" * 5000])
async def test_a_forged_last_event_id_resumes_nothing(tmp_path: Path, sequence: str) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        plain = {**served.headers(session), "accept": "text/event-stream"}
        headers = [(name.encode(), value.encode()) for name, value in plain.items()]
        headers.append((b"last-event-id", f"{session}.0/{sequence}".encode("latin-1")))
        with anyio.fail_after(5):
            async with served.http.stream("GET", served.url, headers=headers) as stream:
                status = stream.status_code
                first = ""
                async for chunk in stream.aiter_text():  # its own stream, from the start
                    first += chunk
                    if "\n\n" in first:
                        break
    assert status == 200
    assert parse_sse(first.split("\n\n")[0] + "\n\n")[0].data == ""


def raw_connection(served: Served, receive_buffer: int | None = None) -> socket.socket:
    """A plain TCP connection to the server, with reads that give up after 3 s.

    `receive_buffer` sets its socket's buffer: the least the system allows, for a client
    that should not take much in without reading.
    """
    host, port = served.base.removeprefix("http://").split(":")
    connection = socket.socket()
    connection.settimeout(3)
    if receive_buffer is not None:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    connection.connect((host, int(port)))
    return connection


def post_head(served: Served, session: str, length: int) -> bytes:
    """The head of a POST to /mcp in `session`, its body of `length` bytes."""
    head = "".join(f"{name}: {value}\r\n" for name, value in served.headers(session).items())
    host = served.base.removeprefix("http://")
    return f"POST /mcp HTTP/1.1\r\nHost: {host}\r\n{head}Content-Length: {length}\r\n\r\n".encode()


def progress_call(number: int, *, token_bytes: int, steps: int) -> bytes:
    """The body of a one-second tools/call with `steps` progress tokens of `token_bytes`."""
    call = {"name": "long_running_operation", "arguments": {"duration": 1, "steps": steps}}
    params = {**call, "_meta": {"progressToken": "t" * token_bytes}}
    return json.dumps(request(number, "tools/call", params)).encode()


def cut_off(connection: socket.socket) -> bool:
    """Read all the server sends; return whether it ended the connection (else it kept it)."""
    try:
        while connection.recv(1 << 20):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:  # the answer ended, the connection kept
        return False
    return True


def largest_send_buffer() -> int:
    """Bytes a TCP socket of this system may hold unsent at most (`tcp_wmem`'s largest)."""
    return int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])


def cut_off_after_answer(connection: socket.socket) -> bytes:
    """Read until the server closes `connection`; return all it sent (fails if it keeps it)."""
    data = b""
    while chunk := connection.recv(4096):  # a TimeoutError if it is kept open
        data += chunk
    return data


def whole_answer(connection: socket.socket) -> bytes:
    """Read one HTTP answer: its head, then the body its content-length announces."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := connection.recv(4096)):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
    while length is not None and len(body) < int(length[1]) and (chunk := connection.recv(4096)):
        body += chunk
    return head + b"\r\n\r\n" + body


async def closed_by_server(connection: socket.socket) -> bool:
    """Whether the server closes `connection` (it reads the end) within 3 s."""
    try:
        return await anyio.to_thread.run_sync(connection.recv, 1024) == b""
    except TimeoutError:
        return False


async def test_a_head_sent_too_slowly_closes_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(protocol, "HEAD_SECONDS", 0.5)
    async with serving(tmp_path) as served:
        with raw_connection(served) as silent, raw_connection(served) as trickling:
            trickling.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")
            closed = [await closed_by_server(silent), await closed_by_server(trickling)]
        answered = await served.post(request(1, "ping"), await served.initialize())
    assert closed == [True, True]
    assert answered.status_code == 200  # a client that sends its head in time is served


async def test_past_the_most_connections_a_new_one_takes_the_place_of_the_idlest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new connection was closed at once: a client holding every slot with heads it never
    # finished (reconnecting as they were closed) locked every other client out.
    monkeypatch.setattr(protocol, "MAX_CONNECTIONS", 2)
    async with serving(tmp_path) as served:
        session = await served.initialize()  # its connection is idlest when the next comes
        head = "".join(f"{name}: {value}\r\n" for name, value in served.headers(session).items())
        host = served.base.removeprefix("http://")
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        ping = f"POST /mcp HTTP/1.1\r\nHost: {host}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
        with raw_connection(served) as answered, raw_connection(served) as trickling:
            trickling.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")
            await anyio.sleep(0.1)
            answered.sendall(ping.encode() + body)  # older, but idle only since its answer
            answer = await anyio.to_thread.run_sync(whole_answer, answered)
            with raw_connection(served) as newest:
                closed = [await closed_by_server(c) for c in (trickling, answered, newest)]
    assert answer.startswith(b"HTTP/1.1 200")
    assert closed == [True, False, False]


async def test_past_the_most_connections_in_requests_a_new_one_is_closed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(protocol, "MAX_CONNECTIONS", 2)
    async with serving(tmp_path) as served:
        head = post_head(served, await served.initialize(), 100)
        held = [raw_connection(served) for _ in range(2)]  # the first client's idle one goes
        for connection in held:
            connection.sendall(head)  # in a request: its body is awaited
        await anyio.sleep(0.1)
        with raw_connection(served) as extra:
            closed = await closed_by_server(extra)
        for connection in held:
            connection.close()
    assert closed


async def test_a_client_that_sends_far_ahead_of_its_answers_is_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each answer awaited let uvicorn read 64 KiB more: pipelined pings piled up 1.3 GB.
    monkeypatch.setattr(protocol, "AHEAD_BYTES", 64 * 1024)
    async with serving(tmp_path) as served:
        session = await served.initialize()
        head = "".join(f"{name}: {value}\r\n" for name, value in served.headers(session).items())
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        host = served.base.removeprefix("http://")
        one = f"POST /mcp HTTP/1.1\r\nHost: {host}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
        count = (1 << 20) // len(one)
        with raw_connection(served) as connection:

            def pipeline() -> bytes:
                received = b""
                with contextlib.suppress(OSError):  # reset, or no end within 3 s
                    connection.sendall((one.encode() + body) * count)
                    while chunk := connection.recv(1 << 16):
                        received += chunk
                return received

            received = await anyio.to_thread.run_sync(pipeline)
        answered = await served.post(request(2, "ping"), session)
    assert received.count(b"HTTP/1.1 200") < count / 2
    assert answered.status_code == 200


async def test_a_client_that_leaves_what_it_is_sent_unread_is_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its connection kept the answer being written, and the request it answers, for ever:
    # 150 connections that read nothing held 1.8 GB.
    monkeypatch.setattr(protocol, "WRITE_STALL_SECONDS", 0.5)
    async with serving(tmp_path) as served:
        session = await served.initialize()
        body = progress_call(1, token_bytes=1 << 20, steps=40)  # more than a socket holds
        with raw_connection(served) as silent:
            silent.sendall(post_head(served, session, len(body)) + body)
            await anyio.sleep(3)  # reading nothing meanwhile
            ended = await anyio.to_thread.run_sync(cut_off, silent)
        answered = await served.post(request(2, "ping"), session)
    assert ended
    assert answered.status_code == 200


async def test_clients_that_read_nothing_hold_a_bounded_total_unsent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Until cut off after 60 s, each kept a message unsent, and another made to be sent
    # next: 900 that resumed a stored stream of 4 MB events, reading nothing, held 5.3 GB.
    monkeypatch.setattr(protocol, "UNSENT_BYTES", 1 << 20)
    # Each notification more than the system's socket may take in: the rest waits unsent.
    token_bytes = largest_send_buffer() + (1 << 20)
    async with serving(tmp_path, max_body=token_bytes + 1000) as served:
        session = await served.initialize()
        before = len(served.connections)
        with contextlib.ExitStack() as stack:
            silent = [stack.enter_context(raw_connection(served, 4096)) for _ in range(3)]
            for n, connection in enumerate(silent):
                body = progress_call(n, token_bytes=token_bytes, steps=5)
                sent = post_head(served, session, len(body)) + body
                await anyio.to_thread.run_sync(connection.sendall, sent)  # as the server reads
            # Reading nothing until the server has closed them (a fixed 3 s was too short on
            # a busy machine); what it had written still comes, then the end.
            await wait_until(
                lambda: len(served.connections) <= before, timeout=30, what="the cut-offs"
            )
            ended = [await anyio.to_thread.run_sync(cut_off, each) for each in silent]
        answered = await served.post(request(99, "ping"), session)
    assert all(ended)  # each held more than the total alone
    assert answered.status_code == 200


async def test_a_body_that_stops_short_is_a_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(asgi, "BODY_SECONDS", 0.5)
    async with serving(tmp_path) as served:
        session = await served.initialize()
        with raw_connection(served) as connection:
            connection.sendall(post_head(served, session, 100) + b'{"jsonrpc"')  # 10 of 100
            answer = await anyio.to_thread.run_sync(connection.recv, 4096)
    assert answer.startswith(b"HTTP/1.1 408")


async def test_bodies_stopped_short_on_many_connections_hold_a_bounded_total(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hundred connections each sending all but the last byte of a 4 MiB body held 410 MB
    # until the body timeout, and the server takes a thousand connections. Small bodies
    # came through meanwhile: seventeen stalled uploads had every POST refused.
    monkeypatch.setattr(asgi, "BODIES_BYTES", 1000)
    monkeypatch.setattr(asgi, "OWN_BYTES", 100)
    async with serving(tmp_path, max_body=1000) as served:
        session = await served.initialize()
        head = "".join(f"{name}: {value}\r\n" for name, value in served.headers(session).items())
        host = served.base.removeprefix("http://")
        start = f"POST /mcp HTTP/1.1\r\nHost: {host}\r\n{head}Content-Length: 1000\r\n\r\n"
        with raw_connection(served) as first, raw_connection(served) as second:
            first.sendall(start.encode() + b" " * 999)  # held for its last byte: 899 counted
            await anyio.sleep(0.3)
            second.sendall(start.encode() + b" " * 700)  # 600 more: past 1,000, refused
            answer = await anyio.to_thread.run_sync(whole_answer, second)
            meanwhile = await served.post(request(2, "ping"), session)  # under 100 bytes
        # Both gone, their bytes are free: a whole body arrives.
        long_ping = {**request(3, "ping"), "params": {"_meta": {"padding": "x" * 800}}}
        pinged = await served.post(long_ping, session)
    assert answer.startswith(b"HTTP/1.1 503")
    assert b"request bodies" in answer
    assert meanwhile.status_code == 200
    assert pinged.status_code == 200


class Idle:
    """A session as the table sees it, last active `seconds` ago."""

    def __init__(self, seconds: float, attached: int = 0, principal: str | None = None) -> None:
        self.id = f"idle-{seconds}-{attached}-{principal}"
        self.principal = principal
        self.last_active = time.monotonic() - seconds
        self.attached = attached
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_a_full_table_makes_room_by_closing_the_session_idle_longest() -> None:
    # 1,000 initializes, never used again, kept every new client out for 30 minutes.
    table = SessionTable(max_sessions=3, idle_timeout=1800)
    listening, recent, idlest = Idle(600, attached=1), Idle(1), Idle(CROWDED_IDLE + 5)
    for session in (listening, recent, idlest):
        table.add(session)
    assert table.has_room(None)
    assert idlest.closed
    assert not listening.closed  # a session with a response open is never closed for room
    table.add(Idle(2))
    assert not table.has_room(None)  # none idle long enough: the new client waits
    assert len(table) == 3


def test_in_a_full_table_a_principal_holding_more_sessions_makes_room_for_another() -> None:
    # One client held every session of the table, each pinged in time: every other client
    # was refused, and its sessions were closed to make room for the hoarder's.
    table = SessionTable(max_sessions=4, idle_timeout=1800)
    hoarded = [Idle(seconds, principal="hoarder") for seconds in (3, 2, 1)]
    victim = Idle(CROWDED_IDLE + 5, principal="victim")
    for session in (*hoarded, victim):
        table.add(session)
    assert not table.has_room("hoarder")  # its own idle ones are recent: it waits
    assert table.has_room("newcomer")
    assert [session.closed for session in (*hoarded, victim)] == [True, False, False, False]


async def test_a_call_whose_client_left_holds_its_session_no_longer(tmp_path: Path) -> None:
    # Twenty clients each left a ten-minute call at once: counted as attached while the
    # answer was awaited, their sessions could neither expire nor make room for ten minutes.
    async with serving(tmp_path) as served:
        session_id = await served.initialize()
        session = served.app.sessions.get(session_id, None)
        assert session is not None
        call = request(
            1, "tools/call", {"name": "long_running_operation", "arguments": {"duration": 600}}
        )
        with anyio.move_on_after(0.5):  # the client gives up: its connection closes
            await served.post(call, session_id)
        with anyio.fail_after(5):
            while session.attached:  # noqa: ASYNC110 - the server notices the disconnect
                await anyio.sleep(0.02)
        # The session still answers.
        pinged = await served.post(request(2, "ping"), session_id)
        assert pinged.status_code == 200


EMPTY_LISTS: list[object] = [[] for _ in range(2_000)]


@pytest.mark.parametrize(
    ("bound", "value", "padding"),
    [
        ("MAX_REQUESTS", 3, ""),
        ("MAX_BYTES", 10_000, "x" * 20_000),
        # 6 kB sent, weighed as parsed: forty 4 MiB requests of `[],` held 6.6 GB.
        ("MAX_BYTES", 100_000, EMPTY_LISTS),
    ],
)
async def test_calls_left_running_by_their_clients_are_bounded_for_the_whole_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: str, value: int, padding: object
) -> None:
    # A client that leaves does not cancel its calls: seven sessions of a hundred calls of
    # 4 MB each held 2.7 GB, one session's bound notwithstanding.
    monkeypatch.setattr(running, bound, value)
    params = {
        "name": "long_running_operation",
        "arguments": {"duration": 600},
        "_meta": {"padding": padding},
    }
    echo = {"name": "echo", "arguments": {"text": "hi"}}
    async with serving(tmp_path) as served:
        for number in range(3):
            session = await served.initialize()
            with anyio.move_on_after(0.3):  # the client gives up; the call runs on
                await served.post(request(number, "tools/call", params), session)
        other = await served.initialize()
        refused = await served.post(request(9, "tools/call", echo), other)
        pinged = await served.post(request(10, "ping"), other)
    assert refused.json()["error"]["code"] == -32600
    assert "the server runs" in refused.json()["error"]["message"]
    assert pinged.status_code == 200


async def test_a_body_framed_both_by_length_and_by_chunks_is_refused_and_the_connection_closed(
    tmp_path: Path,
) -> None:
    # It was read as chunked and the connection kept: behind a proxy that reads the length,
    # what follows the chunks in the body would be a request of its own (request smuggling).
    async with serving(tmp_path) as served:
        session = await served.initialize()
        ping = json.dumps(request(1, "ping")).encode()
        chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(ping), ping)
        head = post_head(served, session, len(chunked)).replace(
            b"\r\n\r\n", b"\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        with raw_connection(served) as connection:
            connection.sendall(head + chunked + b"GET /mcp HTTP/1.1\r\n\r\n")
            answered = await anyio.to_thread.run_sync(cut_off_after_answer, connection)
    assert answered.startswith(b"HTTP/1.1 400")
    assert b"Content-Length and Transfer-Encoding" in answered


@pytest.mark.parametrize(("path", "length"), [("/nope", 1000), ("/mcp", 1 << 30)])
async def test_an_answer_given_before_the_body_is_read_closes_the_connection(
    tmp_path: Path, path: str, length: int
) -> None:
    # Refused before its body was read (an unknown path, a body over the limit), the
    # connection was kept: the rest of the body was read and dropped for as long as the
    # client trickled it, a byte a second on every connection the server may hold.
    async with serving(tmp_path) as served:
        session = await served.initialize()
        head = post_head(served, session, length).replace(b"/mcp", path.encode(), 1)
        with raw_connection(served) as connection:
            connection.sendall(head + b'{"jsonrpc"')
            answered = await anyio.to_thread.run_sync(cut_off_after_answer, connection)
        pinged = await served.post(request(1, "ping"), session)
    assert re.match(rb"HTTP/1.1 4\d\d", answered)
    assert pinged.status_code == 200
