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

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import anyio

from mcpkit import Context, work
from mcpkit.places import Places

from .mounts import LocalMounts
from .policy import AllowedDir, Policy, resolve_directory
from .reading import TooLarge
from .sandbox import Sandbox

MAX_CACHED = 64  # distinct sets of allowed directories remembered
MAX_WATCHABLE = 256  # directories from client roots that watches may follow
WALKS_AT_ONCE = 4
"""How many heavy walks (searches, trees) may run at once; others wait. They share the GIL,
so more at once would finish no sooner, but each would hold its page of results: with 32
at once, the worker threads' heaps kept some 40 MiB more after ten minutes (issue 23)."""
CHANGES_AT_ONCE = 4
"""How many changes (writes, edits, moves) may run at once; others wait. One disk takes
them no faster in parallel, and each worker thread that runs one keeps freed memory of the
heap in glibc's cache of its own: with 32 at once, sustained writes grew the heap for
tens of minutes; with 4, it stops within a minute (issue 23)."""
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
        self._walks = anyio.CapacityLimiter(WALKS_AT_ONCE)
        self._changes = anyio.CapacityLimiter(CHANGES_AT_ONCE)

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
        fn: Callable[..., T],
        /,
        *args: Any,
        done: str,
        changes: bool = False,
        heavy: bool = False,
        **kwargs: Any,
    ) -> T:
        """Return `fn(sandbox, *args, **kwargs)`, run in a worker thread; then log `done`.

        `sandbox` is the request's. A read logs at debug, and a cancelled one ends at once
        (see `mcpkit.work`): its thread, which changes nothing, is left to finish, or to
        hang on a filesystem that does not answer. A change logs at info (the level clients
        get by default) and is finished before a cancellation ends it: all or nothing. A
        change waits its turn beyond `CHANGES_AT_ONCE`, a `heavy` walk beyond `WALKS_AT_ONCE`.

        Raises:
            FsError: from `fn`.
            RootsUnavailable: the client declared roots but cannot be asked for them.
        """
        sandbox = await self.sandbox(ctx)
        limiter = self._changes if changes else self._walks if heavy else None
        result = await work.run(fn, sandbox, *args, changes=changes, limiter=limiter, **kwargs)
        await ctx.log("info" if changes else "debug", done, logger="mcp-fs")
        return result

    async def run_small(self, sandbox: Sandbox, fn: Callable[..., T], /, *args: Any) -> T:
        """Return the read `fn(*args)`, a few system calls on one path, on the event loop.

        That is where a subscription's checks run: at 32 subscriptions at once, a hop to a
        worker thread for each kept 32 threads busy, whose glibc caches and arenas held
        freed memory apart, and the heap grew without end (issue 23). Only in a `sandbox`
        on local filesystems alone (see `run_bounded`); on others, in a worker thread.

        Raises:
            FsError: from `fn`.
        """
        if self._mounts.all_local(d.path for d in sandbox.directories):
            return fn(*args)
        return await work.run(fn, *args)

    async def run_bounded(
        self, ctx: Context, fn: Callable[..., T], /, *args: Any, done: str, **kwargs: Any
    ) -> T:
        """Return the read `fn(sandbox, *args, on_loop=..., **kwargs)`; then log `done`.

        `fn` is first run with `on_loop` true, on the event loop: the hop to a worker
        thread (some 0.35 ms a call) costs more than reading a small file or directory. If
        it raises `TooLarge` it runs again, with `on_loop` false, in a worker thread. Only
        reads of one file or directory that open without blocking (`O_NONBLOCK`, checked
        with `fstat`) qualify, in a sandbox on local filesystems alone (see `mounts`: a
        network or cloud drive may hang); walks, searches, hashes and writes use `run`.

        Raises:
            FsError: from `fn`.
            RootsUnavailable: the client declared roots but cannot be asked for them.
        """
        sandbox = await self.sandbox(ctx)
        try:
            if not self._mounts.all_local(d.path for d in sandbox.directories):
                raise TooLarge("a filesystem that may hang")  # then no work on the loop
            result = fn(sandbox, *args, on_loop=True, **kwargs)
        except TooLarge:
            result = await work.run(fn, sandbox, *args, on_loop=False, **kwargs)
        await ctx.log("debug", done, logger="mcp-fs")
        return result
