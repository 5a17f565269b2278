"""Blocking work off the event loop: reads, changes, and the progress they report.

A handler that calls blocking code (a filesystem walk, `sqlite3`, a parser) runs it with
`run`, so the server keeps answering (`ping`, other calls) meanwhile:

```python
tick = Progress(ctx, "files walked")
found = await work.run(walk.search, root, pattern, tick=tick)     # a read
await work.run(writing.write, path, text, changes=True)           # a change
```

- A read (the default) that is cancelled ends at once: the client gets no answer and the
  thread is left to finish on its own. It must change nothing, as nobody sees its end;
  a `Progress` it ticks stops it at its next tick.
- A change (`changes=True`) runs to its end even when cancelled, so it is done whole or
  not at all; its result is dropped, as a cancelled request gets no response.

`Turns` bound how many calls of one kind run at once (a CPU-bound hash, a parser), so
that they leave anyio's shared worker threads to the rest.

A `Progress` is made on the event loop and ticked from any thread, including threads
anyio did not start (the one `aiosqlite` runs its connection in, say). It reports at most
every `REPORT_EVERY` seconds: a report waits for the event loop, and a fast walk that
reported each of its million entries would take several times as long.
"""

import contextlib
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

from .context import Context

T = TypeVar("T")

REPORT_EVERY = 0.2
"""Seconds between two progress reports of one piece of work."""


class Turns:
    """At most `tokens` calls of one kind at once: `limiter()` is the `limiter` for `run`.

    Each event loop has its own limiter, made on first use (a limiter belongs to the
    loop it was made on).
    """

    def __init__(self, name: str, tokens: int) -> None:
        self._var = anyio.lowlevel.RunVar[anyio.CapacityLimiter](name)
        self._tokens = tokens

    def limiter(self) -> anyio.CapacityLimiter:
        """Return this event loop's limiter of these turns."""
        try:
            return self._var.get()
        except LookupError:
            limiter = anyio.CapacityLimiter(self._tokens)
            self._var.set(limiter)
            return limiter


async def run(
    fn: Callable[..., T],
    /,
    *args: Any,
    changes: bool = False,
    limiter: anyio.CapacityLimiter | None = None,
    **kwargs: Any,
) -> T:
    """Return `fn(*args, **kwargs)`, run in a worker thread.

    Cancelled, a read (`changes` false) is no longer waited for; a change is waited for
    to its end (see the module docstring). A `limiter` bounds how many such calls run at
    once, beside anyio's default bound on all of them.

    Raises:
        Exception: what `fn` raises.
    """
    call = partial(fn, *args, **kwargs)
    if limiter is None:
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=not changes)
    async with limiter:
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=not changes)


class Progress:
    """The `tick` of long blocking work: reports progress, and stops the work if cancelled.

    Make it on the event loop, in the handler; call `tick(count)` from the work's thread
    to say that `count` units are done. The client hears "{count} {unit}" (with `total`
    when known) at most every `REPORT_EVERY` seconds, if it asked for progress.
    """

    def __init__(self, ctx: Context, unit: str, *, total: float | None = None) -> None:
        self.ctx = ctx
        self.unit = unit
        self.total = total
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()
        self._reported: float | None = None  # time.monotonic() of the last report

    def __call__(self, count: float) -> None:
        """Note that `count` units are done; report it if the last report is old enough.

        On the event loop's own thread it does nothing: work short enough to run there
        has nothing to report, and waiting for the loop there would never end. Nor does
        it report when the client did not ask for progress: then a tick never waits.

        Raises:
            anyio.get_cancelled_exc_class(): (in a thread anyio started) the request was
                cancelled: the work should stop.
        """
        if threading.get_ident() == self._loop_thread:
            return
        # In a thread anyio did not start, its owner decides how it is cancelled.
        with contextlib.suppress(anyio.NoEventLoopError):
            anyio.from_thread.check_cancelled()
        if not self.ctx.wants_progress:  # nobody listens: spare the trip to the event loop
            return
        now = time.monotonic()
        if self._reported is None or now - self._reported >= REPORT_EVERY:
            self._reported = now
            message = f"{count:g} {self.unit}"
            anyio.from_thread.run(self.ctx.progress, count, self.total, message, token=self._token)
