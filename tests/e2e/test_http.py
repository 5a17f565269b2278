"""What only the HTTP transports have: their modes, their streams, and stopping with clients on.

The scenarios shared with stdio (versions, client features, notifications) run over HTTP
from their own modules; these are the HTTP-specific ones, through the same SDK client.
"""

from collections.abc import Generator
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from e2e.harness import (
    JSON,
    LATEST,
    TRANSPORT_VERSIONS,
    Everything,
    over,
    text_of,
    wait_until,
)
from e2e.http_wire import HttpRecord, HttpServer, HttpServers, HttpTransport, recording_client
from e2e.test_client_features import sampler
from e2e.test_notifications import IGNORE_SUBSCRIBE_DEPRECATION, subscribe_and_update


@pytest.fixture
def own_server(tmp_path: Path, request: pytest.FixtureRequest) -> Generator[HttpServer]:
    """A server of the test's own (both transports), for a test that stops it.

    Parametrized indirectly, the parameter is the port to ask for (default: a free one).
    """
    port: int | None = getattr(request, "param", None)
    server = HttpServer(tmp_path, "http+sse", port)
    try:
        yield server
    finally:
        server.stop()


@IGNORE_SUBSCRIBE_DEPRECATION
@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_sigterm_with_a_client_connected(own_server: HttpServer, transport: str) -> None:
    """SIGTERM while a client is subscribed and its SSE stream open: out at once, status 0.

    The stream is the Streamable HTTP GET stream, or the legacy /sse stream that is the
    session. `HttpServer.problems` holds the checks: status 0 within `EXIT_LIMIT` seconds, no
    traceback on stderr, the server's temporary directory removed.
    """
    everything = Everything(HttpTransport(own_server, transport))
    async with everything.connect() as conn:
        await subscribe_and_update(conn, "first")
        await anyio.to_thread.run_sync(own_server.stop)
    assert own_server.problems() == []
    assert conn.record.problems() == []


@over(transports=["http-stateless"])
async def test_stateless_sampling_fails_cleanly(everything: Everything, version: str) -> None:
    """A stateless server cannot send the client a request: the tool fails, nothing hangs."""
    seen: list[types.CreateMessageRequestParams] = []
    async with everything.connect(version, sampling_callback=sampler(seen)) as conn:
        with anyio.fail_after(5):
            result = await conn.session.call_tool("test_sampling", {"prompt": "hello"})
        with anyio.fail_after(5):
            echoed = await conn.session.call_tool("echo", {"text": "still here"})
        record = conn.record

    assert result.is_error
    assert "sampling" in text_of(result)
    assert text_of(echoed) == "still here"
    assert record.server_requests("sampling/createMessage") == []
    assert seen == []
    assert isinstance(record, HttpRecord)
    assert all("mcp-session-id" not in exchange.headers for exchange in record.exchanges)
    assert {exchange.method for exchange in record.exchanges} == {"POST"}  # no GET, no DELETE


@over(transports=["http-json"])
async def test_json_response_sends_the_rest_on_the_get_stream(
    everything: Everything, version: str
) -> None:
    """--json-response: every POST gets plain JSON; progress travels on the GET stream."""
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with everything.connect(version) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool(
                "test_tool_with_progress", {}, progress_callback=on_progress
            )
        await wait_until(lambda: len(reports) >= 3, timeout=5, what="3 progress reports")
        record = conn.record

    assert text_of(result) == "Progress test completed"
    assert isinstance(record, HttpRecord)
    assert record.carriers("notifications/progress") == ["GET"] * len(reports)
    posts = [exchange for exchange in record.exchanges if exchange.method == "POST"]
    assert {exchange.content_type for exchange in posts} <= {"application/json", ""}


@over(transports=["http"], versions=TRANSPORT_VERSIONS["http"])
async def test_reconnection(everything: Everything, version: str) -> None:
    """The server ends a call's SSE stream early (SEP-1699); the result must still arrive.

    From 2025-11-25 the stream is primed with an event id, and the SDK resumes it with a GET
    and `Last-Event-ID`; before, a client has nothing to resume from, so the stream must stay
    open until the result.
    """
    async with everything.connect(version) as conn:
        with anyio.fail_after(5):
            result = await conn.session.call_tool("test_reconnection", {})
        record = conn.record

    assert not result.is_error
    assert text_of(result).startswith("Reconnection test completed")
    assert isinstance(record, HttpRecord)
    (call,) = record.requests("tools/call")
    resumed = version >= "2025-11-25"
    assert record.carriers(answering=call["id"]) == ["GET" if resumed else "POST"]


@pytest.mark.parametrize("own_server", [0], indirect=True)
async def test_port_0_serves_the_port_it_binds(own_server: HttpServer) -> None:
    """`--port 0` lets the OS choose; the server must then serve the port it was given."""
    assert own_server.port != 0
    everything = Everything(HttpTransport(own_server, "http"))
    async with everything.connect() as conn:
        await conn.session.send_ping()
    assert everything.problems() == []


@over(transports=["http-stateless"])
async def test_stateless_offers_only_what_it_can_deliver(
    everything: Everything, version: str
) -> None:
    async with everything.connect(version) as conn:
        capabilities = conn.record.result_of("initialize")["capabilities"]
    assert "subscribe" not in capabilities["resources"]
    assert all("listChanged" not in capabilities[kind] for kind in ("tools", "resources"))
    assert "listChanged" not in capabilities["prompts"]


async def test_json_response_without_a_get_stream(http_servers: HttpServers) -> None:
    """A client need not open the GET stream; a tool that must ask it something then fails.

    Raw JSON-RPC through the recording client: the SDK always opens the GET stream.
    """
    url = f"{http_servers.transport('http-json').server.base_url}/mcp"
    record = HttpRecord()
    headers = {"accept": "application/json, text/event-stream"}
    async with recording_client(record, headers) as client:
        hello: JSON = {
            "protocolVersion": LATEST,
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        answer = await client.post(url, json=request(1, "initialize", hello))
        headers["mcp-session-id"] = answer.headers["mcp-session-id"]
        headers["mcp-protocol-version"] = LATEST
        notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await client.post(url, json=notification, headers=headers)).status_code == 202
        call = {"name": "test_sampling", "arguments": {"prompt": "hello"}}
        try:
            with anyio.fail_after(1):  # a prompt answer: the sampling request cannot be sent
                answer = await client.post(
                    url, json=request(2, "tools/call", call), headers=headers
                )
        finally:
            await client.delete(url, headers=headers)
    assert answer.json()["result"]["isError"] is True
    assert record.problems() == []


def request(request_id: int, method: str, params: JSON) -> JSON:
    """A JSON-RPC request."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
