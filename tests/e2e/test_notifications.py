"""Subscriptions, list changes, cancellation and concurrency, through the SDK client."""

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

from e2e.harness import (
    JSON,
    LATEST,
    SHUTDOWN_LIMIT,
    VERSIONS,
    Connection,
    Everything,
    WireRecord,
    over,
    text_of,
    wait_until,
)
from e2e.http_wire import HttpRecord

WATCHED = "test://watched-resource"
QUIET = 1.5
"""Seconds without a notification that show none is coming (the watcher debounces 0.3 s)."""

# mcp 2.x deprecates resources/subscribe and resources/unsubscribe as of protocol 2026-07-28
# (MCPDeprecationWarning on every call, an error under filterwarnings=error). They are the
# current methods in the handshake-era versions tested here, so these warnings only (and
# pyright's reportDeprecated at each call).
IGNORE_SUBSCRIBE_DEPRECATION = pytest.mark.filterwarnings(
    "ignore:resources/(un)?subscribe is removed:mcp.shared.exceptions.MCPDeprecationWarning"
)


def updates(conn: Connection) -> list[types.ResourceUpdatedNotification]:
    return conn.inbox.of(types.ResourceUpdatedNotification)


async def subscribe_and_update(conn: Connection, text: str) -> None:
    """Subscribe to the watched resource, change it, and see the update notification."""
    session, record = conn.session, conn.record
    await session.subscribe_resource(WATCHED)  # pyright: ignore[reportDeprecated]
    with anyio.fail_after(10):
        result = await session.call_tool("update_watched_resource", {"text": text})
    assert not result.is_error
    # The server watches the file itself: the update comes from the file changing.
    update = await conn.inbox.wait_for(types.ResourceUpdatedNotification, timeout=5)
    assert str(update.params.uri) == WATCHED
    assert [n["params"] for n in record.notifications("notifications/resources/updated")] == [
        {"uri": WATCHED}
    ]
    if isinstance(record, HttpRecord):  # no request is running: it comes on the GET stream
        assert record.carriers("notifications/resources/updated") == ["GET"]
    contents = (await session.read_resource(WATCHED)).contents
    assert isinstance(contents[0], types.TextResourceContents)
    assert contents[0].text == text


@IGNORE_SUBSCRIBE_DEPRECATION
@over(VERSIONS)
async def test_subscription(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        session, record = conn.session, conn.record
        await subscribe_and_update(conn, "first")
        await session.unsubscribe_resource(WATCHED)  # pyright: ignore[reportDeprecated]
        with anyio.fail_after(10):
            await session.call_tool("update_watched_resource", {"text": "second"})
        await anyio.sleep(QUIET)
        assert len(record.notifications("notifications/resources/updated")) == 1
        assert len(updates(conn)) == 1
        contents = (await session.read_resource(WATCHED)).contents
        assert isinstance(contents[0], types.TextResourceContents)
        assert contents[0].text == "second"


@IGNORE_SUBSCRIBE_DEPRECATION
@over([LATEST], ["stdio"])
async def test_exit_with_active_subscription(everything: Everything, version: str) -> None:
    """The client leaves while subscribed: the server must still exit as soon as stdin closes.

    The `everything` fixture checks the exit (status 0, within a second); the SDK client kills
    the server if it has not exited 2 s after stdin closed, then again 2 s after SIGTERM.
    """
    async with everything.connect(version) as conn:
        await subscribe_and_update(conn, "first")
    assert isinstance(conn.record, WireRecord)
    seconds, status = conn.record.shutdown_seconds, conn.record.returncode
    assert seconds is not None
    assert (seconds < SHUTDOWN_LIMIT, status) == (True, 0), f"exit {status} after {seconds:.2f} s"


COUNTER = "test://counter"


async def read_counter(conn: Connection) -> int:
    """The count of test://counter (an HTTP server is shared by the session's tests)."""
    contents = (await conn.session.read_resource(COUNTER)).contents
    assert isinstance(contents[0], types.TextResourceContents)
    return int(contents[0].text)


@IGNORE_SUBSCRIBE_DEPRECATION
@over([VERSIONS[0], LATEST])
async def test_polled_subscription(everything: Everything, version: str) -> None:
    """test://counter is no file: its watch polls the count, and stops with the subscription."""
    async with everything.connect(version) as conn:
        session, record = conn.session, conn.record
        await session.subscribe_resource(COUNTER)  # pyright: ignore[reportDeprecated]
        count = await read_counter(conn)
        with anyio.fail_after(10):
            result = await session.call_tool("set_counter", {"value": count + 1})
        assert not result.is_error
        update = await conn.inbox.wait_for(types.ResourceUpdatedNotification, timeout=5)
        assert str(update.params.uri) == COUNTER
        await session.unsubscribe_resource(COUNTER)  # pyright: ignore[reportDeprecated]
        with anyio.fail_after(10):
            await session.call_tool("set_counter", {"value": count + 2})
        await anyio.sleep(QUIET)
        assert [n["params"] for n in record.notifications("notifications/resources/updated")] == [
            {"uri": COUNTER}
        ]
        assert await read_counter(conn) == count + 2


@IGNORE_SUBSCRIBE_DEPRECATION
@over()
async def test_subscribe_unknown_resource(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        with pytest.raises(MCPError) as refused:
            await conn.session.subscribe_resource(  # pyright: ignore[reportDeprecated]
                "test://no-such-resource"
            )
        assert refused.value.error.code == -32002


LIST_CHANGED = {
    "notifications/tools/list_changed": types.ToolListChangedNotification,
    "notifications/resources/list_changed": types.ResourceListChangedNotification,
    "notifications/prompts/list_changed": types.PromptListChangedNotification,
}


@over(VERSIONS)
async def test_list_changed(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        session, record = conn.session, conn.record

        async def toggle(present: bool, expected: int) -> None:
            with anyio.fail_after(10):
                result = await session.call_tool("set_dynamic_items", {"present": present})
            assert not result.is_error
            for method, kind in LIST_CHANGED.items():
                await wait_until(
                    lambda kind=kind: len(conn.inbox.of(kind)) == expected,
                    timeout=5,
                    what=method,
                )
                assert len(record.notifications(method)) == expected

        await toggle(True, expected=1)
        assert "test_dynamic_tool" in {t.name for t in (await session.list_tools()).tools}
        assert text_of(await session.call_tool("test_dynamic_tool", {})) == "dynamic tool called"
        resources = (await session.list_resources()).resources
        assert "test://dynamic-resource" in {str(r.uri) for r in resources}
        contents = (await session.read_resource("test://dynamic-resource")).contents
        assert isinstance(contents[0], types.TextResourceContents)
        assert contents[0].text == "dynamic resource content"
        assert "test_dynamic_prompt" in {p.name for p in (await session.list_prompts()).prompts}
        (message,) = (await session.get_prompt("test_dynamic_prompt")).messages
        assert isinstance(message.content, types.TextContent)
        assert message.content.text == "This is a dynamic prompt."

        await toggle(False, expected=2)
        assert "test_dynamic_tool" not in {t.name for t in (await session.list_tools()).tools}
        resources = (await session.list_resources()).resources
        assert "test://dynamic-resource" not in {str(r.uri) for r in resources}
        assert "test_dynamic_prompt" not in {p.name for p in (await session.list_prompts()).prompts}
        with pytest.raises(MCPError) as tool_gone:
            await session.call_tool("test_dynamic_tool", {})
        assert tool_gone.value.error.code == types.INVALID_PARAMS
        with pytest.raises(MCPError) as resource_gone:
            await session.read_resource("test://dynamic-resource")
        assert resource_gone.value.error.code == -32002
        with pytest.raises(MCPError) as prompt_gone:
            await session.get_prompt("test_dynamic_prompt")
        assert prompt_gone.value.error.code == types.INVALID_PARAMS


@over([VERSIONS[0], LATEST])  # the same in every version
async def test_cancellation(everything: Everything, version: str) -> None:
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with everything.connect(version) as conn:
        session, record = conn.session, conn.record

        async def long_call() -> None:
            arguments = {"duration": 30, "steps": 300}  # a progress report every 0.1 s
            await session.call_tool("long_running_operation", arguments, None, on_progress)

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(long_call)
            await wait_until(lambda: len(reports) >= 2, timeout=5, what="the operation to run")
            task_group.cancel_scope.cancel()  # the SDK then sends notifications/cancelled

        (call,) = record.requests("tools/call")

        def cancels() -> list[JSON]:
            messages = record.client_messages()
            return [m for m in messages if m.get("method") == "notifications/cancelled"]

        # Over HTTP the SDK POSTs the notification in a task of its own.
        await wait_until(lambda: bool(cancels()), timeout=5, what="notifications/cancelled")
        assert [c["params"]["requestId"] for c in cancels()] == [call["id"]]
        with anyio.fail_after(5):
            await session.send_ping()
        # The operation stopped: no more progress, and no response, ever.
        await anyio.sleep(0.2)
        reported = len(record.notifications("notifications/progress"))
        await anyio.sleep(0.5)  # five report periods
        assert len(record.notifications("notifications/progress")) == reported
        assert record.responses(call["id"]) == []
        with anyio.fail_after(5):
            assert text_of(await session.call_tool("echo", {"text": "still here"})) == "still here"


@over()
async def test_cancellation_cancels_server_request(everything: Everything, version: str) -> None:
    """Cancelling a tool call that waits on sampling withdraws the server's sampling request."""
    asked = anyio.Event()

    async def never_answer(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async with everything.connect(version, sampling_callback=never_answer) as conn:
        session, record = conn.session, conn.record
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(session.call_tool, "test_sampling", {"prompt": "hi"})
            with anyio.fail_after(5):
                await asked.wait()
            task_group.cancel_scope.cancel()
        (sampling,) = record.server_requests("sampling/createMessage")
        await wait_until(
            lambda: bool(record.notifications("notifications/cancelled")),
            timeout=5,
            what="the server to withdraw its sampling request",
        )
        (withdrawn,) = record.notifications("notifications/cancelled")
        assert withdrawn["params"]["requestId"] == sampling["id"]
        (call,) = record.requests("tools/call")
        with anyio.fail_after(5):
            await session.send_ping()
        assert record.responses(call["id"]) == []


@over()
async def test_ping_during_long_call(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        session, record = conn.session, conn.record
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(
                session.call_tool, "long_running_operation", {"duration": 30, "steps": 1}
            )
            await wait_until(
                lambda: bool(record.requests("tools/call")), timeout=5, what="the call to start"
            )
            for _ in range(3):
                with anyio.fail_after(1):
                    await session.send_ping()
            with anyio.fail_after(1):
                assert (
                    text_of(await session.call_tool("echo", {"text": "meanwhile"})) == "meanwhile"
                )
            (long_call,) = record.requests("tools/call")[:1]
            assert record.responses(long_call["id"]) == []  # still running
            task_group.cancel_scope.cancel()
