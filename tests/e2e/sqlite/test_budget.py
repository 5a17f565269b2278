"""A query that never ends: the time budget stops it, a ping is answered meanwhile, and
cancelling it frees the database at once. Over stdio and HTTP, in both eras (2026-07-28
has no ping: a tools/list stands for it there).
"""

import sqlite3
import time
from contextlib import closing
from pathlib import Path

import anyio
import mcp_types as types
from mcp import ClientSession

from e2e.harness import JSON, MessageRecord, wait_until
from e2e.sqlite.helpers import (
    ENDLESS,
    Era,
    Link,
    SqliteServers,
    cancelled,
    error_text,
    structured,
    text_of,
)
from mcpkit_sqlite.session import STOP_GRACE

UNSTOPPABLE = "SELECT length(trim(printf('%.*c', 400000, 'a'), printf('%.*c', 200000, 'b') || 'a'))"
"""A query of one step that takes minutes: trim() compares each character of one text with
each of the other, and SQLite looks for an interruption only between steps."""
BUDGET_SPENT = (
    "The query ran out of its time budget ({seconds} s) and was stopped:"
    " narrow it (WHERE, LIMIT, an index) or raise timeout_ms."
)


async def alive(link: Link) -> None:
    """Ask the server something that needs no database: a ping, which 2026-07-28 removed
    (the SDK refuses to send it then), or there a tools/list."""
    if isinstance(link.peer, ClientSession):
        await link.peer.send_ping()
    else:
        await link.peer.list_tools()


def call_of(record: MessageRecord, query: str) -> JSON:
    """The client's one tools/call request that ran `query`."""
    (call,) = [
        r for r in record.requests("tools/call") if r["params"]["arguments"].get("query") == query
    ]
    return call


async def test_the_time_budget_stops_an_endless_query_and_pings_are_answered(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    results: list[types.CallToolResult] = []
    pinged, running, started = 0, False, time.monotonic()
    async with sqlite.open(era, str(shop), "--timeout", "1") as link:
        peer, record = link.peer, link.record

        async def endless() -> None:
            results.append(await peer.call_tool("read_query", {"query": ENDLESS}))

        with anyio.fail_after(20):
            plan = await peer.call_tool("explain_query", {"query": ENDLESS})  # planned, not run
            async with anyio.create_task_group() as task_group:
                started = time.monotonic()
                task_group.start_soon(endless)
                await wait_until(
                    lambda: bool(record.requests("tools/call")[1:]), timeout=5, what="the call"
                )
                while time.monotonic() - started < 0.6:  # bounded: well within the budget
                    with anyio.fail_after(0.5):
                        await alive(link)
                    pinged += 1
                    await anyio.sleep(0.05)
                (call,) = record.requests("tools/call")[1:]
                running = record.responses(call["id"]) == []
            took = time.monotonic() - started
            after = await peer.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
    assert not plan.is_error
    assert "SCAN c" in text_of(plan)
    assert pinged >= 3
    assert running, "the endless query ended before the pings: the test shows nothing"
    (result,) = results
    assert error_text(result) == BUDGET_SPENT.format(seconds=1)
    assert 0.9 < took < 5
    assert structured(after)["rows"] == [[100]]  # the connection is free again


async def test_a_call_may_ask_for_less_time(sqlite: SqliteServers, era: Era, shop: Path) -> None:
    async with sqlite.open(era, str(shop), "--timeout", "30") as link:
        with anyio.fail_after(10):
            started = time.monotonic()
            result = await link.peer.call_tool("read_query", {"query": ENDLESS, "timeout_ms": 300})
            took = time.monotonic() - started
    assert error_text(result) == BUDGET_SPENT.format(seconds=0.3)
    assert took < 3


async def test_cancelling_an_endless_query_frees_the_server_at_once(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with sqlite.open(era, str(shop), "--timeout", "60") as link:
        peer, record = link.peer, link.record
        with anyio.fail_after(20):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(
                    lambda: peer.call_tool("read_query", {"query": ENDLESS}, None, on_progress)
                )
                await wait_until(lambda: bool(reports), timeout=5, what="the query to run")
                task_group.cancel_scope.cancel()
            call = call_of(record, ENDLESS)
            if sqlite.transport == "stdio" or era == "handshake":
                # Over HTTP in 2026-07-28 the SDK aborts the request's POST instead.
                await wait_until(
                    lambda: cancelled(record, call["id"]), timeout=5, what="notifications/cancelled"
                )
            with anyio.fail_after(2):  # the budget is 60 s: only the cancel can free it this fast
                after = await peer.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
            with anyio.fail_after(1):
                await alive(link)
            await anyio.sleep(0.3)
    assert structured(after)["rows"] == [[100]]
    assert record.responses(call["id"]) == []  # a cancelled request is not answered
    assert reports[-1] < 60


async def test_a_query_sqlite_cannot_stop_is_given_up_at_its_deadline(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    async with sqlite.open(era, str(shop), "--timeout", "1") as link:
        with anyio.fail_after(20):  # the query itself would take minutes
            started = time.monotonic()
            result = await link.peer.call_tool("read_query", {"query": UNSTOPPABLE})
            took = time.monotonic() - started
            after = await link.peer.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
    assert "in a step SQLite cannot stop" in error_text(result)
    assert took < 1 + STOP_GRACE + 3
    assert structured(after)["rows"] == [[100]]  # a new connection serves meanwhile


async def test_a_chain_of_views_deeper_than_a_threads_usual_stack_ends_no_process(
    sqlite: SqliteServers, tmp_path: Path
) -> None:
    # SQLite recursed once per view on the connection thread's 8 MiB, and overflowed it.
    # Describing the last view prepares them all, in a step SQLite cannot stop: the
    # server's own statements (its columns) took 10 s each, whatever --timeout said.
    chain = tmp_path / "chain.db"
    views = [
        (f"v{n}", f"v{n}", f"CREATE VIEW v{n} AS SELECT a FROM {f'v{n - 1}' if n else 't'}")
        for n in range(20_000)
    ]
    with closing(sqlite3.connect(chain)) as made:  # written as a hostile file is: at once
        made.execute("CREATE TABLE t(a)")
        made.execute("PRAGMA writable_schema = ON")
        made.executemany("INSERT INTO sqlite_schema VALUES ('view', ?, ?, 0, ?)", views)
        made.commit()
    # --timeout 3: reading the schema (20,000 CREATE VIEW) is a step SQLite can stop, and on
    # a busy machine it took the whole of 1 s; expanding the views, which it cannot stop,
    # would take minutes.
    async with sqlite.open("handshake", str(chain), "--timeout", "3") as link:
        with anyio.fail_after(30):
            started = time.monotonic()
            query = await link.peer.call_tool("read_query", {"query": "SELECT * FROM v19999"})
            described = await link.peer.call_tool("describe_table", {"table_name": "v19999"})
            took = time.monotonic() - started
            await alive(link)
    for result in (query, described):
        assert "in a step SQLite cannot stop" in error_text(result)
    assert took < 2 * (3 + STOP_GRACE) + 3


async def test_a_sort_spilling_past_the_temporary_file_cap_is_stopped(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    # Spilled to temporary files with no cap, ORDER BY random() over zeroblobs wrote 5 GB in 5 s.
    sort = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT {rows})"
        " SELECT x, printf('%.*c', 1000000, 'a') AS t FROM c ORDER BY random()"
    )
    async with sqlite.open(era, str(shop), "--max-temp", "16") as link:
        with anyio.fail_after(20):
            stopped = await link.peer.call_tool("read_query", {"query": sort.format(rows=200)})
            small = await link.peer.call_tool("read_query", {"query": sort.format(rows=5)})
    assert "more than the 16 MiB of temporary files" in error_text(stopped)
    rows = structured(small)["rows"]
    assert sorted(x for x, _ in rows) == [1, 2, 3, 4, 5]
    assert all(text.startswith("a" * 1000) for _, text in rows)  # cut at the cell cap
