"""First contact, as a person meets a server: started by hand, on a busy port, on the network.

Each test runs mcp-everything as a process and reads what it writes to stderr: the hint a
terminal gets, one line for a port in use, the URLs and the Host names a wildcard bind
serves, and the operator logs (a start-up line by default, traces at debug, refusals with
the flag that allows them, and never a secret).
"""

import json
import os
import pty
import re
import secrets
import select
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from e2e.harness import EVERYTHING, LATEST
from e2e.http_wire import READY, HttpServer

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": LATEST,
        "capabilities": {},
        "clientInfo": {"name": "first-contact", "version": "9.8"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def piped(*arguments: str, messages: list[dict[str, Any]]) -> str:
    """Pipe an initialize and `messages` to mcp-everything; return its stderr."""
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *messages]
    done = subprocess.run(
        [EVERYTHING, *arguments],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        timeout=30,
        check=True,
    )
    return done.stderr.decode()


def test_started_in_a_terminal_it_shows_the_configuration_itself() -> None:
    controller, terminal = pty.openpty()
    with subprocess.Popen(
        [EVERYTHING], stdin=terminal, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as process:
        os.close(terminal)
        assert process.stderr is not None
        said = b""
        deadline = time.monotonic() + 10
        while b"Ctrl-D" not in said and time.monotonic() < deadline:
            if select.select([process.stderr], [], [], 0.5)[0]:
                said += os.read(process.stderr.fileno(), 4096)
        process.terminate()
        process.wait(10)
    os.close(controller)
    text = said.decode()
    assert "{config_hint}" not in text
    assert '"mcpServers"' in text
    assert '"mcp-everything"' in text


def test_a_port_in_use_is_one_line_that_says_what_to_do() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [EVERYTHING, "--transport", "http", "--port", str(port)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 1
    assert len(lines) == 1, lines
    assert f"127.0.0.1:{port} is in use" in lines[0]
    assert "--port" in lines[0]


def test_at_the_default_level_only_the_start_up_line_is_written() -> None:
    stderr = piped(messages=[call(1, "echo", {"text": "hi"})])
    assert re.fullmatch(
        r"\S+ \S+ INFO mcpkit\.start: mcp-everything \S+ on stdio; allowed: a scratch"
        r" directory of its own \(read-write\); client roots: narrow\n",
        stderr,
    )


def test_at_debug_each_request_is_traced_without_its_arguments_values() -> None:
    stderr = piped("--log-level", "debug", messages=[call(1, "echo", {"text": "s3cret"})])
    assert re.search(r"session opened by \"first-contact\" \"9\.8\" \(protocol " + LATEST, stderr)
    assert re.search(r'tools/call echo \("text"\) -> ok in [\d.]+ ms', stderr)
    assert "s3cret" not in stderr


def test_a_tool_error_and_an_unknown_tool_are_traced_as_such() -> None:
    stderr = piped(
        "--log-level",
        "debug",
        messages=[call(1, "test_error_handling", {}), call(2, "no_such_tool", {})],
    )
    assert re.search(r"tools/call test_error_handling \(\) -> tool error in", stderr)
    assert re.search(r"tools/call no_such_tool \(\) -> error -32602: ", stderr)


def said(server: HttpServer, text: str) -> str:
    """Return the server's stderr once it holds `text` (5 s at most: then as it is)."""
    deadline = time.monotonic() + 5
    while text not in server.stderr() and time.monotonic() < deadline:
        time.sleep(0.05)
    return server.stderr()


def test_a_wildcard_bind_serves_the_machines_addresses_and_says_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = secrets.token_hex(16)
    monkeypatch.setenv("MCPKIT_AUTH_TOKEN", token)  # as the README advises: not in argv
    server = HttpServer(tmp_path, "json-response", program=(str(EVERYTHING), "--host", "0.0.0.0"))
    try:
        banner = said(server, "Clients must authenticate")  # the banner's last line
        urls = re.findall(r"Streamable HTTP at (http://\S+)", banner)
        network = [url for url in urls if "127.0.0.1" not in url and "[::1]" not in url]
        assert network, banner
        assert "0.0.0.0" not in banner
        address = network[0].split("//")[1].removesuffix("/mcp")
        assert f"claude mcp add --transport http mcp-everything {network[0]}" in banner
        assert '--header "Authorization: Bearer $MCPKIT_AUTH_TOKEN"' in banner
        with httpx.Client(base_url=server.base_url, timeout=10) as client:
            own = {**HEADERS, "host": address, "authorization": f"Bearer {token}"}
            assert client.post("/mcp", json=INITIALIZE, headers=own).status_code == 200
            foreign = {**own, "host": f"evil.example:{server.port}"}
            misdirected = client.post("/mcp", json=INITIALIZE, headers=foreign)
            assert misdirected.status_code == 421
            assert f"--allowed-host evil.example:{server.port}" in misdirected.text
            wrong = {**HEADERS, "authorization": "Bearer not-the-token-123"}
            assert client.post("/mcp", json=INITIALIZE, headers=wrong).status_code == 401
            page = {**own, "origin": "https://page.example"}
            assert client.post("/mcp", json=INITIALIZE, headers=page).status_code == 403
        logged = said(server, "403; allow the page")  # written once its answer has gone
        assert f"421; allow the name with --allowed-host evil.example:{server.port}" in logged
        assert "401; the client must send a valid 'Authorization: Bearer' token" in logged
        assert "403; allow the page with --allowed-origin https://page.example" in logged
        assert 'session opened by "first-contact" "9.8"' in logged  # info: HttpServer's level
        assert token not in logged
        assert "not-the-token-123" not in logged
    finally:
        server.stop()
    assert server.problems() == []


def test_over_http_at_debug_a_tool_call_is_traced_with_its_time() -> None:
    with subprocess.Popen(
        [EVERYTHING, "--transport", "http", "--port", "0", "--log-level", "debug"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stderr is not None
        said = ""
        while (ready := READY.search(said)) is None:
            line = process.stderr.readline()
            assert line, f"the server ended before it listened:\n{said}"
            said += line
        base = f"http://127.0.0.1:{ready[1]}"
        with httpx.Client(base_url=base, timeout=10) as client:
            opened = client.post("/mcp", json=INITIALIZE, headers=HEADERS)
            session = {
                **HEADERS,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": LATEST,
            }
            arguments = {"duration": 0.2, "steps": 2}
            called = client.post(
                "/mcp", json=call(1, "long_running_operation", arguments), headers=session
            )
            assert called.status_code == 200
        process.terminate()
        said += process.stderr.read()
    assert 'session opened by "first-contact" "9.8"' in said
    traced = re.search(r"tools/call long_running_operation \(.*\) -> ok in ([\d.]+) ms", said)
    assert traced is not None, said
    assert float(traced[1]) >= 200
