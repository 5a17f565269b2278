"""The sandbox of a request: the operator's policy applied to the client's roots.

Which directories a request may use is the core's places policy (`mcpkit.places`): roots
are asked for once per connection (the core asks again after
`notifications/roots/list_changed`), each distinct set is resolved once, and a client that
declared roots but cannot be asked for them gets nothing. Each distinct set of allowed
directories gets one `Sandbox`.

Watches serve every subscriber of a URI at once, so they have no one client's roots: they
use `watchable`, every directory some client may use (the operator's, and the roots that
were allowed, once a request of that client has used them). Each subscription is first
checked in the subscriber's own sandbox, as a read would be.
"""

import logging
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

import anyio

from mcpkit import Context
from mcpkit.places import Places

from .mounts import LocalMounts
from .policy import AllowedDir, Policy, resolve_directory
from .reading import TooLarge
from .sandbox import Sandbox

logger = logging.getLogger("mcpkit_fs.access")
MAX_CACHED = 64  # distinct sets of allowed directories remembered
MAX_WATCHABLE = 256  # directories from client roots that watches may follow
PROGRESS_EVERY = 0.2  # seconds
T = TypeVar("T")


class Access:
    """Turns a request's context into the sandbox it may use."""

    def __init__(self, policy: Policy, *, read_only: bool) -> None:
        self.policy = policy
        self.read_only = read_only
        self.places = Places(
            policy.directories,
            policy.roots_mode,
            partial(resolve_directory, read_only=read_only, source="client roots"),
        )
        self.watchable = Sandbox(policy.directories, policy.deny)
        """Every directory some client may use: for watches, which serve all subscribers."""
        self._sandboxes: dict[tuple[AllowedDir, ...], Sandbox] = {}
        self._mounts = LocalMounts()

    async def sandbox(self, ctx: Context) -> Sandbox:
        """Return the sandbox for the client of `ctx`.

        Raises:
            RootsUnavailable: the client declared roots but cannot be asked for them.
        """
        directories = await self.places.of(ctx)
        sandbox = self._sandboxes.get(directories)
        if sandbox is None:
            sandbox = Sandbox(directories, self.policy.deny)
            if len(self._sandboxes) >= MAX_CACHED:
                self._sandboxes.clear()
            self._sandboxes[directories] = sandbox
            self._watch_too(directories)
        return sandbox

    def _watch_too(self, directories: tuple[AllowedDir, ...]) -> None:
        """Add `directories` to what watches may follow (past the cap: the newest ones)."""
        known = dict.fromkeys(self.watchable.directories)
        added = [d for d in directories if d not in known]
        if not added:
            return
        operators = list(self.policy.directories)
        from_roots = [d for d in (*known, *added) if d not in operators][-MAX_WATCHABLE:]
        self.watchable = Sandbox([*operators, *from_roots], self.policy.deny)

    async def run(
        self,
        ctx: Context,
        work: Callable[[Sandbox], T],
        done: str,
        *,
        changes: bool = False,
    ) -> T:
        """Run `work` with the request's sandbox in a worker thread, then log `done`.

        A read logs at debug, and a cancelled one ends at once: its thread, which changes
        nothing, is left to finish (or to hang on a filesystem that does not answer), and
        on asyncio, which the servers run on, no longer counts against the thread limit. A
        change logs at info (the level clients get by default) and is finished before a
        cancellation ends it: all or nothing.

        Raises:
            FsError: from `work`.
        """
        sandbox = await self.sandbox(ctx)
        result = await anyio.to_thread.run_sync(work, sandbox, abandon_on_cancel=not changes)
        await ctx.log("info" if changes else "debug", done, logger="mcp-fs")
        return result

    async def run_bounded(self, ctx: Context, work: Callable[[Sandbox, bool], T], done: str) -> T:
        """Run the read `work(sandbox, on_loop)` on the event loop if it is small, then log `done`.

        `work` is first run with `on_loop` true, on the event loop: the hop to a worker
        thread (some 0.35 ms a call) costs more than reading a small file or directory. If it
        raises `TooLarge` it runs again, with `on_loop` false, in a worker thread. Only
        reads of one file or directory that open without blocking (`O_NONBLOCK`, checked
        with `fstat`) qualify, in a sandbox on local filesystems alone (see `mounts`: a
        network or cloud drive may hang); walks, searches, hashes and writes use `run`.

        Raises:
            FsError: from `work`.
        """
        sandbox = await self.sandbox(ctx)
        try:
            if not self._mounts.all_local(d.path for d in sandbox.directories):
                raise TooLarge("a filesystem that may hang")  # then no work on the loop
            result = work(sandbox, True)
        except TooLarge:
            result = await anyio.to_thread.run_sync(work, sandbox, False, abandon_on_cancel=True)
        await ctx.log("debug", done, logger="mcp-fs")
        return result


class Progress:
    """The `tick` of long work (a walk, a hash): stops it when cancelled, reports progress.

    Each report says "{count} {unit}", at most every `PROGRESS_EVERY` seconds: a report
    waits for the event loop, and reporting every tick would slow a fast walk several times.
    """

    def __init__(self, ctx: Context, unit: str) -> None:
        self.ctx = ctx
        self.unit = unit
        self.reported: float | None = None

    def __call__(self, count: int) -> None:
        """Note `count` units done (in the work's worker thread).

        Raises:
            anyio.get_cancelled_exc_class(): the request was cancelled.
        """
        anyio.from_thread.check_cancelled()
        now = time.monotonic()
        if self.reported is None or now - self.reported >= PROGRESS_EVERY:
            self.reported = now
            anyio.from_thread.run(self.ctx.progress, count, None, f"{count} {self.unit}")
