"""The deprecated HTTP+SSE transport (2024-11-05): /sse opens a session, /messages feeds it."""

import json
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from httpapp.mcphttp import SseEvent, parse_sse, read_lines_until, request, serving
from mcpkit import Server
from mcpkit.http.backlog import QUEUE_BYTES, Backlogs
from mcpkit.http.legacy import LegacySession
from mcpkit.runtime import Runtime


async def test_a_session_over_sse(tmp_path: Path) -> None:
    async with serving(tmp_path, streamable=False, legacy_sse=True) as served:
        served.version = "2024-11-05"
        headers = {"accept": "text/event-stream"}
        async with served.http.stream("GET", f"{served.base}/sse", headers=headers) as stream:
            events = _events(stream.aiter_lines())
            with anyio.fail_after(5):
                endpoint = await anext(events)
                assert endpoint.event == "endpoint"
                assert endpoint.data.startswith("/messages?session_id=")
                url = f"{served.base}{endpoint.data}"
                init = request(
                    1,
                    "initialize",
                    {
                        "protocolVersion": "2024-11-05",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"},
                    },
                )
                served.requests[1] = "initialize"
                posted = await served.http.post(url, json=init)
                assert (posted.status_code, posted.text) == (202, "Accepted")
                answer = await anext(events)
                assert answer.event == "message"
                message = json.loads(answer.data)
                served.validate(message)
                assert message["result"]["protocolVersion"] == "2024-11-05"
                served.requests[2] = "tools/list"
                await served.http.post(url, json=request(2, "tools/list"))
                tools = json.loads((await anext(events)).data)
                served.validate(tools)
                assert tools["id"] == 2
        # The session ended with its stream.
        with anyio.fail_after(5):
            while len(served.app.sessions):  # noqa: ASYNC110 - the server notices the disconnect
                await anyio.sleep(0.02)
        gone = await served.http.post(url, json=request(3, "ping"))
    assert gone.status_code == 404


async def test_a_quiet_sse_stream_sends_keepalive_comments(tmp_path: Path) -> None:
    async with serving(tmp_path, streamable=False, legacy_sse=True, keepalive=0.05) as served:
        headers = {"accept": "text/event-stream"}
        async with served.http.stream("GET", f"{served.base}/sse", headers=headers) as stream:
            lines = stream.aiter_lines()
            opened = await read_lines_until(lines, ":")
    assert opened[0] == "event: endpoint"
    assert opened[-2:] == ["", ": keep-alive"]


async def test_message_endpoint_errors(tmp_path: Path) -> None:
    async with serving(tmp_path, legacy_sse=True) as served:
        no_session = await served.http.post(f"{served.base}/messages", json=request(1, "ping"))
        unknown = await served.http.post(
            f"{served.base}/messages?session_id=nope", json=request(1, "ping")
        )
        get = await served.http.get(f"{served.base}/messages")
        post_sse = await served.http.post(f"{served.base}/sse")
        no_accept = await served.http.get(f"{served.base}/sse", headers={"accept": "text/html"})
    assert no_session.status_code == 400
    assert unknown.status_code == 404
    assert (get.status_code, post_sse.status_code) == (405, 405)
    assert no_accept.status_code == 406


async def test_a_streamable_session_id_is_not_a_legacy_one(tmp_path: Path) -> None:
    async with serving(tmp_path, legacy_sse=True) as served:
        session = await served.initialize()
        crossed = await served.http.post(
            f"{served.base}/messages?session_id={session}", json=request(1, "ping")
        )
    assert crossed.status_code == 404


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    """Parse SSE events from a stream of lines."""
    block: list[str] = []
    async for line in lines:
        if line:
            block.append(line)
        elif block:
            yield parse_sse("\n".join(block) + "\n\n")[0]
            block = []


async def test_a_client_that_does_not_read_its_stream_loses_the_session_past_queue_bytes() -> None:
    # 300 answers carrying a 3 MB request id each, never read, had taken 942 MiB.
    async with Runtime(Server("queue", "1")) as runtime:
        backlogs = Backlogs()
        session = LegacySession(runtime, None, backlogs)
        frame = b"x" * (1 << 20)
        session.send_nowait(b"y" * (QUEUE_BYTES + 1))  # one larger message may wait alone
        session.event(await session.outbound.receive())
        for _ in range(QUEUE_BYTES >> 20):
            session.send_nowait(frame)
        session.send_nowait(frame)  # one too many: the session ends after what it holds
        with session.outbound:
            kept = [item async for item in session.outbound]
        await session.run()  # the session has ended: it closes what it holds, and returns
    assert len(kept) == QUEUE_BYTES >> 20
