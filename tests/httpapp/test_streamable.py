"""Streamable HTTP on /mcp: each status code and header rule of the transport."""

import json
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client

from httpapp.mcphttp import (
    Served,
    SseEvent,
    call,
    notification,
    parse_sse,
    read_lines_until,
    request,
    serving,
)
from mcpkit.connection import Connection
from mcpkit.session import before_initialize
from mcpkit.transports import FrameTooLarge


async def test_initialize_answers_json_with_a_secure_session_id(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        first = await served.initialize()
        second = await served.initialize()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", first)  # 256 bits, URL-safe
    assert first != second


async def test_a_session_that_fails_ends_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    receive = Connection._receive  # pyright: ignore[reportPrivateUsage]

    def failing(self: Connection, frame: bytes | FrameTooLarge) -> None:
        if isinstance(frame, bytes) and b"boom" in frame:
            raise RuntimeError("a bug in the core")
        receive(self, frame)

    monkeypatch.setattr(Connection, "_receive", failing)
    async with serving(tmp_path) as served:
        victim = await served.initialize()
        attacker = await served.initialize()
        await served.post(request(1, "boom"), attacker)
        [answer] = served.messages(await served.post(request(2, "tools/list"), victim))
        assert "tools" in answer["result"]
        assert await served.initialize()  # and new sessions start
    assert "failed and has ended" in caplog.text


async def test_a_lone_answer_is_json_and_notifications_get_202(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        response = await served.post(request(1, "tools/list"), session)
        assert response.headers["content-type"] == "application/json"
        [answer] = served.messages(response)
        assert answer["id"] == 1
        assert any(tool["name"] == "echo" for tool in answer["result"]["tools"])
        accepted = await served.post(notification("notifications/roots/list_changed"), session)
        assert (accepted.status_code, accepted.content) == (202, b"")


async def test_a_cancelled_request_gets_a_stream_that_ends_without_an_answer(
    tmp_path: Path,
) -> None:
    # A POST of a request is answered with JSON or SSE, never 202 (which is for the rest).
    async with serving(tmp_path) as served:
        session = await served.initialize()
        answered: list[httpx.Response] = []

        async def call_slowly() -> None:
            slow = call(5, "long_running_operation", {"duration": 30, "steps": 1})
            answered.append(await served.post(slow, session))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(call_slowly)
                while not answered:  # until the call is under way and taken back
                    cancel = notification("notifications/cancelled", {"requestId": 5})
                    await served.post(cancel, session)
                    await anyio.sleep(0.05)
    (response,) = answered
    assert (response.status_code, response.headers["content-type"]) == (200, "text/event-stream")
    assert served.messages(response) == []


async def _call_with_progress(served: Served, session: str) -> httpx.Response:
    """POST a call (id 2) that reports progress twice: its answer comes as SSE."""
    arguments = {"duration": 0.05, "steps": 2}
    return await served.post(
        call(2, "long_running_operation", arguments, progressToken="p"), session
    )


async def test_progress_opens_an_sse_stream_primed_for_resumption(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        response = await _call_with_progress(served, session)
    assert response.headers["content-type"] == "text/event-stream"
    events = parse_sse(response.text)
    assert events[0].data == ""
    assert events[0].id is not None
    assert events[0].retry is not None
    messages = served.messages(response)
    assert [message.get("method") for message in messages] == [
        "notifications/progress",
        "notifications/progress",
        None,
    ]
    assert messages[-1]["id"] == 2
    ids = [event.id for event in events]
    assert len(set(ids)) == len(ids)


async def test_a_stream_delivered_whole_is_not_kept(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        response = await _call_with_progress(served, session)
        priming = parse_sse(response.text)[0]
        assert priming.id is not None
        assert len(served.messages(response)) == 3  # two progress reports and the answer
        resume = {
            **served.headers(session),
            "accept": "text/event-stream",
            "last-event-id": priming.id,
        }
        resumed = await served.http.get(served.url, headers=resume)
    # Every event reached the client: nothing is left to replay, nor held for it.
    assert resumed.status_code == 200
    assert served.messages(resumed) == []


async def test_no_priming_event_before_2025_11_25(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize("2025-06-18")
        arguments = {"duration": 0.01, "steps": 1}
        response = await served.post(
            call(2, "long_running_operation", arguments, progressToken="p"), session
        )
    assert all(event.data for event in parse_sse(response.text))
    assert len(served.messages(response)) == 2


async def test_accept_must_list_json_and_sse(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        for accept in ("application/json", "text/event-stream", "text/html"):
            response = await served.post(request(1, "ping"), accept=accept)
            assert response.status_code == 406, accept
            assert response.json()["error"]["code"] == -32600


async def test_content_type_must_be_json(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        response = await served.post(request(1, "ping"), content_type="text/plain")
    assert response.status_code == 415


async def test_unparsable_and_invalid_bodies_are_400(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        garbage = await served.post(b"{not json", session)
        empty_batch = await served.post([], session)
        not_jsonrpc = await served.post({"jsonrpc": "1.0", "id": 1, "method": "ping"}, session)
    assert (garbage.status_code, garbage.json()["error"]["code"]) == (400, -32700)
    assert garbage.json()["id"] is None
    assert (empty_batch.status_code, empty_batch.json()["error"]["code"]) == (400, -32600)
    assert (not_jsonrpc.status_code, not_jsonrpc.json()["error"]["code"]) == (400, -32600)


async def test_an_oversized_body_is_413(tmp_path: Path) -> None:
    async with serving(tmp_path, max_body=1000) as served:
        session = await served.initialize()
        response = await served.post(call(1, "echo", {"text": "x" * 2000}), session)
        fits = await served.post(call(2, "echo", {"text": "x" * 500}), session)
    assert response.status_code == 413
    assert fits.status_code == 200


async def test_session_id_is_required_and_must_be_known(tmp_path: Path) -> None:
    """Without a session or 2026-07-28 `_meta`, a request is refused as stdio refuses it."""
    async with serving(tmp_path) as served:
        missing = await served.post(request(1, "tools/list"))
        in_batch = await served.post([request(2, "tools/list"), request(3, "ping")])
        ping = await served.post(request(4, "ping"))
        unknown = await served.post(request(1, "tools/list"), "no-such-session")
    assert missing.status_code == 400
    assert (missing.json()["id"], missing.json()["error"]["code"]) == (1, -32602)
    message = missing.json()["error"]["message"]
    assert message.startswith(before_initialize("tools/list").message)
    assert "Mcp-Session-Id" in message
    assert (in_batch.status_code, in_batch.json()["error"]["code"]) == (400, -32602)
    assert in_batch.json()["id"] is None  # no one request of the batch
    assert (ping.status_code, ping.json()["error"]["code"]) == (400, -32600)
    assert "Mcp-Session-Id" in ping.json()["error"]["message"]
    assert unknown.status_code == 404


async def test_delete_ends_the_session(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        deleted = await served.http.delete(served.url, headers=served.headers(session))
        after = await served.post(request(1, "ping"), session)
        again = await served.http.delete(served.url, headers=served.headers(session))
    assert deleted.status_code == 204
    assert after.status_code == 404
    assert again.status_code == 404


async def test_protocol_version_header(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        unsupported = await served.post(
            request(1, "ping"), session, mcp_protocol_version="1999-01-01"
        )
        other = await served.post(request(3, "ping"), session, mcp_protocol_version="2024-11-05")
        headers = served.headers(session)
        del headers["mcp-protocol-version"]  # absent: taken as 2025-03-26, still served
        absent = await served.http.post(served.url, json=request(2, "ping"), headers=headers)
    assert unsupported.status_code == 400
    assert "1999-01-01" in unsupported.json()["error"]["message"]
    # Not the session's, but served: the official conformance suite sends 2025-03-26 in a
    # 2025-11-25 session, and takes a refusal as a failure.
    assert other.status_code == 200
    assert absent.status_code == 200


async def test_batches_only_in_a_2025_03_26_session(tmp_path: Path) -> None:
    batch = [
        request(1, "ping"),
        request(2, "tools/list"),
        notification("notifications/initialized"),
    ]
    async with serving(tmp_path) as served:
        old = await served.initialize("2025-03-26")
        answered = await served.post(batch, old)
        new = await served.initialize("2025-11-25")
        refused = await served.post(batch, new)
    assert sorted(message["id"] for message in answered.json()) == [1, 2]
    assert refused.status_code == 400
    assert "batches" in refused.json()["error"]["message"]


async def test_initialize_cannot_be_batched(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        initialize = request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        )
        response = await served.post([initialize, request(2, "ping")])
    assert response.status_code == 400


async def test_a_request_id_in_flight_is_refused(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        slow = call(7, "long_running_operation", {"duration": 0.4, "steps": 2}, progressToken=1)
        body = json.dumps(slow).encode()
        async with served.http.stream(
            "POST", served.url, content=body, headers=served.headers(session)
        ) as stream:
            chunks = stream.aiter_text()
            await _first_event(chunks)  # the call is under way
            duplicate = await served.post(request(7, "ping"), session)
            rest = [chunk async for chunk in chunks]
    assert duplicate.status_code == 400
    assert '"id":7,"result"' in "".join(rest)  # the first request was answered all the same


async def test_get_stream_carries_unrelated_messages_and_is_unique(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        get_headers = {**served.headers(session), "accept": "text/event-stream"}
        async with served.http.stream("GET", served.url, headers=get_headers) as stream:
            assert stream.headers["content-type"] == "text/event-stream"
            second = await served.http.get(served.url, headers=get_headers)
            assert second.status_code == 409
            changed = await served.post(call(3, "set_dynamic_items", {"present": True}), session)
            assert served.messages(changed)[-1]["id"] == 3  # the answer came on the POST
            seen = await _read_events(stream, until="notifications/tools/list_changed")
        methods = [event.get("method") for event in seen]
        assert "notifications/tools/list_changed" in methods
        assert all("id" not in event for event in seen)  # no answer strays onto GET
        json_only = {**served.headers(session), "accept": "application/json"}
        no_sse = await served.http.get(served.url, headers=json_only)
    assert no_sse.status_code == 406


async def test_json_response_mode_sends_progress_to_the_get_stream(tmp_path: Path) -> None:
    async with serving(tmp_path, json_response=True) as served:
        session = await served.initialize()
        get_headers = {**served.headers(session), "accept": "text/event-stream"}
        async with served.http.stream("GET", served.url, headers=get_headers) as stream:
            arguments = {"duration": 0.02, "steps": 2}
            response = await served.post(
                call(4, "long_running_operation", arguments, progressToken=9), session
            )
            assert response.headers["content-type"] == "application/json"
            seen = await _read_events(stream, until="notifications/progress", count=2)
        assert [event["params"]["progress"] for event in seen] == [1, 2]


async def test_a_quiet_get_stream_sends_keepalive_comments(tmp_path: Path) -> None:
    async with serving(tmp_path, keepalive=0.05) as served:
        session = await served.initialize()
        get_headers = {**served.headers(session), "accept": "text/event-stream"}
        async with served.http.stream("GET", served.url, headers=get_headers) as stream:
            lines = stream.aiter_lines()
            primed = await read_lines_until(lines, ":")
            again = await read_lines_until(lines, ":")
    assert primed[-2:] == ["", ": keep-alive"]  # after the priming event
    assert again == ["", ": keep-alive"]


async def test_the_official_client_reads_its_get_stream_past_keepalive_comments(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcp")
    received: list[IncomingMessage] = []

    async def record(message: IncomingMessage) -> None:
        received.append(message)

    async with (
        serving(tmp_path, keepalive=0.02) as served,
        streamable_http_client(served.url) as (read, write),
        ClientSession(read, write, message_handler=record) as session,
    ):
        await session.initialize()
        await anyio.sleep(0.5)  # the GET stream opens; keep-alive comments pass on it
        await session.call_tool("set_dynamic_items", {"present": True})
        with anyio.fail_after(5):
            while not received:  # noqa: ASYNC110 - the handler sets no event to await
                await anyio.sleep(0.02)
    assert isinstance(received[0], types.ToolListChangedNotification)
    assert not caplog.records


async def test_a_closed_stream_resumes_after_last_event_id(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        response = await served.post(call(5, "test_reconnection"), session)
        [priming] = parse_sse(response.text)  # the server ended the response mid-call
        assert priming.data == ""
        assert priming.retry is not None
        assert priming.id is not None
        await anyio.sleep(0.3)  # the answer is sent while the client is away
        resume = {
            **served.headers(session),
            "accept": "text/event-stream",
            "last-event-id": priming.id,
        }
        resumed = await served.http.get(served.url, headers=resume)
        [answer] = served.messages(resumed)
        assert answer["id"] == 5
        assert "result" in answer
        other = await served.initialize()
        foreign = {
            **served.headers(other),
            "accept": "text/event-stream",
            "last-event-id": priming.id,
        }
        async with served.http.stream("GET", served.url, headers=foreign) as stream:
            # Another session's event id resumes nothing: it opens that session's own stream.
            first = await _first_event(stream.aiter_text())
        assert first.data == ""
        assert first.id is not None
        assert not first.id.startswith(session)


async def test_stateless_mode_serves_without_sessions(tmp_path: Path) -> None:
    async with serving(tmp_path, stateless=True) as served:
        init = await served.post(
            request(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            )
        )
        assert init.status_code == 200
        assert "mcp-session-id" not in init.headers
        answered = await served.post(
            call(2, "echo", {"text": "hi"}), mcp_protocol_version="2025-11-25"
        )
        [answer] = served.messages(answered)
        sampling = await served.post(
            call(3, "test_sampling", {"prompt": "x"}), mcp_protocol_version="2025-11-25"
        )
        get = await served.http.get(served.url, headers={"accept": "text/event-stream"})
        delete = await served.http.delete(served.url)
    assert answer["result"]["content"][0]["text"] == "hi"
    assert served.messages(sampling)[0]["result"]["isError"] is True
    assert (get.status_code, delete.status_code) == (405, 405)


async def test_sessions_are_capped(tmp_path: Path) -> None:
    async with serving(tmp_path, max_sessions=2) as served:
        await served.initialize()
        await served.initialize()
        with_headers = served.headers()
        third = await served.http.post(
            served.url,
            json=request(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            ),
            headers=with_headers,
        )
    assert third.status_code == 503


async def test_a_refused_initialize_holds_no_session(tmp_path: Path) -> None:
    async with serving(tmp_path, max_sessions=2) as served:
        bad_params: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": 5,  # not an object
            "clientInfo": {},
        }
        for refused in [request(1, "initialize", bad_params), notification("initialize")]:
            for _ in range(3):
                response = await served.http.post(
                    served.url, json=refused, headers=served.headers()
                )
                assert response.status_code in (200, 202), response.text
        assert await served.initialize()  # the slots are still free
        assert await served.initialize()


async def test_idle_sessions_expire(tmp_path: Path) -> None:
    async with serving(tmp_path, session_idle_timeout=0.2) as served:
        session = await served.initialize()
        with anyio.fail_after(5):
            while len(served.app.sessions):  # noqa: ASYNC110 - expiry has no event to await
                await anyio.sleep(0.05)
        response = await served.post(request(1, "ping"), session)
    assert response.status_code == 404


async def test_other_paths_and_methods(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        elsewhere = await served.http.post(f"{served.base}/other", json=request(1, "ping"))
        put = await served.http.put(served.url, json=request(1, "ping"))
    assert elsewhere.status_code == 404
    assert put.status_code == 405
    assert put.headers["allow"] == "POST, GET, DELETE"


async def _read_events(
    stream: httpx.Response, *, until: str, count: int = 1
) -> list[dict[str, Any]]:
    """Read SSE messages from `stream` until `count` of method `until` arrived (bounded)."""
    seen: list[dict[str, Any]] = []
    buffer = ""
    with anyio.fail_after(5):
        async for chunk in stream.aiter_text():
            buffer += chunk
            *complete, buffer = buffer.split("\n\n")
            for event in parse_sse("\n\n".join(complete)):
                if event.data:
                    seen.append(json.loads(event.data))
            if sum(message.get("method") == until for message in seen) >= count:
                return [message for message in seen if message.get("method") == until]
    raise AssertionError(f"the stream ended before {until}: {seen}")


async def _first_event(chunks: AsyncIterator[str]) -> SseEvent:
    with anyio.fail_after(5):
        buffer = ""
        async for chunk in chunks:
            buffer += chunk
            if "\n\n" in buffer:
                return parse_sse(buffer.split("\n\n")[0] + "\n\n")[0]
    raise AssertionError("the stream ended without an event")
