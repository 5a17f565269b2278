"""The operator's start-up line, and what a request trace shows of a request."""

import json
import logging
import re

import anyio
import pytest

from mcpkit import Server, oplog
from mcpkit.http.asgi import ASGIApp, Event, Receive, Scope, Send
from mcpkit.http.oplog import OperatorLog
from mcpkit.places import Place


def start_lines(caplog: pytest.LogCaptureFixture, server: Server) -> list[tuple[int, str]]:
    with caplog.at_level(logging.DEBUG):  # what the handler keeps; the operator chose warning
        oplog.log_start(server, "stdio", logging.WARNING)
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "mcpkit.start"]


def test_the_start_up_line_names_server_transport_and_places(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = oplog.describe(
        Server("demo", "1.0"),
        [Place("/srv/a", "/srv/a", read_only=False, source="command line"), "/srv/b (read-only)"],
        roots="narrow",
    )
    assert start_lines(caplog, server) == [
        (
            logging.INFO,
            "demo 1.0 on stdio; allowed: /srv/a (read-write), /srv/b (read-only);"
            " client roots: narrow",
        )
    ]


@pytest.mark.parametrize("roots", [None, "ignore", "intersect"])
def test_a_configuration_that_gives_nothing_is_warned_about(
    caplog: pytest.LogCaptureFixture, roots: str | None
) -> None:
    server = oplog.describe(Server("demo", "1.0"), [], roots=roots)
    lines = start_lines(caplog, server)
    assert lines[1][0] == logging.WARNING
    assert "gives the model nothing" in lines[1][1]


@pytest.mark.parametrize("roots", ["narrow", "replace"])
def test_no_places_but_roots_warns_that_clients_without_roots_get_nothing(
    caplog: pytest.LogCaptureFixture, roots: str
) -> None:
    server = oplog.describe(Server("demo", "1.0"), [], roots=roots)
    lines = start_lines(caplog, server)
    assert lines[1][0] == logging.WARNING
    assert "a client without roots" in lines[1][1]


def test_a_server_with_places_gets_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    server = oplog.describe(Server("demo", "1.0"), ["/srv (read-only)"], roots="narrow")
    assert [level for level, _ in start_lines(caplog, server)] == [logging.INFO]


def test_a_server_that_describes_nothing_gets_a_plain_start_up_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert start_lines(caplog, Server("demo", "1.0")) == [(logging.INFO, "demo 1.0 on stdio")]


def test_a_request_label_names_the_arguments_and_shows_no_value() -> None:
    arguments = {"query": "SELECT ?", "params": ["hunter2"], "x" * 500: 1}
    message = {"method": "tools/call", "params": {"name": "read_query", "arguments": arguments}}
    label = oplog.label(message)
    assert label.startswith('tools/call read_query ("query", "params", "xxx')
    assert "hunter2" not in label
    assert "SELECT" not in label
    assert len(label) < 150


async def test_an_http_request_is_timed_from_its_arrival(caplog: pytest.LogCaptureFixture) -> None:
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow"}}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await anyio.sleep(0.05)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"isError": True}}).encode()
        await send({"type": "http.response.body", "body": body})

    async def receive() -> Event:
        return {"type": "http.request", "body": json.dumps(call).encode()}

    async def send(event: Event) -> None:
        pass

    scope: Scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
    with caplog.at_level(logging.DEBUG):
        await OperatorLog(app)(scope, receive, send)
    (line,) = [r.getMessage() for r in caplog.records if r.name == "mcpkit.requests"]
    match = re.fullmatch(r"tools/call slow \(\) -> tool error in ([\d.]+) ms", line)
    assert match is not None, line
    assert float(match[1]) >= 50


def answering(status: int, body: bytes) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": body})

    return app


async def nothing() -> Event:
    return {"type": "http.request", "body": b""}


async def ignore(event: Event) -> None:
    pass


@pytest.mark.parametrize(
    ("status", "body", "headers", "hint"),
    [
        (421, b"Misdirected", [(b"host", b"evil:1")], "--allowed-host evil:1"),
        (403, b"origin", [(b"origin", b"https://a.example")], "--allowed-origin https://a.example"),
        (403, b"insufficient_scope", [], "--oauth-scope"),
        (403, b"cross-origin requests are not allowed", [], "without an Origin header"),
        (401, b"Unauthorized", [], "--auth-token"),
        (413, b"Payload Too Large", [], "--max-body"),
        (503, b"too many sessions, try again later", [], "--max-sessions"),
        (503, b"too many request bodies are arriving", [], "slow uploads"),
    ],
)
async def test_every_refusal_is_logged_with_the_option_that_allows_it(
    caplog: pytest.LogCaptureFixture,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]],
    hint: str,
) -> None:
    scope: Scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    with caplog.at_level(logging.WARNING):
        await OperatorLog(answering(status, body))(scope, nothing, ignore)
    (line,) = [r.getMessage() for r in caplog.records if r.name == "mcpkit.http"]
    assert f": {status}; " in line
    assert hint in line


async def test_a_forged_log_line_in_the_path_is_escaped(caplog: pytest.LogCaptureFixture) -> None:
    # A page can make a browser send this path: its newline began a log line of its own.
    path = "/mcp\n2026-11-27 16:52:00,000 WARNING mcpkit.http: FORGED \x1b[31mRED\x1b[0m"
    headers = [(b"origin", b"http://evil.example\x1b[2J")]
    scope: Scope = {"type": "http", "method": "POST", "path": path, "headers": headers}
    with caplog.at_level(logging.WARNING):
        await OperatorLog(answering(403, b"origin"))(scope, nothing, ignore)
    (line,) = [r.getMessage() for r in caplog.records if r.name == "mcpkit.http"]
    assert "\n" not in line
    assert "\x1b" not in line
    assert "/mcp\\n2026-11-27" in line


async def test_an_answer_that_goes_on_a_stream_is_not_called_missing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    async def receive() -> Event:
        return {"type": "http.request", "body": json.dumps(call).encode()}

    scope: Scope = {"type": "http", "method": "POST", "path": "/messages", "headers": []}
    with caplog.at_level(logging.DEBUG):
        await OperatorLog(answering(202, b"Accepted"))(scope, receive, ignore)
    assert [r for r in caplog.records if r.name.startswith("mcpkit")] == []


async def test_a_huge_answer_is_not_kept_whole(caplog: pytest.LogCaptureFixture) -> None:
    call = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "file:///x"}}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for _ in range(40):  # 40 MiB in all
            await send({"type": "http.response.body", "body": b"x" * (1 << 20), "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> Event:
        return {"type": "http.request", "body": json.dumps(call).encode()}

    scope: Scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
    with caplog.at_level(logging.DEBUG):
        await OperatorLog(app)(scope, receive, ignore)
    (line,) = [r.getMessage() for r in caplog.records if r.name == "mcpkit.requests"]
    assert 'resources/read "file:///x" -> answered (HTTP 200), too large to trace' in line
