"""Where pages are parsed: in worker threads, two at a time.

Parsing a page is Python work that may take a while, so it runs off the event loop, which
keeps answering. It holds the GIL all along, so more parses at once are no faster, and
each may hold some 200 MB for a 10 MB page: fetch_many of eight such pages took 1 GB.
A cancelled call waits for its parse to end (a thread cannot be stopped): given up, the
parse would go on without its turn, and cancelled calls would parse without bound.
"""

from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from anyio.lowlevel import RunVar

from mcpkit import work

T = TypeVar("T")
AT_ONCE = 2
_TURNS = RunVar[anyio.CapacityLimiter]("mcp-web parsing")  # one limiter per event loop


async def parsed(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Return `fn(*args, **kwargs)`, run in a worker thread once one of `AT_ONCE` turns is free.

    Raises:
        Exception: what `fn` raises.
    """
    try:
        turns = _TURNS.get()
    except LookupError:
        turns = anyio.CapacityLimiter(AT_ONCE)
        _TURNS.set(turns)
    return await work.run(fn, *args, changes=True, limiter=turns, **kwargs)
