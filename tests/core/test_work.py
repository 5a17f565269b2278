"""Blocking work off the event loop: reads abandoned, changes finished, progress from threads."""

import threading
import time
from collections.abc import Callable
from functools import partial

import anyio
import anyio.from_thread
import anyio.lowlevel
import pytest

from checked import connect
from mcpkit import Context, Server, work
from mcpkit.work import Progress

BOUND = 5.0  # seconds any wait below may take before the test fails


async def eventually(check: Callable[[], bool]) -> None:
    """Wait until `check()` is true, polling for at most `BOUND` seconds."""
    for _ in range(int(BOUND / 0.01)):
        if check():
            return
        await anyio.sleep(0.01)
    raise AssertionError(f"not true within {BOUND} s")


def blocked_until(gate: threading.Event, log: list[str], name: str) -> str:
    """Blocking work: wait for `gate`, then note that it finished."""
    gate.wait(BOUND)
    log.append(name)
    return name


async def test_run_returns_the_result_and_raises_what_the_work_raises() -> None:
    assert await work.run(divmod, 7, 2) == (3, 1)
    assert await work.run(int, "ff", base=16) == 255
    with pytest.raises(ZeroDivisionError):
        await work.run(divmod, 1, 0)


async def test_a_cancelled_read_is_not_waited_for() -> None:
    gate, log = threading.Event(), list[str]()
    started = time.monotonic()
    with anyio.move_on_after(0.1):
        await work.run(blocked_until, gate, log, "read")
    assert time.monotonic() - started < 1.0  # it did not wait for the thread
    assert log == []
    gate.set()
    await eventually(lambda: bool(log))  # the abandoned thread still finishes on its own


async def test_a_cancelled_change_finishes_before_the_cancellation_ends_it() -> None:
    gate, log = threading.Event(), list[str]()
    threading.Timer(0.2, gate.set).start()
    with anyio.move_on_after(0.05) as scope:
        await work.run(blocked_until, gate, log, "change", changes=True)
    assert scope.cancel_called
    assert log == ["change"]  # waited for to its end, though cancelled at 0.05 s


def make_server(gate: threading.Event, log: list[str]) -> Server:
    app = Server("working", "1")

    @app.tool()
    async def change(ctx: Context) -> str:
        """Write once, slowly."""
        return await work.run(blocked_until, gate, log, "written", changes=True)

    @app.tool()
    async def count_rows(ctx: Context, rows: int) -> str:
        """Count in a thread anyio did not start, as aiosqlite's is, ticking each row."""
        tick = Progress(ctx, "rows", total=rows)
        token = anyio.lowlevel.current_token()
        done = anyio.Event()

        def count() -> None:
            for row in range(1, rows + 1):
                time.sleep(0.01)
                tick(row)
            anyio.from_thread.run_sync(done.set, token=token)

        threading.Thread(target=count).start()
        await done.wait()
        return f"{rows} rows"

    @app.tool()
    async def walk(ctx: Context) -> str:
        """Tick until cancelled, in a worker thread."""
        tick = Progress(ctx, "entries")

        def walk_forever() -> str:
            entries = 0
            try:
                while entries < 10_000:
                    entries += 1
                    time.sleep(0.001)
                    tick(entries)
            except BaseException:  # the backend's cancellation, raised by the tick
                log.append("walk stopped")
                raise
            return "walked"

        return await work.run(walk_forever)

    return app


async def test_a_cancelled_change_is_done_once_and_gets_no_answer() -> None:
    gate, log = threading.Event(), list[str]()
    async with connect(make_server(gate, log)) as client:
        client.send(
            {"jsonrpc": "2.0", "id": "change", "method": "tools/call", "params": {"name": "change"}}
        )
        await anyio.sleep(0.1)
        await client.notify("notifications/cancelled", {"requestId": "change"})
        await client.request("ping")  # answered while the change still runs
        gate.set()
        await eventually(lambda: bool(log))
        await client.request("ping")
        assert log == ["written"]
        assert all(m.get("id") != "change" for m in client.messages)


async def test_progress_from_a_thread_anyio_did_not_start_is_throttled() -> None:
    async with connect(make_server(threading.Event(), [])) as client:
        result = await client.call_tool("count_rows", {"rows": 60}, progress_token="p")
    assert result["content"][0]["text"] == "60 rows"
    reports = [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]
    # 60 rows of 10 ms: some 0.6 s, so 3 or 4 reports at most every 0.2 s, not 60.
    assert 2 <= len(reports) <= 5
    counts = [report["progress"] for report in reports]
    assert counts == sorted(set(counts))
    assert reports[0] == {"progressToken": "p", "progress": 1, "total": 60, "message": "1 rows"}


async def test_a_cancelled_read_stops_at_its_next_tick() -> None:
    log: list[str] = []
    async with connect(make_server(threading.Event(), log)) as client:
        call = {"jsonrpc": "2.0", "id": "walk", "method": "tools/call", "params": {"name": "walk"}}
        client.send(call)
        await anyio.sleep(0.1)
        await client.notify("notifications/cancelled", {"requestId": "walk"})
        await eventually(lambda: bool(log))
        await client.request("ping")
    assert log == ["walk stopped"]
    assert all(m.get("id") != "walk" for m in client.messages)


async def test_a_tick_on_the_event_loop_does_nothing() -> None:
    app = Server("on-loop", "1")

    @app.tool()
    async def quick(ctx: Context) -> str:
        """Tick on the loop itself, as small work run there may."""
        tick = Progress(ctx, "bytes")
        tick(1)
        return "ok"

    async with connect(app) as client:
        result = await client.call_tool("quick", progress_token=1)
    assert result["content"][0]["text"] == "ok"
    assert not client.notifications


async def test_a_tick_nobody_listens_to_never_waits_for_the_event_loop() -> None:
    app = Server("unheard", "1")

    @app.tool()
    async def busy(ctx: Context) -> str:
        """Tick from a foreign thread while the event loop itself is blocked."""
        tick = Progress(ctx, "rows", total=3)
        ticker = threading.Thread(target=lambda: [tick(n) for n in (1, 2, 3)])
        ticker.start()
        ticker.join(BOUND)  # blocks the loop: a tick waiting for it would wait out BOUND
        return "alone" if not ticker.is_alive() else "waited for the loop"

    async with connect(app) as client:
        result = await client.call_tool("busy")  # no progress token
    assert result["content"][0]["text"] == "alone"
    assert not client.notifications


async def test_turns_bound_the_calls_of_a_kind_each_event_loop_its_own() -> None:
    turns = work.Turns("test turns", 2)
    assert turns.limiter() is turns.limiter()
    assert turns.limiter().total_tokens == 2
    running: list[int] = [0]
    most: list[int] = [0]

    def busy() -> None:
        running[0] += 1
        most[0] = max(most[0], running[0])
        time.sleep(0.05)
        running[0] -= 1

    async with anyio.create_task_group() as calls:
        for _ in range(5):
            calls.start_soon(partial(work.run, busy, limiter=turns.limiter()))
    assert most[0] == 2
