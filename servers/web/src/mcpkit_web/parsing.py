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

from mcpkit import work

T = TypeVar("T")
AT_ONCE = 2
HELD_AT_ONCE = 8
_TURNS = work.Turns("mcp-web parsing", AT_ONCE)
_HOLDS = work.Turns("mcp-web pages held", HELD_AT_ONCE)


async def parsed(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Return `fn(*args, **kwargs)`, run in a worker thread once one of `AT_ONCE` turns is free.

    Raises:
        Exception: what `fn` raises.
    """
    return await work.run(fn, *args, changes=True, limiter=_TURNS.limiter(), **kwargs)


@asynccontextmanager
async def held() -> AsyncGenerator[None]:
    """Wait for one of `HELD_AT_ONCE` turns to hold a page, and keep it for the block."""
    async with _HOLDS.limiter():
        yield
