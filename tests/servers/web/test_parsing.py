"""Parsing in worker threads, two at a time: a cancelled call keeps its turn to the end.

A thread cannot be stopped. Given up at a cancel, five cancelled extractions of 5 MB pages
went on parsing without turns and took 5 GB together.
"""

import time

import anyio

from mcpkit_web.parsing import AT_ONCE, parsed


async def test_a_cancelled_parse_keeps_its_turn_until_it_ends() -> None:
    started = time.monotonic()
    async with anyio.create_task_group() as calls:
        for _ in range(AT_ONCE):
            calls.start_soon(parsed, time.sleep, 0.5)
        await anyio.sleep(0.1)
        calls.cancel_scope.cancel()
    await parsed(int)  # its turn comes once a cancelled parse has ended
    assert time.monotonic() - started >= 0.45
