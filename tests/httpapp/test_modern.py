"""Streamable HTTP for 2026-07-28: stateless POSTs beside handshake sessions on /mcp."""

import base64
import json
import logging
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client import Client
from mcp.client.subscriptions import ResourceUpdated

from httpapp.mcphttp import (
    JSON,
    LATEST,
    Served,
    call,
    parse_sse,
    read_lines_until,
    request,
    serving,
)
from mcpkit import Context, Server
from mcpkit.session import before_initialize
from mcpkit_everything.server import build_server

MODERN = "2026-07-28"
WATCHED = "test://watched-resource"


def stateless(
    request_id: int, method: str, params: JSON | None = None, capabilities: JSON | None = None
) -> JSON:
    """A request of the stateless era: its `_meta` says all the server may know."""
    meta: JSON = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcpkit-http-tests", "version": "0"},
    }
    return request(request_id, method, {**(params or {}), "_meta": meta})


def standard_headers(message: JSON, **extra: str) -> dict[str, str]:
    """The headers a conforming client sends with `message` (SEP-2243)."""
    headers = {"mcp_protocol_version": MODERN, "mcp_method": message["method"]}
    name = message["params"].get("name", message["params"].get("uri"))
    if name is not None:
        headers["mcp_name"] = name
    return {**headers, **extra}


async def send(served: Served, message: JSON, **extra: str) -> httpx.Response:
    """POST a stateless-era message with its standard headers (overridden by `extra`)."""
    served.version = MODERN
    return await served.post(message, **standard_headers(message, **extra))


def listen_request(request_id: int) -> JSON:
    """A `subscriptions/listen` for updates of mcp-everything's watched resource."""
    notifications = {"resourceSubscriptions": [WATCHED]}
    return stateless(request_id, "subscriptions/listen", {"notifications": notifications})


def error_of(response: httpx.Response) -> tuple[int, int]:
    """The HTTP status and JSON-RPC error code of a refusal."""
    return response.status_code, response.json()["error"]["code"]


async def test_discover_is_stateless_json_and_ignores_session_ids(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        response = await send(served, stateless(1, "server/discover"), mcp_session_id="abc")
        [answer] = served.messages(response)
    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers
    assert answer["result"]["resultType"] == "complete"
    assert MODERN in answer["result"]["supportedVersions"]


async def test_headers_must_match_the_body(tmp_path: Path) -> None:
    listing = stateless(1, "tools/list")
    echo = stateless(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    async with serving(tmp_path) as served:
        wrong_method = await send(served, listing, mcp_method="prompts/list")
        no_method = await served.post(listing, mcp_protocol_version=MODERN)
        wrong_version = await send(served, listing, mcp_protocol_version="2025-11-25")
        no_name = await served.post(echo, mcp_protocol_version=MODERN, mcp_method="tools/call")
        matching = await send(served, echo)
    for refused in (wrong_method, no_method, wrong_version, no_name):
        assert error_of(refused) == (400, -32020)
    assert matching.status_code == 200
    assert matching.json()["result"]["content"][0]["text"] == "hi"


async def test_mcp_param_headers_are_checked_and_base64_decoded(tmp_path: Path) -> None:
    def region_call(region: str) -> JSON:
        return stateless(
            1, "tools/call", {"name": "test_header_param", "arguments": {"region": region}}
        )

    encoded = "=?base64?" + base64.b64encode("Zürich".encode()).decode() + "?="
    async with serving(tmp_path) as served:
        plain = await send(served, region_call("eu"), mcp_param_region="eu")
        decoded = await send(served, region_call("Zürich"), mcp_param_region=encoded)
        missing = await send(served, region_call("eu"))
        different = await send(served, region_call("eu"), mcp_param_region="us")
        bad_base64 = await send(served, region_call("Hello"), mcp_param_region="=?base64?SGVsbG8?=")
    assert plain.json()["result"]["content"][0]["text"] == "region=eu query="
    assert decoded.json()["result"]["content"][0]["text"] == "region=Zürich query="
    for refused in (missing, different, bad_base64):
        assert error_of(refused) == (400, -32020)


async def test_mcp_param_header_is_sent_exactly_when_its_argument_has_a_value(
    tmp_path: Path,
) -> None:
    def header_call(arguments: JSON) -> JSON:
        return stateless(1, "tools/call", {"name": "test_header_param", "arguments": arguments})

    encoded_eu = "=?base64?" + base64.b64encode(b"eu").decode() + "?="
    async with serving(tmp_path) as served:
        absent = await send(served, header_call({"query": "q"}), mcp_param_region="eu")
        absent_encoded = await send(served, header_call({}), mcp_param_region=encoded_eu)
        null = await send(served, header_call({"region": None}))
        null_with_header = await send(served, header_call({"region": None}), mcp_param_region="")
    for refused in (absent, absent_encoded, null_with_header):
        assert error_of(refused) == (400, -32020)
    # No header is expected for a null argument: the call runs, and the tool refuses the null.
    assert null.status_code == 200
    assert null.json()["result"]["isError"] is True


def nested_header_server(tmp: Path) -> Server:
    """A server whose one tool mirrors an argument nested in an object (`where.region`)."""
    app = Server("nested-header", "0")
    region = {"type": "string", "x-mcp-header": "Region"}
    where = {"type": "object", "properties": {"region": region}}
    schema: JSON = {"type": "object", "properties": {"where": where}, "required": ["where"]}

    @app.tool(input_schema=schema)
    async def locate(where: dict[str, str]) -> str:
        """Say the region, nested in `where`."""
        return where.get("region", "nowhere")

    return app


async def test_mcp_param_headers_of_nested_arguments_are_checked(tmp_path: Path) -> None:
    def locate(where: JSON) -> JSON:
        return stateless(1, "tools/call", {"name": "locate", "arguments": {"where": where}})

    async with serving(tmp_path, nested_header_server) as served:
        matching = await send(served, locate({"region": "eu"}), mcp_param_region="eu")
        missing = await send(served, locate({"region": "eu"}))
        different = await send(served, locate({"region": "eu"}), mcp_param_region="us")
        absent = await send(served, locate({}), mcp_param_region="eu")
        none = await send(served, locate({}))
    assert matching.json()["result"]["content"][0]["text"] == "eu"
    for refused in (missing, different, absent):
        assert error_of(refused) == (400, -32020)
    assert none.json()["result"]["content"][0]["text"] == "nowhere"


async def test_meta_version_capability_and_method_errors(tmp_path: Path) -> None:
    unsupported = stateless(1, "tools/list")
    unsupported["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
    no_capabilities = stateless(2, "tools/list")
    del no_capabilities["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    no_version = stateless(5, "tools/list")
    del no_version["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
    async with serving(tmp_path) as served:
        version = await send(served, unsupported, mcp_protocol_version="2099-01-01")
        meta = await send(served, no_capabilities)
        unversioned = await send(served, no_version)  # the header alone says 2026-07-28
        method = await send(served, stateless(3, "nothing/here"))
        capability = await send(
            served, stateless(4, "tools/call", {"name": "test_missing_capability"})
        )
    assert error_of(version) == (400, -32022)
    assert MODERN in version.json()["error"]["data"]["supported"]
    assert error_of(meta) == (400, -32602)
    assert error_of(unversioned) == (400, -32602)  # refused as stdio refuses it
    assert unversioned.json()["error"]["message"] == before_initialize("tools/list").message
    assert error_of(method) == (404, -32601)
    assert error_of(capability) == (400, -32021)


async def test_progress_streams_as_sse_without_event_ids(tmp_path: Path) -> None:
    arguments = {"duration": 0.05, "steps": 2}
    message = call(1, "long_running_operation", arguments)
    message["params"]["_meta"] = {
        **stateless(1, "tools/call")["params"]["_meta"],
        "progressToken": "p",
    }
    async with serving(tmp_path) as served:
        response = await send(served, message)
        messages = served.messages(response)
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    assert all(event.id is None for event in parse_sse(response.text))
    assert [m.get("method") for m in messages] == [
        "notifications/progress",
        "notifications/progress",
        None,
    ]
    assert messages[-1]["result"]["resultType"] == "complete"


def cancellable_server(started: anyio.Event, cancelled: anyio.Event) -> Server:
    """A server whose one tool reports progress, then waits until it is cancelled."""
    app = Server("cancellable", "0")

    @app.tool()
    async def wait_forever(ctx: Context) -> str:
        """Report progress once, then wait until cancelled."""
        await ctx.progress(1, None, "waiting")
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    return app


async def test_closing_the_sse_response_cancels_the_request(tmp_path: Path) -> None:
    started, cancelled = anyio.Event(), anyio.Event()
    message = stateless(1, "tools/call", {"name": "wait_forever", "arguments": {}})
    message["params"]["_meta"]["progressToken"] = "p"
    async with serving(tmp_path, lambda _: cancellable_server(started, cancelled)) as served:
        headers = served.headers(**standard_headers(message))
        async with served.http.stream("POST", served.url, json=message, headers=headers) as sse:
            assert sse.headers["content-type"] == "text/event-stream"
            with anyio.fail_after(5):
                await started.wait()
        with anyio.fail_after(5):
            await cancelled.wait()


async def test_get_and_delete_of_a_modern_client_are_405(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        get = await served.http.get(
            served.url, headers={"accept": "text/event-stream", "mcp-protocol-version": MODERN}
        )
        delete = await served.http.delete(served.url, headers={"mcp-protocol-version": MODERN})
        legacy = await served.http.get(served.url, headers={"accept": "text/event-stream"})
    assert get.status_code == 405
    assert delete.status_code == 405
    assert legacy.status_code == 400  # a handshake-era client without its session id


async def test_a_session_and_stateless_requests_share_the_endpoint(tmp_path: Path) -> None:
    async with serving(tmp_path, lambda tmp: build_server(tmp / "watched.txt")) as served:
        session = await served.initialize()
        echo: Any = {"name": "echo", "arguments": {"text": "modern"}}
        modern, legacy = await _both(
            send(served, stateless(7, "tools/call", echo)),
            served.post(call(8, "echo", {"text": "legacy"}), session, mcp_protocol_version=LATEST),
        )
    assert modern.json()["result"]["content"][0]["text"] == "modern"
    assert modern.json()["result"]["resultType"] == "complete"
    assert legacy.json()["result"]["content"][0]["text"] == "legacy"
    assert "resultType" not in legacy.json()["result"]


async def _both(first: Any, second: Any) -> tuple[httpx.Response, httpx.Response]:
    results: dict[int, httpx.Response] = {}

    async def run(index: int, pending: Any) -> None:
        results[index] = await pending

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(run, 0, first)
        task_group.start_soon(run, 1, second)
    return results[0], results[1]


async def test_listen_is_an_sse_stream_even_in_json_response_mode(tmp_path: Path) -> None:
    message = listen_request(1)
    async with serving(tmp_path, json_response=True) as served:
        served.version = MODERN
        headers = served.headers(**standard_headers(message))
        with anyio.fail_after(5):  # before the fix, the listen was never answered at all
            async with served.http.stream("POST", served.url, json=message, headers=headers) as sse:
                kind = sse.headers["content-type"]
                *_, data = await read_lines_until(sse.aiter_lines(), "data:")
        json_only = await send(served, listen_request(2), accept="application/json")
    acknowledged = json.loads(data.removeprefix("data:"))
    served.validate(acknowledged)
    assert kind == "text/event-stream"
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert acknowledged["params"]["notifications"] == {"resourceSubscriptions": [WATCHED]}
    assert json_only.status_code == 406  # a stream it cannot take: refused, not left silent


async def test_a_quiet_listen_stream_sends_keepalive_comments(tmp_path: Path) -> None:
    message = listen_request(1)
    async with serving(tmp_path, keepalive=0.05) as served:
        headers = served.headers(**standard_headers(message))
        async with served.http.stream("POST", served.url, json=message, headers=headers) as sse:
            lines = sse.aiter_lines()
            await read_lines_until(lines, "data:")  # the acknowledgement
            quiet = await read_lines_until(lines, ":")
            again = await read_lines_until(lines, ":")
    assert quiet == ["", ": keep-alive"]  # the acknowledgement's blank line, then a comment
    assert again == ["", ": keep-alive"]


async def test_the_official_client_reads_past_keepalive_comments(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcp")
    async with (
        serving(tmp_path, keepalive=0.02) as served,
        Client(served.url, cache=None) as client,
        client.listen(resource_subscriptions=[WATCHED]) as subscription,
    ):
        assert client.protocol_version == MODERN
        await anyio.sleep(0.2)  # keep-alive comments arrive on the quiet stream
        await client.call_tool("update_watched_resource", {"text": "changed"})
        with anyio.fail_after(5):
            event = await anext(aiter(subscription))
    assert event == ResourceUpdated(uri=WATCHED)
    assert not caplog.records
