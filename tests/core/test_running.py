"""The server-wide count of running requests: taken while a handler runs, given back after."""

import json
import tracemalloc

import anyio
import pytest

from mcpkit import running
from mcpkit.errors import InvalidRequest
from mcpkit.running import Running


async def test_a_request_counts_while_it_runs_however_it_ends() -> None:
    counted = Running()
    seen: list[tuple[int, int]] = []

    async def work(fail: bool) -> str:
        seen.append((counted.requests, counted.bytes))
        if fail:
            raise ValueError("bad")
        return "done"

    assert await counted.run(work(False), 100) == "done"
    with pytest.raises(ValueError, match="bad"):
        await counted.run(work(True), 50)
    with anyio.move_on_after(0.05):
        await counted.run(anyio.sleep(10), 70)
    assert seen == [(1, 100), (1, 50)]
    assert (counted.requests, counted.bytes) == (0, 0)


async def test_past_the_bounds_a_request_is_refused_and_never_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(running, "MAX_BYTES", 1000)
    counted = Running()
    ran: list[int] = []

    async def work(n: int) -> None:
        ran.append(n)
        await anyio.sleep(1)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(counted.run, work(1), 2000)  # alone, a request always runs
        await anyio.sleep(0.05)
        with pytest.raises(InvalidRequest, match="the server runs 1 requests already"):
            await counted.run(work(2), 10)
        task_group.cancel_scope.cancel()
    assert ran == [1]
    assert (counted.requests, counted.bytes) == (0, 0)


SHAPES: list[object] = [
    [[] for _ in range(10_000)],
    [{} for _ in range(10_000)],
    [{"a": 1} for _ in range(10_000)],
    {f"key{n}": 1.5 for n in range(10_000)},
    [[[[]]] for _ in range(5_000)],
    ["text, with commas"] * 5_000,
]


@pytest.mark.parametrize("value", SHAPES)
def test_a_message_weighs_at_least_twice_what_it_holds_parsed(value: object) -> None:
    frame = json.dumps(value, separators=(",", ":")).encode()
    tracemalloc.start()
    try:
        parsed = json.loads(frame)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert parsed == value
    assert running.weight(frame) >= 2 * held  # HTTP holds a POST's messages parsed twice
