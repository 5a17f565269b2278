"""What a hostile HTTP client sends: each is a 4xx with a JSON-RPC error, never a 500.

An audit's findings: a batch of 80,000 pings held the whole server for seconds; a response
POSTed in the 2026-07-28 era, a tool named by a list, or a forged Last-Event-ID raised
inside the server (a 500, and a traceback logged for each).
"""

from pathlib import Path

import anyio
import pytest

from httpapp.mcphttp import parse_sse, request, serving
from httpapp.test_modern import send, stateless
from mcpkit.http.posted import MAX_BATCH


async def test_a_batch_holds_at_most_max_batch_messages(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize("2025-03-26")
        full = await served.post([request(n, "ping") for n in range(MAX_BATCH)], session)
        over = await served.post([request(n, "ping") for n in range(MAX_BATCH + 1)], session)
    assert full.status_code == 200
    assert len(full.json()) == MAX_BATCH
    assert over.status_code == 400
    assert over.json()["error"]["code"] == -32600
    assert f"at most {MAX_BATCH} messages" in over.json()["error"]["message"]


async def test_a_response_posted_in_the_stateless_era_is_a_bad_request(tmp_path: Path) -> None:
    async with serving(tmp_path) as served:
        served.version = "2026-07-28"
        answered = await served.post(
            {"jsonrpc": "2.0", "id": 1, "result": {}}, mcp_protocol_version="2026-07-28"
        )
    assert answered.status_code == 400
    assert answered.json()["error"]["code"] == -32600


@pytest.mark.parametrize("name", [[], {}, 7])
async def test_a_tool_named_by_anything_but_a_string_is_an_error(
    tmp_path: Path, name: object
) -> None:
    message = stateless(1, "tools/call", {"name": name, "arguments": {}})
    async with serving(tmp_path) as served:
        answered = await send(served, message, mcp_name="x")
    assert answered.status_code in (200, 400)
    assert answered.json()["error"]["code"] in (-32600, -32602, -32020)


@pytest.mark.parametrize("sequence", ["²", "9" * 5000])
async def test_a_forged_last_event_id_resumes_nothing(tmp_path: Path, sequence: str) -> None:
    async with serving(tmp_path) as served:
        session = await served.initialize()
        plain = {**served.headers(session), "accept": "text/event-stream"}
        headers = [(name.encode(), value.encode()) for name, value in plain.items()]
        headers.append((b"last-event-id", f"{session}.0/{sequence}".encode("latin-1")))
        with anyio.fail_after(5):
            async with served.http.stream("GET", served.url, headers=headers) as stream:
                status = stream.status_code
                first = ""
                async for chunk in stream.aiter_text():  # its own stream, from the start
                    first += chunk
                    if "\n\n" in first:
                        break
    assert status == 200
    assert parse_sse(first.split("\n\n")[0] + "\n\n")[0].data == ""
