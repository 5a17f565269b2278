"""The shared command line: environment values are checked exactly as flags are.

Each environment variable must be refused as its flag is (status 2, the valid choices
named), and accepted in any case.
"""

import argparse
import json
import subprocess
import sys

import pytest

from mcpkit import Server, cli
from mcpkit.http.asgi import Request
from mcpkit.http.guard import OriginGuard


def parse(*argv: str) -> argparse.Namespace:
    return cli.parse(argparse.ArgumentParser(prog="mcp-test"), list(argv))


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        parse(*argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("variable", "value", "attribute", "expected"),
    [
        ("MCPKIT_TRANSPORT", "HTTP", "transport", "http"),
        ("MCPKIT_TRANSPORT", "Http+SSE", "transport", "http+sse"),
        ("MCPKIT_LOG_LEVEL", "DEBUG", "log_level", "debug"),
        ("MCPKIT_STATELESS", "YES", "stateless", True),
        ("MCPKIT_STATELESS", "off", "stateless", False),
        ("MCPKIT_JSON_RESPONSE", "True", "json_response", True),
    ],
)
def test_any_case_of_a_valid_environment_value_is_accepted(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, attribute: str, expected: object
) -> None:
    monkeypatch.setenv(variable, value)
    assert getattr(parse(), attribute) == expected


def test_an_http_transport_from_the_environment_serves_streamable_http(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # MCPKIT_TRANSPORT=HTTP used to give a server with no endpoint, answering 503 to all.
    monkeypatch.setenv("MCPKIT_TRANSPORT", "HTTP")
    config = parse().http_config
    assert config is not None
    assert config.streamable


def test_flags_take_any_case_too() -> None:
    args = parse("--log-level", "DEBUG", "--transport", "STDIO")
    assert (args.log_level, args.transport) == ("debug", "stdio")


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("MCPKIT_LOG_LEVEL", "verbose", "debug, info, warning, error, critical"),
        ("MCPKIT_TRANSPORT", "websocket", "stdio, http, sse, http+sse"),
        ("MCPKIT_STATELESS", "maybe", "1, true, yes, on"),
        ("MCPKIT_JSON_RESPONSE", "2", "1, true, yes, on"),
        ("MCPKIT_PORT", "http", "0 to 65535"),
        ("MCPKIT_MAX_BODY", "-1", "positive"),
        ("MCPKIT_STATE_KEY", "short", "at least 32 bytes"),
    ],
)
def test_a_bad_environment_value_exits_2_naming_the_valid_ones(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    named: str,
) -> None:
    monkeypatch.setenv(variable, value)
    message = refused(capsys)
    assert named in message
    assert "Traceback" not in message


def test_a_bad_flag_value_is_refused_the_same_way(capsys: pytest.CaptureFixture[str]) -> None:
    message = refused(capsys, "--log-level", "verbose")
    assert "debug, info, warning, error, critical" in message
    assert "from MCPKIT_LOG_LEVEL" not in message  # it came from the command line


def test_the_terminal_hint_shows_the_configuration_itself() -> None:
    hint = cli.terminal_hint(Server("demo", "1.0"), '{"mcpServers": {"demo": {}}}')
    assert '{"mcpServers": {"demo": {}}}' in hint
    assert "{config_hint}" not in hint


def test_a_misdirected_host_is_told_which_flag_allows_it() -> None:
    response = OriginGuard("127.0.0.1", 8000, [], []).refuse(request("evil.example:8000"))
    assert response is not None
    assert response.status == 421
    assert b"--allowed-host evil.example:8000" in response.body


def request(host: str) -> Request:
    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b""}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"host", host.encode())],
    }
    return Request(scope, receive)


NOISY_SERVER = """
import subprocess
import sys
from mcpkit import Server, cli

app = Server("noisy", "1")

@app.tool()
async def noisy() -> str:
    '''Write to stdout, and run a child that reads its stdin and writes to its stdout.'''
    print("a stray print")
    subprocess.run([sys.executable, "-c", "import sys; print('child:', repr(sys.stdin.read()))"])
    return "done"

cli.main(app, argv=[])
"""


def test_stray_output_of_a_handler_or_its_children_never_reaches_the_protocol() -> None:
    # A print in a handler, or a child process, wrote lines that are not JSON on the
    # protocol's stream; a child reading its stdin took the client's messages.
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "noisy"}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    ]
    done = subprocess.run(
        [sys.executable, "-c", NOISY_SERVER],
        input="".join(json.dumps(message) + "\n" for message in messages),
        capture_output=True,
        text=True,
        timeout=60,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]  # every line is JSON
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id) == [1, 2, 3]
    assert by_id[2]["result"]["content"][0]["text"] == "done"
    assert "a stray print" in done.stderr
    assert "child: ''" in done.stderr  # its stdin held nothing of the client's


def test_a_server_on_stdio_loads_no_http_stack() -> None:
    # Every start pays for what it imports: the HTTP stack was a twentieth of one.
    probe = (
        "import argparse, sys\n"
        "from mcpkit import cli\n"
        "for argv in ([], ['--transport', 'http']):\n"
        "    args = cli.parse(argparse.ArgumentParser(), argv)\n"
        "    print(args.http_config is None, 'mcpkit.http.auth' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, check=True, text=True, timeout=60
    )
    assert result.stdout.split("\n")[:2] == ["True False", "False True"]
