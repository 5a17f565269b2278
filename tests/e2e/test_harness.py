"""The checks the e2e fixture runs can fail: proof on hand-made records."""

import json
from pathlib import Path
from typing import Any

from e2e.harness import JSON, Everything, WireRecord


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


def test_everything_reports_servers_with_problems(tmp_path: Path) -> None:
    launcher = Everything(tmp_path)
    assert launcher.problems() == ["the test started no server: nothing was checked"]
    request, response = initialize("2024-11-05")
    listing: JSON = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{**TOOL, "icons": []}]}}
    launcher.servers.append((record([request, LIST_TOOLS], [response, listing]), tmp_path / "x"))
    launcher.servers.append((WireRecord(), tmp_path / "y"))
    problems = launcher.problems()
    assert any("server 1" in p and "icons" in p for p in problems)
    assert any("server 2: recorded no server message" in p for p in problems)
