"""How mcp-sqlite starts and ends as a process: bad databases, and the end of stdin.

A database the server cannot serve stops it at start, before it serves anything, over
stdio and HTTP alike: exit status 2 and one line on stderr that says why (`cli.main`'s
contract for a bad configuration), never a traceback, never a server left running.
"""

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from e2e.harness import SHUTDOWN_LIMIT
from e2e.http_wire import free_port
from e2e.sqlite.helpers import MCP_SQLITE, make_shop
from e2e.sqlite.test_budget import UNSTOPPABLE
from mcpkit.connection import END_GRACE
from mcpkit_sqlite.session import STOP_GRACE

LIMIT = 10.0
"""Seconds a server that should stop at start is given before it is killed."""
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def run_to_end(transport: str, *arguments: str) -> tuple[int | None, str]:
    """Run `mcp-sqlite ARGUMENTS` over `transport`, as a host would (stdin open, silent),
    until it exits by itself.

    Returns its exit status (None: it was still running after LIMIT s, and was killed) and
    what it wrote to stderr.
    """
    http = ["--transport", "http", "--port", str(free_port())] if transport == "http" else []
    with subprocess.Popen(
        [MCP_SQLITE, *arguments, *http],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stderr is not None
        try:
            status: int | None = process.wait(LIMIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            status = None
        return status, process.stderr.read().decode()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_missing_database_stops_the_server_at_start(tmp_path: Path, transport: str) -> None:
    missing = tmp_path / "missing.db"
    status, stderr = run_to_end(transport, f"shop={missing}", "--write")
    assert (status, stderr) == (
        2,
        f"mcp-sqlite: {missing} does not exist (--create makes a new database)\n",
    )
    assert not missing.exists()


def test_bad_command_lines_stop_the_server_at_start(tmp_path: Path) -> None:
    shop = make_shop(tmp_path / "shop.db")
    folder = tmp_path / "folder.db"
    folder.mkdir()
    cases: dict[tuple[str, ...], str] = {
        (): "name at least one database: mcp-sqlite [NAME=]PATH[:ro] ...",
        (f"a={shop}", f"a={shop}"): "two databases share a name in a, a: use NAME=PATH",
        (str(folder),): f"{folder} is not a file",
        (f"bad name={shop}",): "'bad name' is not a database name: use letters, digits, _ and -",
        (str(shop), "--timeout", "0"): "--timeout must be a positive number of seconds, not 0.0",
    }
    for arguments, reason in cases.items():
        assert run_to_end("stdio", *arguments) == (2, f"mcp-sqlite: {reason}\n"), arguments


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_file_that_is_not_a_database_stops_the_server_at_start(
    tmp_path: Path, transport: str
) -> None:
    notes = tmp_path / "notes.db"
    notes.write_text("These are notes, not a SQLite database: the header is wrong.\n" * 4)
    status, stderr = run_to_end(transport, str(notes))
    assert status is not None, f"the server kept running, serving nothing:\n{stderr}"
    assert "Traceback" not in stderr, stderr
    (line,) = stderr.splitlines()
    assert line.startswith(f"mcp-sqlite: {notes} ")
    assert "not a SQLite database" in line
    assert status == 2


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_create_where_there_is_no_folder_stops_the_server_at_start(
    tmp_path: Path, transport: str
) -> None:
    path = tmp_path / "no-such-folder" / "new.db"
    status, stderr = run_to_end(transport, str(path), "--create", "--write")
    assert "Traceback" not in stderr, stderr
    (line,) = stderr.splitlines()
    assert line.startswith("mcp-sqlite: ")
    assert str(path) in line
    assert status == 2
    assert not path.parent.exists()


def write_line(process: "subprocess.Popen[bytes]", message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def read_line(process: "subprocess.Popen[bytes]") -> dict[str, Any]:
    assert process.stdout is not None
    message: dict[str, Any] = json.loads(process.stdout.readline())
    return message


def seconds_to_exit(process: "subprocess.Popen[bytes]") -> float:
    """Close the server's stdin; return how long it takes to exit (with status 0)."""
    assert process.stdin is not None
    started = time.monotonic()
    process.stdin.close()
    assert process.wait(LIMIT) == 0
    return time.monotonic() - started


def test_the_end_of_stdin_ends_a_session_with_subscriptions_at_once(tmp_path: Path) -> None:
    shop = make_shop(tmp_path / "shop.db")
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    subscribe = {"uri": "sqlite://shop/table/items"}
    with subprocess.Popen(
        [MCP_SQLITE, str(shop)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as process:
        write_line(
            process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}
        )
        assert read_line(process)["id"] == 1
        write_line(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        write_line(
            process,
            {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": subscribe},
        )
        assert read_line(process) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        took = seconds_to_exit(process)
    assert took < SHUTDOWN_LIMIT / 2


def test_the_end_of_stdin_does_not_wait_for_an_open_listen_stream(tmp_path: Path) -> None:
    # A listen stream is never answered as a call is: it ends when the client ends it or
    # the server closes it. At the end of stdin nobody can end it any more; waiting for it
    # (the END_GRACE given to calls in flight) only delays the exit.
    shop = make_shop(tmp_path / "shop.db")
    notifications = {"resourceSubscriptions": ["sqlite://shop/table/items"]}
    listen = {
        "jsonrpc": "2.0",
        "id": "listen",
        "method": "subscriptions/listen",
        "params": {"notifications": notifications, "_meta": MODERN_META},
    }
    with subprocess.Popen(
        [MCP_SQLITE, str(shop)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as process:
        write_line(process, listen)
        acknowledged = read_line(process)
        took = seconds_to_exit(process)
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert acknowledged["params"]["notifications"] == notifications
    assert took < SHUTDOWN_LIMIT / 2, f"took {took:.2f} s to exit after stdin closed"


def test_the_end_of_stdin_does_not_wait_for_a_query_sqlite_cannot_stop(tmp_path: Path) -> None:
    # The query runs for minutes in one step that SQLite cannot interrupt; its thread would
    # hold the process for as long, after the host has gone.
    shop = make_shop(tmp_path / "shop.db")
    call = {"name": "read_query", "arguments": {"query": UNSTOPPABLE}, "_meta": MODERN_META}
    with subprocess.Popen(
        [MCP_SQLITE, str(shop)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as process:
        write_line(process, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
        time.sleep(1.0)  # it runs
        took = seconds_to_exit(process)
    assert took < END_GRACE + STOP_GRACE + 3, f"took {took:.2f} s to exit after stdin closed"
