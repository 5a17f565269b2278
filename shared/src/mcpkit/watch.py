"""Change sources for resource subscriptions: the process's one file watcher, and `Changed`.

A watch function (`@app.watch(uri)`) runs while someone is subscribed to a matching URI. It
gets a `Changed`: awaiting `changed()` tells the subscribers; `await changed.follow_files(
paths)` does that on every change to those files or directories, through the shared
watcher, until the subscription ends. A subscription is answered once its watch is in
place (see `Changed.in_place`), so a change made right after the answer is not missed.

The file watcher runs one `watchfiles` watch for the whole process, over the directories
that current subscriptions need (not recursive). It is started by the first subscription;
a new set of directories gets a new watch, and the old one stops once the new one is in
place and the old has delivered the burst it was gathering (a change at that moment may be
told twice). A burst of changes (debounced by watchfiles) gives each callback one call.

A watched directory that is deleted loses its watch for good, so the directory above it is
watched too, and while it is missing, the nearest directory above it that exists: when it
comes back (`rm -rf build && mkdir -p build/out` included), a new watch takes it in, and
the callbacks of the files in it are called once, as what changed there before could not
be seen.
"""

import logging
import math
import os
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import anyio

logger = logging.getLogger("mcpkit.watch")

Callback = Callable[[], Awaitable[None]]
WatchFunction = Callable[..., Coroutine[Any, Any, None]]
Admission = Callable[..., Awaitable[None]]  # admit(ctx, **variables): see Server.watch

DEBOUNCE_MS = 300  # longest a burst of changes is gathered before subscribers hear of it
STEP_MS = 50  # quiet time that ends a burst
RETIRE_AFTER = (DEBOUNCE_MS + 2 * STEP_MS) / 1000  # a replaced watch delivers what it began


class _Watch(NamedTuple):
    homes: frozenset[Path]  # the directories where changes to `paths` show up
    paths: frozenset[Path]
    callback: Callback
    in_place: Callable[[], None]


class _Watcher:
    """One watchfiles watch over a set of directories, and whether it is in place yet.

    It is the stop event given to watchfiles, which checks it on every step of its loop, in
    the worker thread. The first check means the watch is in place: watchfiles watches from
    the moment its watcher is created, before the loop starts.
    """

    def __init__(self, directories: frozenset[Path], arrived: Callable[[], None]) -> None:
        self.directories = directories
        self.in_place = False
        self.placed = anyio.Event()
        self._arrived = arrived
        self._stop_at = math.inf  # time.monotonic() from which watchfiles should stop

    def is_set(self) -> bool:
        """Whether watchfiles should stop (called in its worker thread)."""
        if not self.in_place:
            anyio.from_thread.run_sync(self.arrive)
        return time.monotonic() >= self._stop_at

    def stop(self, after: float = 0.0) -> None:
        """Stop the watch within a step once `after` seconds have passed."""
        self._stop_at = min(self._stop_at, time.monotonic() + after)

    def arrive(self) -> None:
        """Note that the watch is in place (or failed: waiting longer would help nobody)."""
        self.in_place = True
        self.placed.set()
        self._arrived()


class FileWatcher:
    """One watcher for every file subscription of the process. Run `run()` in a task."""

    def __init__(self) -> None:
        self._watches: dict[object, _Watch] = {}
        self._changed = anyio.Event()
        self._current: _Watcher | None = None  # the newest
        self._serving: _Watcher | None = None  # the one before, in place, until the newest is
        self._running: set[_Watcher] = set()  # all with a thread, to stop them at the end
        self._remade: set[Path] = set()  # homes, or directories above them, added or deleted

    async def watch(
        self, paths: Iterable[Path], callback: Callback, in_place: Callable[[], None]
    ) -> None:
        """Call `callback` after each burst of changes to `paths`; runs until cancelled.

        `in_place` is called once changes to `paths` are seen (maybe more than once).
        """
        key = object()
        absolute = _absolute(paths)
        homes = frozenset(p if p.is_dir() else p.parent for p in absolute)
        self._watches[key] = _Watch(homes, absolute, callback, in_place)
        self._changed.set()
        try:
            await anyio.sleep_forever()
        finally:
            del self._watches[key]
            self._changed.set()

    async def run(self) -> None:
        """Watch what is asked for, with a new watcher whenever the directories change."""
        async with anyio.create_task_group() as task_group:
            try:
                while True:
                    self._changed = anyio.Event()
                    missing = self._missing_homes()  # before the directories: one may come
                    directories = frozenset(self._wanted())
                    # A watch on the old one sees nothing; files in it changed unseen.
                    back = frozenset(d for d in self._remade if d.is_dir())
                    self._remade.clear()
                    previous = self._current
                    if previous is None or directories != previous.directories or back:
                        self._replace(previous)
                        self._current = (
                            _Watcher(directories, self._arrived) if directories else None
                        )
                        if self._current is not None:
                            self._running.add(self._current)
                            task_group.start_soon(self._follow, self._current)
                            task_group.start_soon(self._settle, self._current, back, missing)
                    self._arrived()
                    await self._changed.wait()
            finally:
                # watchfiles watches in a thread that cancellation cannot reach: stopping
                # ends it within a step instead of its 5 s timeout.
                for watcher in self._running:
                    watcher.stop()

    def _wanted(self) -> set[Path]:
        """Return the directories the watches want watched."""
        return {d for w in self._watches.values() for d in _directories(w.homes)}

    def _missing_homes(self) -> frozenset[Path]:
        """Return the watches' homes that do not exist (as directories)."""
        return frozenset(h for w in self._watches.values() for h in w.homes if not h.is_dir())

    def _shapes_a_home(self, path: Path) -> bool:
        """Whether `path` is a watch's home or a directory above one."""
        return any(_at_or_above(path, h) for w in self._watches.values() for h in w.homes)

    async def _settle(
        self, watcher: _Watcher, back: frozenset[Path], missing: frozenset[Path]
    ) -> None:
        """Once `watcher` is in place, call back the watches of directories made again.

        What changed in them between their return and the new watch could not be seen.
        A home that was `missing` may have come back since, unseen: if `watcher` watches it,
        it is called back too; if not, the directories now on its way are taken as made
        again, for a new watcher.
        """
        await watcher.placed.wait()
        back |= missing & watcher.directories
        unwatched = self._wanted() - watcher.directories
        made = {d for d in unwatched if any(_at_or_above(d, home) for home in missing)}
        if made:
            self._remade |= made
            self._changed.set()
        watches = list(self._watches.values())
        called = {
            w.callback for w in watches if any(_at_or_above(d, h) for d in back for h in w.homes)
        }
        await self._call(called)

    async def _call(self, callbacks: set[Callback]) -> None:
        """Call each callback; one's failure is logged and does not stop the others."""
        for callback in callbacks:
            try:
                await callback()
            except Exception:  # one subscription's trouble must not stop the others
                logger.exception("Telling the subscribers of a change failed")

    def _replace(self, previous: _Watcher | None) -> None:
        """Let `previous` serve until its successor is in place, if it is in place itself.

        One that is not has been seen to watch nothing yet: it stops at once, so a burst of
        subscriptions does not leave a thread per subscription running.
        """
        if previous is None:
            return
        if previous.in_place:
            self._serving = previous
        else:
            previous.stop()

    def _arrived(self) -> None:
        """Once the current watcher is in place: retire the one before, tell the watches."""
        current = self._current
        if current is not None and not current.in_place:
            return
        if self._serving is not None:
            self._serving.stop(after=RETIRE_AFTER)
            self._serving = None
        covered = current.directories if current is not None else frozenset[Path]()
        for watch in self._watches.values():
            if _directories(watch.homes) <= covered:
                watch.in_place()

    async def _follow(self, watcher: _Watcher) -> None:
        """Run `watcher` until it is stopped, calling back the watches whose paths changed."""
        # Imported on first subscription: it costs start-up time.
        from watchfiles import Change, watch

        bursts = watch(
            *sorted(watcher.directories),
            recursive=False,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=watcher,
        )
        try:
            # Each wait for a burst runs in a worker thread; the watcher stops within a step.
            while (changes := await anyio.to_thread.run_sync(next, bursts, None)) is not None:
                touched = {Path(path) for _, path in changes}
                remade = {Path(p) for change, p in changes if change != Change.modified}
                if remade := {p for p in remade if self._shapes_a_home(p)}:
                    self._remade |= remade  # deleted, or made again: a new watch is needed
                    self._changed.set()
                touched |= {path.parent for path in touched}
                await self._call(
                    {w.callback for w in list(self._watches.values()) if w.paths & touched}
                )
        except Exception:  # a directory went away, inotify ran out: not the server's end
            logger.exception("Cannot watch %s", ", ".join(map(str, sorted(watcher.directories))))
            watcher.arrive()
        finally:
            bursts.close()
            self._running.discard(watcher)


def _directories(homes: Iterable[Path]) -> set[Path]:
    """Return the directories to watch for `homes`.

    That is each home with the directory above it; while a home is missing, the nearest
    directory above it that exists, where it will show up again. Directories this process
    may not list are left out: the one watch would fail for every subscriber (a project in
    a 711 home directory, say); a server refuses to subscribe what it cannot watch.
    """
    directories: set[Path] = set()
    for home in homes:
        if home.is_dir():
            directories |= {home, home.parent}
        else:
            directories.add(next(d for d in home.parents if d.is_dir()))
    return {d for d in directories if os.access(d, os.R_OK)}


def _at_or_above(path: Path, home: Path) -> bool:
    """Whether `path` is `home` or a directory above it."""
    return path == home or path in home.parents


def _absolute(paths: Iterable[Path]) -> frozenset[Path]:
    """Return `paths` made absolute, without resolving symbolic links."""
    return frozenset(Path(os.path.abspath(path)) for path in paths)


class Changed:
    """Given to a watch function: call it to tell the subscribers their resource changed."""

    def __init__(self, notify: Callback, files: FileWatcher, in_place: Callable[[], None]) -> None:
        self._notify = notify
        self._files = files
        self._in_place = in_place

    def in_place(self) -> None:
        """Say that changes are seen from now on: subscribing is answered then.

        `follow_files` says it itself; a watch function that does not follow files calls
        this once it is watching. A watch function that ends is in place too.
        """
        self._in_place()

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

        await self._files.watch(paths, notify, self._in_place)
