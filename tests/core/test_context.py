"""What handlers do through their Context: logs, progress, and requests to the client."""

from typing import Any

import anyio
import pytest

from checked import connect
from mcpkit import Context, SamplingMessage, Server, TextContent


def make_server() -> Server:
    app = Server("context", "1")

    @app.tool()
    async def chatty(ctx: Context) -> str:
        """Log at every level."""
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, {"level": level}, logger="chatty")
        return "ok"

    @app.tool()
    async def progress(ctx: Context, steps: int = 3) -> str:
        """Report progress, then try to go backwards and to stand still."""
        for step in range(1, steps + 1):
            await ctx.progress(step, steps, f"step {step}")
        await ctx.progress(1)  # dropped: progress only increases, and it never raises
        await ctx.progress(steps)
        return "done"

    @app.tool()
    async def sample(ctx: Context, prompt: str) -> str:
        """Ask the client's model."""
        message = SamplingMessage(role="user", content=TextContent(text=prompt))
        answer = await ctx.sample([message], max_tokens=10, system_prompt="be brief", timeout=1)
        assert isinstance(answer.content, TextContent)
        return f"{answer.model}: {answer.content.text}"

    @app.tool()
    async def ask(ctx: Context) -> str:
        """Ask the user."""
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit("Your name?", schema)
        return f"{answer.action} {answer.content}"

    @app.tool()
    async def visit(ctx: Context) -> str:
        """Send the user to a page."""
        answer = await ctx.elicit_url("Sign in", "https://example.com/x", "id-1")
        return answer.action

    @app.tool()
    async def roots(ctx: Context) -> str:
        """List the client's roots."""
        return ",".join(root.uri for root in await ctx.roots())

    return app


async def test_logs_honour_the_level_and_are_sent_before_the_result() -> None:
    async with connect(make_server()) as client:
        await client.call_tool("chatty")
        levels = [
            n["params"]["level"]
            for n in client.notifications
            if n["method"] == "notifications/message"
        ]
        assert levels == ["info", "warning", "error"]  # info until the client sets a level
        await client.request("logging/setLevel", {"level": "debug"})
        await client.call_tool("chatty")
        levels = [
            n["params"]["level"]
            for n in client.notifications
            if n["method"] == "notifications/message"
        ]
        assert levels[3:] == ["debug", "info", "warning", "error"]
        log = next(n for n in client.notifications if n["method"] == "notifications/message")
        assert log["params"] == {"level": "info", "data": {"level": "info"}, "logger": "chatty"}


async def test_progress_only_with_a_token_increasing_and_before_the_result() -> None:
    async with connect(make_server()) as client:
        result = await client.call_tool("progress")
        assert result["content"][0]["text"] == "done"
        assert not client.notifications  # no token, no progress
        await client.call_tool("progress", progress_token="tok")
        answer_index = next(i for i, m in enumerate(client.messages) if m.get("id") == 3)
        progress = [
            (i, m["params"])
            for i, m in enumerate(client.messages)
            if m.get("method") == "notifications/progress"
        ]
        assert [p for _, p in progress] == [
            {"progressToken": "tok", "progress": step, "total": 3, "message": f"step {step}"}
            for step in (1, 2, 3)
        ]
        assert all(i < answer_index for i, _ in progress)


async def test_progress_message_is_left_out_for_2024_11_05() -> None:
    async with connect(make_server(), protocol_version="2024-11-05") as client:
        await client.call_tool("progress", {"steps": 1}, progress_token=7)
        (note,) = [n for n in client.notifications if n["method"] == "notifications/progress"]
        assert note["params"] == {"progressToken": 7, "progress": 1, "total": 1}


async def test_sampling_goes_to_the_client() -> None:
    seen: list[dict[str, Any]] = []

    async def sampling(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m1"}

    async with connect(make_server(), handlers={"sampling/createMessage": sampling}) as client:
        result = await client.call_tool("sample", {"prompt": "hello"})
    assert result == {"content": [{"type": "text", "text": "m1: hi"}]}
    assert seen == [
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
            "maxTokens": 10,
            "systemPrompt": "be brief",
        }
    ]


async def test_client_capabilities_are_required() -> None:
    async with connect(make_server()) as client:
        for tool in ("sample", "ask", "visit", "roots"):
            result = await client.call_tool(tool, {"prompt": "x"} if tool == "sample" else {})
            assert result["isError"] is True
            assert "does not support" in result["content"][0]["text"]
        assert not [m for m in client.messages if "method" in m and "id" in m]  # no request sent


async def test_a_silent_client_times_out_and_is_told_to_cancel() -> None:
    async def never(params: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async with connect(make_server(), handlers={"sampling/createMessage": never}) as client:
        result = await client.call_tool("sample", {"prompt": "x"})
        assert result["isError"] is True
        assert "within 1 s" in result["content"][0]["text"]
        cancel = await client.wait_for_notification("notifications/cancelled")
        assert cancel["params"]["requestId"] == 1


async def test_a_client_error_or_bad_answer_is_a_tool_error() -> None:
    async def broken(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "robot"}

    async with connect(make_server(), handlers={"sampling/createMessage": broken}) as client:
        result = await client.call_tool("sample", {"prompt": "x"})
        assert result["isError"] is True
        assert "invalid sampling/createMessage answer: role" in result["content"][0]["text"]


@pytest.mark.parametrize(
    ("version", "expected_mode"), [("2025-06-18", None), ("2025-11-25", "form")]
)
async def test_elicitation_form(version: str, expected_mode: str | None) -> None:
    seen: list[dict[str, Any]] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    handlers = {"elicitation/create": elicit}
    async with connect(make_server(), protocol_version=version, handlers=handlers) as client:
        result = await client.call_tool("ask")
    assert result["content"][0]["text"] == "accept {'name': 'Ada'}"
    assert seen[0].get("mode") == expected_mode
    assert seen[0]["requestedSchema"]["properties"] == {"name": {"type": "string"}}


async def test_elicitation_needs_a_version_that_has_it() -> None:
    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("must not be asked")

    handlers = {"elicitation/create": elicit}
    async with connect(make_server(), protocol_version="2025-03-26", handlers=handlers) as client:
        result = await client.call_tool("ask")
        assert result["isError"] is True
        result = await client.call_tool("visit")
        assert result["isError"] is True


async def test_url_elicitation() -> None:
    seen: list[dict[str, Any]] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": "decline"}

    async with connect(make_server(), handlers={"elicitation/create": elicit}) as client:
        assert (await client.call_tool("visit"))["content"][0]["text"] == "decline"
    assert seen == [
        {
            "mode": "url",
            "message": "Sign in",
            "url": "https://example.com/x",
            "elicitationId": "id-1",
        }
    ]


async def test_roots_are_cached_until_the_client_says_they_changed() -> None:
    answers = [["file:///a"], ["file:///b", "file:///c"]]
    calls: list[int] = []

    async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        return {"roots": [{"uri": uri} for uri in answers[len(calls) - 1]]}

    async with connect(make_server(), handlers={"roots/list": list_roots}) as client:
        assert (await client.call_tool("roots"))["content"][0]["text"] == "file:///a"
        assert (await client.call_tool("roots"))["content"][0]["text"] == "file:///a"
        await client.notify("notifications/roots/list_changed")
        assert (await client.call_tool("roots"))["content"][0]["text"] == "file:///b,file:///c"
    assert len(calls) == 2


async def test_a_failed_roots_answer_is_kept_until_the_client_says_they_changed() -> None:
    answers: list[Any] = ["not a list", [{"uri": "file:///a"}]]
    calls: list[int] = []

    async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        return {"roots": answers[len(calls) - 1]}

    async with connect(make_server(), handlers={"roots/list": list_roots}) as client:
        for _ in range(3):  # asked once, not (and waited for) on every request
            assert (await client.call_tool("roots"))["isError"] is True
        await client.notify("notifications/roots/list_changed")
        assert (await client.call_tool("roots"))["content"][0]["text"] == "file:///a"
    assert len(calls) == 2


async def test_cancelling_a_call_cancels_its_request_to_the_client() -> None:
    asked = anyio.Event()

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError

    async with connect(make_server(), handlers={"elicitation/create": elicit}) as client:
        client.send(
            {"jsonrpc": "2.0", "id": "q", "method": "tools/call", "params": {"name": "ask"}}
        )
        await asked.wait()
        await client.notify("notifications/cancelled", {"requestId": "q"})
        cancel = await client.wait_for_notification("notifications/cancelled")
        assert cancel["params"]["requestId"] == 1
        assert await client.request("ping") == {}
        assert not [m for m in client.messages if m.get("id") == "q"]
