"""The stdio lifecycle and JSON-RPC edge cases, in raw bytes (no SDK).

Each test runs mcp-everything as a subprocess with pipes. Every message read back is validated
against the official schema of the session's version as it arrives, and when the test ends the
whole of stdout must be newline-delimited JSON and the process must have exited with status 0.
"""

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from e2e.fs_helpers import MCP_FS
from e2e.harness import (
    EVERYTHING,
    LATEST,
    MODERN,
    VERSION_KEY,
    VERSIONS,
    RequestId,
)
from e2e.raw_stdio import RawServer


def error_code(message: dict[str, Any]) -> int:
    assert "error" in message, f"expected an error: {message}"
    code = message["error"]["code"]
    assert isinstance(code, int)
    return code


async def test_request_before_initialize_is_refused(server: RawServer) -> None:
    """-32602: it lacks what a 2026-07-28 request carries, and came before initialize."""
    response = await server.request("tools/list")
    assert error_code(response) == -32602
    message = response["error"]["message"]
    assert '_meta["io.modelcontextprotocol/protocolVersion"]' in message
    assert "send initialize first" in message
    assert (await server.request("ping"))["result"] == {}  # ping is allowed at any time
    await server.initialize()
    assert "tools" in (await server.request("tools/list"))["result"]


async def test_second_initialize_is_refused(server: RawServer) -> None:
    await server.initialize()
    response = await server.request(
        "initialize",
        {
            "protocolVersion": LATEST,
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "0"},
        },
    )
    assert error_code(response) == -32600


# The supported versions are echoed (every SDK test checks that); any other offer gets the
# latest handshake version, including the stateless 2026-07-28, which has no initialize.
@pytest.mark.parametrize("offered", ["2099-01-01", "2026-07-28", 20250618])
async def test_unsupported_version_gets_latest(server: RawServer, offered: Any) -> None:
    result = await server.initialize(offered)
    assert result["protocolVersion"] == LATEST


async def test_parse_errors_then_keeps_serving(server: RawServer) -> None:
    await server.initialize()
    for line in [
        b"{not json",
        b'{"jsonrpc": "2.0", "id": 3, "method": "ping"',  # truncated
        b"\xff\xfe\xfd",  # not UTF-8
        b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"s": "\xc3\x28"}}',
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the parser can recurse
    ]:
        await server.send_bytes(line + b"\n")
        response = await server.receive()
        assert error_code(response) == -32700, line
        assert "id" not in response, line  # the id could not be read
        assert (await server.request("ping"))["result"] == {}


async def test_content_length_framing(server: RawServer) -> None:
    await server.initialize()
    body = json.dumps({"jsonrpc": "2.0", "id": "framed", "method": "ping"}).encode()
    server.methods["framed"] = "ping"
    await server.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert await server.receive() == {"jsonrpc": "2.0", "id": "framed", "result": {}}
    assert (await server.request("ping"))["result"] == {}  # back to newline-delimited
    # A framed body may span lines; header names are case-insensitive, others are ignored.
    echo = {"name": "echo", "arguments": {"text": "a\nb"}}
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": echo}
    body = json.dumps(message, indent=2).encode()
    server.methods[2] = "tools/call"
    headers = b"content-length: %d\r\nContent-Type: application/json\r\n\r\n" % len(body)
    await server.send_bytes(headers + body)
    response = await server.receive()
    assert response["result"]["content"] == [{"type": "text", "text": "a\nb"}]


async def test_ids_come_back_with_their_type(server: RawServer) -> None:
    await server.initialize()
    ids: list[RequestId] = ["abc", "7", "", 0, 7, -3, 2**53 - 1, -(2**53 - 1), "é ✓"]
    for request_id in ids:
        await server.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        response = await server.receive()
        assert response == {"jsonrpc": "2.0", "id": request_id, "result": {}}
        assert type(response["id"]) is type(request_id)
    for method in ("tools/list", "tools/call"):  # answered by a handler task, not at once
        await server.send(
            {"jsonrpc": "2.0", "id": "7", "method": method, "params": {"name": "echo"}}
        )
        assert (await server.receive())["id"] == "7"


async def test_invalid_requests_are_refused(server: RawServer) -> None:
    await server.initialize()
    # A lone surrogate, escaped; integers a JavaScript client would read as other numbers.
    for request_id in [None, 1.5, True, [1], {"a": 1}, "\udc00x", 2**53, -(2**53) - 7]:
        await server.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        response = await server.receive()
        assert error_code(response) == -32600, request_id
        assert "id" not in response, request_id  # the id is unusable, so it is not echoed
        assert (await server.request("ping"))["result"] == {}
    for message in [
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": 5},
        {"jsonrpc": "2.0", "id": 4, "method": "ping", "params": "not an object"},
    ]:
        await server.send(message)
        response = await server.receive()
        assert response["id"] == message["id"], message  # a readable id is echoed
        assert error_code(response) in (-32600, -32602), message
    for value in [5, "text", None]:
        await server.send(value)
        response = await server.receive()
        assert error_code(response) == -32600, value
        assert "id" not in response


async def test_a_log_level_of_the_wrong_type_is_invalid_params(server: RawServer) -> None:
    await server.initialize()
    levels: list[Any] = [[], {}, 5, None, "loud"]
    for level in levels:
        await server.send(
            {"jsonrpc": "2.0", "id": 7, "method": "logging/setLevel", "params": {"level": level}}
        )
        response = await server.receive()
        assert error_code(response) == -32602, level
        assert (await server.request("ping"))["result"] == {}


async def test_duplicate_in_flight_id_is_refused(server: RawServer) -> None:
    await server.initialize()
    long_call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "long_running_operation", "arguments": {"duration": 30, "steps": 1}},
    }
    echo = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}},
    }
    await server.send(long_call)
    await server.send(echo)
    response = await server.receive()
    assert response["id"] == 5
    assert error_code(response) == -32600
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
    await server.send(cancel)
    await server.expect_silence(0.3)  # a cancelled request gets no response
    await server.send(echo)  # the id is free again
    response = await server.receive()
    assert response["id"] == 5
    assert response["result"]["content"] == [{"type": "text", "text": "x"}]


async def test_batch_answered_with_array_in_2025_03_26(server: RawServer) -> None:
    await server.initialize("2025-03-26")
    await server.send(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {
                "jsonrpc": "2.0",
                "id": "two",
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "batched"}},
            },
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        ]
    )
    by_id = {item["id"]: item for item in await server.receive_batch()}
    assert set(by_id) == {1, "two"}
    assert by_id[1]["result"] == {}
    assert by_id["two"]["result"]["content"] == [{"type": "text", "text": "batched"}]
    await server.send([])
    assert error_code(await server.receive()) == -32600


@pytest.mark.parametrize("version", [v for v in VERSIONS if v != "2025-03-26"])
async def test_batch_refused_in_other_versions(server: RawServer, version: str) -> None:
    await server.initialize(version)
    await server.send(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
    )
    response = await server.receive()
    assert error_code(response) == -32600
    # The id of a refused batch is unknown: `null` where the schema requires an id.
    assert response["id"] is None if version < "2025-11-25" else "id" not in response
    await server.expect_silence(0.2)  # nothing in the batch was run
    assert (await server.request("ping"))["result"] == {}


async def test_notifications_are_never_answered(server: RawServer) -> None:
    await server.initialize()
    for method, params in [
        ("notifications/initialized", None),
        ("notifications/no-such-notification", {"x": 1}),
        ("notifications/cancelled", {"requestId": 12345}),
        ("notifications/cancelled", "not an object"),
        ("notifications/roots/list_changed", None),
        ("notifications/progress", {"progressToken": "t", "progress": 1}),
        ("tools/list", None),  # a request's method, but without an id: a notification
    ]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await server.send(message)
    await server.expect_silence(0.3)
    assert (await server.request("ping"))["result"] == {}


async def test_responses_are_never_answered_whatever_their_id(server: RawServer) -> None:
    # An error answered with an error: two peers doing so would answer each other forever.
    await server.initialize()
    problem = {"code": -32600, "message": "Invalid Request"}
    responses: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": None, "error": problem},
        {"jsonrpc": "2.0", "error": problem},
        {"jsonrpc": "2.0", "id": {"a": 1}, "result": {}},
        {"jsonrpc": "2.0", "result": {}},
        {"jsonrpc": "2.0", "id": 99, "result": {}},  # to no request of the server's
    ]
    for response in responses:
        await server.send(response)
    await server.expect_silence(0.3)
    assert (await server.request("ping"))["result"] == {}


async def test_a_content_length_of_thousands_of_digits_leaves_the_server_serving(
    server: RawServer,
) -> None:
    await server.initialize()
    await server.send_bytes(b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n")
    assert error_code(await server.receive()) == -32700  # the header, read as a message
    assert (await server.request("ping"))["result"] == {}


async def test_a_2026_request_in_a_batch_is_refused(server: RawServer) -> None:
    # A subscriptions/listen never ends: the batch's other answers waited for it for ever.
    await server.initialize("2025-03-26")
    meta: dict[str, Any] = {VERSION_KEY: MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    listen = {"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen"}
    await server.send(
        [{"jsonrpc": "2.0", "id": "p", "method": "ping"}, {**listen, "params": {"_meta": meta}}]
    )
    by_id = {item["id"]: item for item in await server.receive_batch()}
    assert by_id["p"]["result"] == {}
    assert error_code(by_id["l"]) == -32600


async def test_unknown_method_and_bad_params(server: RawServer) -> None:
    await server.initialize()
    assert error_code(await server.request("no/such/method")) == -32601
    assert error_code(await server.request("logging/setLevel", {"level": "loud"})) == -32602
    assert error_code(await server.request("tools/call", {"arguments": {}})) == -32602
    assert error_code(await server.request("resources/read", {"uri": 42})) == -32602
    assert error_code(await server.request("tools/list", {"cursor": "bogus"})) == -32602


async def test_invalid_progress_token_is_not_echoed(server: RawServer) -> None:
    """A progress token must be a string or an integer; anything else must not come back."""
    await server.initialize()
    for token in [{"a": 1}, True, 1.5, None]:
        params = {"name": "test_tool_with_progress", "_meta": {"progressToken": token}}
        response = await server.request("tools/call", params)  # validates the notifications
        assert "error" in response or "result" in response
    assert server.notifications == []


async def test_unusual_text_round_trips(server: RawServer) -> None:
    await server.initialize()
    for text in ["nul \u0000 and newline \n inside", "\u2028 \U0001f600", "x" * (3 << 20)]:
        response = await server.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        assert response["result"]["content"] == [{"type": "text", "text": text}]
    # A lone surrogate is not Unicode: it comes back as U+FFFD, which any client can read.
    params = {"name": "echo", "arguments": {"text": "\ud800 lone surrogate"}}
    response = await server.request("tools/call", params)
    assert response["result"]["content"] == [{"type": "text", "text": "\ufffd lone surrogate"}]


async def test_large_messages_both_ways_at_once(server: RawServer) -> None:
    """1 MB answers while 1 MB requests are still being written (pipes hold 64 KB)."""
    await server.initialize()
    texts = [chr(ord("a") + n) * (1 << 20) for n in range(4)]
    messages = [
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}},
        }
        for n, text in enumerate(texts)
    ]

    async def write_all() -> None:
        for message in messages:
            await server.send(message)

    answers: list[dict[str, Any]] = []
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(write_all)
        for _ in messages:
            answers.append(await server.receive(timeout=20))
    assert sorted(a["id"] for a in answers) == list(range(len(texts)))
    for answer in answers:
        assert answer["result"]["content"] == [{"type": "text", "text": texts[answer["id"]]}]


STDIO_LIMIT = 64 << 20
"""The largest message the stdio transport reads (mcpkit.transports.stdio._MAX_FRAME)."""


@pytest.mark.parametrize("version", ["2025-06-18", LATEST])
async def test_an_oversized_line_is_refused_with_the_id_its_start_shows(
    server: RawServer, version: str
) -> None:
    """The client gets its answer, not silence; the server discards the line and goes on.

    When the line's start does not show the id (it follows the params), the id is `null`
    where the version's schema requires one, and left out from 2025-11-25 on.
    """
    await server.initialize(version)
    params = {"name": "echo", "arguments": {"text": "a" * STDIO_LIMIT}}
    server.methods[7] = "tools/call"
    await server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    response = await server.receive(timeout=30)
    error = response.get("error", {})  # not the 64 MiB result, should a test fail
    assert (response["id"], error.get("code")) == (7, -32600)
    assert f"larger than {STDIO_LIMIT} bytes" in error["message"]
    await server.send({"jsonrpc": "2.0", "method": "tools/call", "params": params, "id": 8})
    response = await server.receive(timeout=30)
    assert response.get("error", {}).get("code") == -32600
    assert response["id"] is None if version < "2025-11-25" else "id" not in response
    assert (await server.request("ping"))["result"] == {}


async def initialize_for_sampling(server: RawServer) -> None:
    """Initialize as a client that takes sampling requests."""
    await server.request(
        "initialize",
        {
            "protocolVersion": LATEST,
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    )
    await server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def test_bad_answers_to_sampling_are_tool_errors(server: RawServer) -> None:
    await initialize_for_sampling(server)
    answers: list[tuple[dict[str, Any], str]] = [
        ({"result": {"role": "assistant"}}, "invalid"),
        ({"result": "not an object"}, "without a result object"),
        ({"error": {"code": -1, "message": "no model here"}}, "no model here"),
    ]
    for n, (answer, expected) in enumerate(answers):
        call = {"name": "test_sampling", "arguments": {"prompt": "hi"}}
        await server.send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call})
        asked = await server.receive()
        assert asked["method"] == "sampling/createMessage"
        await server.send({"jsonrpc": "2.0", "id": asked["id"], **answer})
        response = await server.receive()
        assert response["id"] == n
        assert response["result"]["isError"] is True
        assert expected in response["result"]["content"][0]["text"]


async def test_the_first_answer_to_a_server_request_stands(server: RawServer) -> None:
    # A second answer with the same id, in the same read, took the first one's place.
    await initialize_for_sampling(server)
    call = {"name": "test_sampling", "arguments": {"prompt": "hi"}}
    await server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    asked = await server.receive()
    sampled = {"role": "assistant", "content": {"type": "text", "text": "first"}, "model": "m"}
    late = {"code": -1, "message": "late duplicate"}
    answers = [
        {"jsonrpc": "2.0", "id": asked["id"], "result": sampled},
        {"jsonrpc": "2.0", "id": asked["id"], "error": late},
    ]
    await server.send_bytes(b"".join(json.dumps(answer).encode() + b"\n" for answer in answers))
    response = await server.receive()
    assert response["result"]["content"][0]["text"] == "LLM response: first"


async def test_pipelined_burst(server: RawServer) -> None:
    await server.initialize()
    burst: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": str(n)}},
        }
        if n % 2
        else {"jsonrpc": "2.0", "id": n, "method": "ping"}
        for n in range(200)
    ]
    for message in burst:
        server.methods[message["id"]] = message["method"]
    await server.send_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in burst))
    answers = [await server.receive() for _ in burst]
    assert sorted(a["id"] for a in answers) == list(range(200))
    for answer in answers:
        if answer["id"] % 2:
            assert answer["result"]["content"] == [{"type": "text", "text": str(answer["id"])}]
    await server.expect_silence(0.1)


async def test_a_thousand_answers_queued_at_once_all_leave(server: RawServer) -> None:
    # Two buffers each (the answer, its newline): more than one writev may take (IOV_MAX).
    await server.initialize()
    pings = [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(1000)]
    for ping in pings:
        server.methods[ping["id"]] = "ping"
    await server.send_bytes(b"".join(json.dumps(m).encode() + b"\n" for m in pings))
    answers = [await server.receive() for _ in pings]
    assert [a["id"] for a in answers] == list(range(1000))  # in order, none twice
    await server.expect_silence(0.1)


async def test_stdout_is_only_json_with_debug_operator_logs(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr"
    async with RawServer.start(stderr, "--log-level", "debug") as server:
        await server.initialize()
        await server.request("logging/setLevel", {"level": "debug"})
        await server.request("tools/call", {"name": "test_tool_with_logging"})
        assert len(server.notifications) == 3
        await server.request("tools/call", {"name": "test_error_handling"})
        await server.request("tools/call", {"name": "get_weather", "arguments": {"city": 1}})
        await server.send({"jsonrpc": "2.0", "id": 999, "result": {}})  # answers nothing
        await server.request("resources/read", {"uri": "test://no-such-resource"})
    # RawServer.start has parsed every byte of stdout as newline-delimited JSON.
    assert server.output.endswith(b"\n")


@pytest.mark.parametrize("command", [[str(EVERYTHING)], [MCP_FS, "."]], ids=["everything", "fs"])
def test_initialize_is_answered_without_importing_pydantic(command: list[str]) -> None:
    # Importing pydantic is some 40% of the start-up work: it waits for first use.
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "t"}},
    }
    done = subprocess.run(
        command,
        input=json.dumps(initialize).encode() + b"\n",
        capture_output=True,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},  # each import, on stderr
        timeout=30,
        check=True,
    )
    assert json.loads(done.stdout)["result"]["protocolVersion"] == LATEST
    imported = [
        line.rpartition("|")[2].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:")
    ]
    assert "anyio" in imported
    assert [name for name in imported if name.startswith("pydantic")] == []


async def test_stdin_close_exits_promptly(server: RawServer) -> None:
    await server.initialize()
    await server.close()


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time of a process so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def test_stdin_close_while_an_answer_waits_for_the_client_costs_no_cpu(
    server: RawServer,
) -> None:
    # The server waits to flush a 1 MB answer the client is not reading yet; end of input,
    # which stays readable, must not keep its event loop busy meanwhile.
    await server.initialize()
    call = {"name": "echo", "arguments": {"text": "x" * (1 << 20)}}
    await server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    await anyio.sleep(0.3)  # the answer fills the pipe
    await server.stdin.aclose()
    before = cpu_seconds(server.process.pid)
    await anyio.sleep(1)
    spent = cpu_seconds(server.process.pid) - before
    answer = await server.receive()
    assert answer["result"]["content"][0]["text"] == "x" * (1 << 20)
    assert spent < 0.2, f"{spent:.2f} s of CPU in 1 s of waiting"
    await server.wait_exit()


async def test_input_waiting_while_answers_pile_up_costs_no_cpu(server: RawServer) -> None:
    # 6 MB of answers the client does not read yet: past 4 MiB the server stops reading,
    # and the requests still coming must wait in the pipe without keeping the loop busy.
    await server.initialize()
    text = "y" * (1 << 20)
    calls = [
        {"jsonrpc": "2.0", "id": n, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"text": text}}}
        for n in range(6)
    ]  # fmt: skip

    async def write_all() -> None:
        for call in calls:
            await server.send(call)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(write_all)
        await anyio.sleep(1)  # the server has stopped reading; the writer waits
        before = cpu_seconds(server.process.pid)
        await anyio.sleep(1)
        spent = cpu_seconds(server.process.pid) - before
        answers = [await server.receive(timeout=20) for _ in calls]
        assert sorted(a["id"] for a in answers) == list(range(6))
        assert spent < 0.2, f"{spent:.2f} s of CPU in 1 s of waiting"


async def start_long_call(server: RawServer) -> None:
    await server.initialize()
    await server.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "long_running_operation", "arguments": {"duration": 30}},
        }
    )
    await server.expect_silence(0.2)


async def test_stdin_close_during_long_call_exits_promptly(server: RawServer) -> None:
    await start_long_call(server)
    await server.close()


async def subscribe_and_update(server: RawServer) -> None:
    await server.initialize()
    await server.request("resources/subscribe", {"uri": "test://watched-resource"})
    arguments = {"text": "changed"}
    await server.request("tools/call", {"name": "update_watched_resource", "arguments": arguments})
    if not server.notifications:
        assert (await server.receive())["method"] == "notifications/resources/updated"


async def test_stdin_close_with_active_subscription_exits_promptly(server: RawServer) -> None:
    await subscribe_and_update(server)
    await server.close()


async def test_sigterm_with_active_subscription_exits_promptly(server: RawServer) -> None:
    await subscribe_and_update(server)
    server.process.send_signal(signal.SIGTERM)
    await server.wait_exit()


async def test_sigterm_during_long_call_exits_promptly(server: RawServer) -> None:
    await start_long_call(server)
    server.process.send_signal(signal.SIGTERM)
    await server.wait_exit()


def rss_mib(pid: int) -> float:
    """The resident memory of a process now, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


async def test_2026_progress_waits_for_a_client_that_does_not_read(server: RawServer) -> None:
    # Each progress notification repeats the client's token. A 2026-07-28 request's did not
    # wait for the client to read (older eras' did): a 2 MB token queued 2 MB a step.
    meta: dict[str, Any] = {
        VERSION_KEY: MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "progressToken": "t" * (2 << 20),
    }
    call = {"name": "long_running_operation", "arguments": {"duration": 1, "steps": 50}}
    await server.send(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**call, "_meta": meta}}
    )
    peak = 0.0
    for _ in range(15):  # 1.5 s: the 50 steps of 20 ms would all have been queued
        await anyio.sleep(0.1)
        peak = max(peak, rss_mib(server.process.pid))
    assert peak < 100, f"{peak:.0f} MiB while the client did not read"
