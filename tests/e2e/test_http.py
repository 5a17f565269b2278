"""What only the HTTP transports have: their modes, their streams, and stopping with clients on.

The scenarios shared with stdio (versions, client features, notifications) run over HTTP
from their own modules; these are the HTTP-specific ones, through the same SDK client.
"""

from collections.abc import Generator
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from e2e.harness import Everything, over, text_of, wait_until
from e2e.http_wire import HttpRecord, HttpServer, HttpTransport
from e2e.test_client_features import sampler
from e2e.test_notifications import IGNORE_SUBSCRIBE_DEPRECATION, subscribe_and_update


@pytest.fixture
def own_server(tmp_path: Path) -> Generator[HttpServer]:
    """A server of the test's own (both transports), for a test that stops it."""
    server = HttpServer(tmp_path, "http+sse")
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
