"""A server's lifespan over real transports: entered when it starts serving, left when it stops.

mcp-everything's lifespan makes a temporary directory for test://watched-resource: it must
exist while the server serves, over stdio and HTTP, and be gone once the process has ended,
whether stdin closed or SIGTERM came. A one-line `app.run()` serves a server of its own.
"""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from e2e.harness import EVERYTHING, LATEST
from e2e.http_wire import HttpServer

LIMIT = 10.0  # seconds any wait below may take


def initialize(request_id: int = 1) -> bytes:
    params = {
        "protocolVersion": LATEST,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
    return json.dumps(message).encode() + b"\n"


def scratch_directories(tmpdir: Path) -> list[Path]:
    return sorted(tmpdir.glob("mcp-everything-*"))


def wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + LIMIT
    while not check():
        assert time.monotonic() < deadline, f"not within {LIMIT} s: {what}"
        time.sleep(0.02)


def test_stdio_enters_the_lifespan_and_leaves_it_when_stdin_closes(tmp_path: Path) -> None:
    with subprocess.Popen(
        [EVERYTHING],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(initialize())
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        assert answer["result"]["protocolVersion"] == LATEST
        [scratch] = scratch_directories(tmp_path)
        assert (scratch / "watched-resource.txt").read_text() == "initial content\n"
        process.stdin.close()
        assert process.wait(LIMIT) == 0
    assert scratch_directories(tmp_path) == []


def test_http_enters_the_lifespan_and_leaves_it_on_sigterm(tmp_path: Path) -> None:
    server = HttpServer(tmp_path, "http+sse")
    try:
        wait_for(lambda: len(scratch_directories(server.tmpdir)) == 1, "the lifespan entered")
    finally:
        server.stop()
    assert server.exit_status == 0
    assert scratch_directories(server.tmpdir) == []


def test_a_one_line_main_serves_a_server(tmp_path: Path) -> None:
    script = tmp_path / "hello.py"
    script.write_text(
        textwrap.dedent(
            '''
            from mcpkit import Server

            app = Server("hello", "1.0")

            @app.tool()
            async def hello(name: str) -> str:
                """Greet someone."""
                return f"Hello, {name}!"

            app.run()
            '''
        )
    )
    params = {"name": "hello", "arguments": {"name": "Ada"}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    requests = initialize() + json.dumps(initialized).encode() + b"\n"
    requests += json.dumps(call).encode() + b"\n"
    done = subprocess.run(
        [sys.executable, str(script)],
        input=requests,
        capture_output=True,
        timeout=LIMIT,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]
