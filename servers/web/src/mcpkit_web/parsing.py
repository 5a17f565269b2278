"""Where pages are parsed, in worker threads two at a time, and how many are held at once.

Parsing a page is Python work that may take a while, so it runs off the event loop, which
keeps answering. It holds the GIL all along, so more parses at once are no faster, and
each may hold some 200 MB for a 10 MB page: fetch_many of eight such pages took 1 GB.
A cancelled call waits for its parse to end (a thread cannot be stopped): given up, the
parse would go on without its turn, and cancelled calls would parse without bound.

A page is held from its download to the end of its reading, and only `HELD_AT_ONCE` are:
calls waiting for a parse turn each held their body (40 of 10 MB held 390 MB), and
nothing bounded how many calls could wait. A call waits for its turn before it downloads.
"""

from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
from anyio.lowlevel import RunVar

from mcpkit import work

T = TypeVar("T")
AT_ONCE = 2
HELD_AT_ONCE = 8
# One limiter of each per event loop.
_TURNS = RunVar[anyio.CapacityLimiter]("mcp-web parsing")
_HOLDS = RunVar[anyio.CapacityLimiter]("mcp-web pages held")


async def parsed(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Return `fn(*args, **kwargs)`, run in a worker thread once one of `AT_ONCE` turns is free.

    Raises:
        Exception: what `fn` raises.
    """
    turns = _limiter(_TURNS, AT_ONCE)
    return await work.run(fn, *args, changes=True, limiter=turns, **kwargs)


@asynccontextmanager
async def held() -> AsyncGenerator[None]:
    """Wait for one of `HELD_AT_ONCE` turns to hold a page, and keep it for the block."""
    async with _limiter(_HOLDS, HELD_AT_ONCE):
        yield


def _limiter(var: RunVar[anyio.CapacityLimiter], tokens: int) -> anyio.CapacityLimiter:
    """Return this event loop's limiter kept in `var`, made with `tokens` on first use."""
    try:
        return var.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(tokens)
        var.set(limiter)
        return limiter
