"""Change sources for resource subscriptions: the process's one file watcher, and `Changed`.

A watch function (`@app.watch(uri)`) runs while someone is subscribed to a matching URI. It
gets a `Changed`: awaiting `changed()` tells the subscribers; `await changed.follow_files(
paths)` does that on every change to those files or directories, through the shared
watcher, until the subscription ends.

The file watcher runs one `watchfiles` watch for the whole process, over the directories
that current subscriptions need (not recursive). It is started by the first subscription
and stopped by the last; a burst of changes (debounced by watchfiles) gives each callback
one call.
"""

import logging
import os
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any

import anyio

logger = logging.getLogger("mcpkit.watch")

Callback = Callable[[], Awaitable[None]]
WatchFunction = Callable[..., Coroutine[Any, Any, None]]

DEBOUNCE_MS = 300  # longest a burst of changes is gathered before subscribers hear of it
STEP_MS = 50  # quiet time that ends a burst


class FileWatcher:
    """One watcher for every file subscription of the process. Run `run()` in a task."""

    def __init__(self) -> None:
        self._watches: dict[object, tuple[frozenset[Path], Callback]] = {}
        self._changed = anyio.Event()

    async def watch(self, paths: Iterable[Path], callback: Callback) -> None:
        """Call `callback` after each burst of changes to `paths`; runs until cancelled."""
        key = object()
        self._watches[key] = (_absolute(paths), callback)
        self._changed.set()
        try:
            await anyio.sleep_forever()
        finally:
            del self._watches[key]
            self._changed.set()

    async def run(self) -> None:
        """Watch what is asked for, restarting whenever the set of paths changes."""
        while True:
            self._changed = anyio.Event()
            directories = self._directories()
            if not directories:
                await self._changed.wait()
                continue
            # watchfiles watches in a thread that cancellation cannot reach: the stop event
            # ends it within a step instead of its 5 s timeout, so the process exits promptly.
            stop = anyio.Event()
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._follow, directories, stop)
                try:
                    await self._changed.wait()
                finally:
                    stop.set()
                    task_group.cancel_scope.cancel()

    def _directories(self) -> list[Path]:
        """Return the directories to watch: each path if a directory, else its parent."""
        wanted = {
            p if p.is_dir() else p.parent for paths, _ in self._watches.values() for p in paths
        }
        return sorted(d for d in wanted if d.is_dir())

    async def _follow(self, directories: list[Path], stop: anyio.Event) -> None:
        from watchfiles import awatch  # imported on first subscription: it costs start-up time

        async for changes in awatch(
            *directories, recursive=False, debounce=DEBOUNCE_MS, step=STEP_MS, stop_event=stop
        ):
            touched = {Path(path) for _, path in changes}
            touched |= {path.parent for path in touched}
            callbacks = {cb for paths, cb in list(self._watches.values()) if paths & touched}
            for callback in callbacks:
                await callback()


def _absolute(paths: Iterable[Path]) -> frozenset[Path]:
    """Return `paths` made absolute, without resolving symbolic links."""
    return frozenset(Path(os.path.abspath(path)) for path in paths)


class Changed:
    """Given to a watch function: call it to tell the subscribers their resource changed."""

    def __init__(self, notify: Callback, files: FileWatcher) -> None:
        self._notify = notify
        self._files = files

    async def __call__(self) -> None:
        """Send `notifications/resources/updated` to every subscriber of the URI."""
        await self._notify()

    async def follow_files(
        self, paths: Iterable[Path], *, when: Callable[[], Awaitable[bool]] | None = None
    ) -> None:
        """Notify on every change to `paths` (files or directories); runs until cancelled.

        With `when`, a burst of changes notifies only if `await when()` is true (for
        example, only if the content really differs).
        """

        async def notify() -> None:
            if when is None or await when():
                await self._notify()

        await self._files.watch(paths, notify)
