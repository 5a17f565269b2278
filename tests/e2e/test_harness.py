"""The checks the e2e fixture runs can fail: proof on hand-made records, stdio and HTTP."""

import json
from pathlib import Path
from typing import Any

from e2e.harness import JSON, Everything, StdioChannel, StdioTransport, WireRecord
from e2e.http_wire import Exchange, HttpRecord


def lines(*messages: Any) -> bytearray:
    return bytearray(b"".join(json.dumps(m).encode() + b"\n" for m in messages))


def initialize(version: str) -> tuple[JSON, JSON]:
    request: JSON = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "0"},
        },
    }
    response: JSON = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "0"},
        },
    }
    return request, response


def record(client: list[Any], server: list[Any]) -> WireRecord:
    return WireRecord(to_server=lines(*client), from_server=lines(*server))


LIST_TOOLS: JSON = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
TOOL: JSON = {"name": "t", "inputSchema": {"type": "object"}}


def test_a_valid_record_has_no_problems() -> None:
    request, response = initialize("2024-11-05")
    listing: JSON = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [TOOL]}}
    assert record([request, LIST_TOOLS], [response, listing]).problems() == []


def test_a_field_the_version_lacks_is_a_problem() -> None:
    request, response = initialize("2024-11-05")
    listing: JSON = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{**TOOL, "title": "T"}]}}
    (problem,) = record([request, LIST_TOOLS], [response, listing]).problems()
    assert "title" in problem


def test_a_response_is_validated_against_its_request_method() -> None:
    request, response = initialize("2025-11-25")
    not_a_listing: JSON = {"jsonrpc": "2.0", "id": 1, "result": {"resources": []}}
    assert record([request, LIST_TOOLS], [response, not_a_listing]).problems()


def test_unanswerable_and_duplicate_responses_are_problems() -> None:
    request, response = initialize("2025-11-25")
    stray: JSON = {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert "never sent" in record([request], [response, stray]).problems()[0]
    listing: JSON = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    problems = record([request, LIST_TOOLS], [response, listing, listing]).problems()
    assert "second response" in problems[0]


def test_a_line_that_is_not_json_is_a_problem() -> None:
    request, response = initialize("2025-11-25")
    broken = record([request], [response])
    broken.from_server += b"hello from print()\n"
    assert "not JSON" in broken.problems()[0]


def test_everything_reports_connections_with_problems(tmp_path: Path) -> None:
    launcher = Everything(StdioTransport(tmp_path))
    assert launcher.problems() == ["the test made no connection: nothing was checked"]
    request, response = initialize("2024-11-05")
    listing: JSON = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{**TOOL, "icons": []}]}}
    wrong = record([request, LIST_TOOLS], [response, listing])
    launcher.channels.append(StdioChannel(wrong, tmp_path / "x"))
    (tmp_path / "y").write_text("Traceback (most recent call last):\n")
    failed = WireRecord(returncode=1, shutdown_seconds=3)
    launcher.channels.append(StdioChannel(failed, tmp_path / "y"))
    problems = launcher.problems()
    assert any("connection 1" in p and "icons" in p for p in problems)
    assert "connection 2: recorded no server message" in problems
    assert any(p.startswith("connection 2: a traceback on stderr") for p in problems)
    assert "connection 2: took 3.00 s to exit after stdin closed" in problems
    assert "connection 2: exit status 1, not 0" in problems


def http_record(client: list[Any], bodies: list[tuple[str, list[bytes]]]) -> HttpRecord:
    """A record of one POST per client message, answered by `bodies` (content type, chunks)."""
    http = HttpRecord()
    for message, (content_type, chunks) in zip(client, bodies, strict=True):
        exchange = Exchange("POST", "/mcp", json.dumps(message).encode(), 200, content_type)
        http.exchanges.append(exchange)
        for chunk in chunks:
            http.add_chunk(exchange, chunk)
        http.end_body(exchange)
    return http


def sse(*messages: Any) -> bytes:
    return b"".join(b"data: " + json.dumps(m).encode() + b"\n\n" for m in messages)


def test_http_messages_are_read_from_json_and_sse_bodies() -> None:
    request, response = initialize("2025-11-25")
    listing: JSON = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [TOOL]}}
    log: JSON = {"jsonrpc": "2.0", "method": "notifications/message"}
    log["params"] = {"level": "info", "data": "hi"}
    stream = b"id: s/0\nretry: 1000\ndata:\n\n" + sse(log, listing)  # a priming event first
    chunks = [stream[:10], stream[10:50], stream[50:]]  # events cut anywhere
    http = http_record(
        [request, LIST_TOOLS],
        [("application/json", [json.dumps(response).encode()]), ("text/event-stream", chunks)],
    )
    assert http.server_messages() == [response, log, listing]
    assert http.client_messages() == [request, LIST_TOOLS]
    assert http.carriers("notifications/message") == ["POST"]
    assert http.problems() == []


def test_http_checks_are_the_shared_ones() -> None:
    request, response = initialize("2024-11-05")
    listing: JSON = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{**TOOL, "title": "T"}]}}
    answers = [("application/json", [json.dumps(response).encode()])]
    answers.append(("text/event-stream", [sse(listing, listing)]))
    http = http_record([request, LIST_TOOLS], answers)
    problems = http.problems()
    assert any("title" in p for p in problems)
    assert any("second response" in p for p in problems)


def test_http_bodies_that_are_not_messages_are_problems() -> None:
    request, response = initialize("2025-11-25")
    odd = sse(response) + b"event: surprise\ndata: x\n\n" + b'data: {"jsonrpc"'
    problems = http_record([request], [("text/event-stream", [odd])]).problems()
    assert any("'surprise'" in p for p in problems)
    assert any("ends mid-event" in p for p in problems)
    broken = http_record([request], [("text/event-stream", [b"data: hello\n\n"])])
    assert "not JSON" in broken.problems()[0]
    silent = http_record([request], [("text/event-stream", [b"id: s/0\ndata:\n\n"])])
    assert silent.problems() == ["recorded no server message"]
