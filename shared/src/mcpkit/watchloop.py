"""One `watchfiles` watch at a time over a set of directories that changes: `WatchLoop`.

The file watcher's two loops (directories watched for their entries, trees watched whole)
share this machinery. A loop asks its subclass which directories its watches need (`_plan`); a
new set gets a new watchfiles watch, and the old one stops once the new one is in place
and the old has delivered the burst it was gathering (a change at that moment may be told
twice). A burst of changes (debounced by watchfiles) reaches the subclass as one call.

A directory stays in the watch for `KEEP_FOR` seconds after the plan last wanted it. Each
new watch costs two threads (watchfiles' and the worker waiting on it), and subscriptions
that come and go over the same files would otherwise make one every time: a churn of
threads that leaves glibc's heaps fragmented. A kept directory that is deleted (or moved)
is dropped at once, as its watch is gone with it.
"""

import logging
import math
import os
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import anyio

logger = logging.getLogger("mcpkit.watch")

Callback = Callable[[], Awaitable[None]]
Changes = Collection[tuple[int, str]]  # watchfiles' (Change, path): Change is an IntEnum

DEBOUNCE_MS = 300  # longest a burst of changes is gathered before subscribers hear of it
STEP_MS = 50  # quiet time that ends a burst
RETIRE_AFTER = (DEBOUNCE_MS + 2 * STEP_MS) / 1000  # a replaced watch delivers what it began
KEEP_FOR = 60.0  # seconds a directory stays watched after the plan last wanted it
RETRY_FIRST = 1.0  # seconds before a watch that failed is tried again, doubling each time
RETRY_LONGEST = 60.0


class Watcher:
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
        # Directories deleted (or moved away) since the watch began: their inotify watch
        # went with them, so a plan without them needs no new watch.
        self.dead: set[Path] = set()

    @property
    def live(self) -> frozenset[Path]:
        """The directories it watches still (all but the dead)."""
        return self.directories - self.dead

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


class Plan(NamedTuple):
    """What a loop's watches need now."""

    directories: frozenset[Path]
    renew: bool
    """A new watch even if the directories are the same (one was deleted and made again)."""
    settle: Callable[[Watcher], Coroutine[Any, Any, None]]
    """Run beside a new watch (say, to call back what changed before it was in place)."""


class WatchLoop:
    """Runs one watchfiles watch at a time, replaced whenever its subclass's plan changes.

    A subclass says what to watch (`_plan`), what a burst of changes means (`_changes`) and
    which of its watches a watch in place covers (`_placed`); it calls `_wake()` when what
    it needs may have changed. Run `run()` in a task.
    """

    def __init__(self) -> None:
        self._wakeup = anyio.Event()
        self._current: Watcher | None = None  # the newest
        self._serving: Watcher | None = None  # the one before, in place, until the newest is
        self._running: set[Watcher] = set()  # all with a thread, to stop them at the end
        self._wanted_at: dict[Path, float] = {}  # directory -> when the plan last wanted it
        self._failures = 0  # watches that failed in a row
        self._retry_at = math.inf  # time.monotonic() at which a failed watch is tried again
        self._unseen: frozenset[Path] = frozenset()  # directories a failed watch was to watch

    def _plan(self) -> Plan:
        """Return the directories to watch now, and what a new watch of them should do."""
        raise NotImplementedError

    async def _changes(self, changes: Changes) -> None:
        """Handle one burst of changes."""
        raise NotImplementedError

    def _placed(self, covered: frozenset[Path]) -> None:
        """Tell the watches that a watch of the `covered` directories serves them."""
        raise NotImplementedError

    def _missed(self, directories: frozenset[Path]) -> None:
        """Note that changes in `directories` went unseen: call their watches back later.

        That is once a new watch is in place.
        """
        raise NotImplementedError

    async def _lost(self, directories: frozenset[Path]) -> None:
        """Handle `directories` that went away before a watch of them began: plan again."""
        self._wake()

    def _try_again(self, directories: frozenset[Path]) -> None:
        """Make a new watch of `directories` later, the longer the more watches failed."""
        self._failures += 1
        self._unseen |= directories
        delay = min(RETRY_FIRST * 2 ** min(self._failures - 1, 16), RETRY_LONGEST)
        self._retry_at = time.monotonic() + delay
        self._wake()

    def _wake(self) -> None:
        """Make the loop ask for a plan again."""
        self._wakeup.set()

    async def run(self) -> None:
        """Watch what is asked for, with a new watch whenever the plan changes."""
        async with anyio.create_task_group() as task_group:
            try:
                while True:
                    self._wakeup = anyio.Event()
                    retry = time.monotonic() >= self._retry_at
                    if retry:
                        self._retry_at = math.inf
                        self._missed(self._unseen)
                        self._unseen = frozenset()
                    plan = self._plan()
                    directories = self._keep(plan.directories)
                    previous = self._current
                    renew = plan.renew or retry
                    # A deleted directory needs no new watch (a build making and removing
                    # directories replaced the watch of a whole tree each time); a watch
                    # left with nothing but deleted ones ends.
                    live = previous.live if previous is not None else frozenset[Path]()
                    changed = not live or directories != live or renew
                    # After a failure, no new watch before its retry: one made at once would
                    # fail the same way (inotify's limit), again and again, at full speed.
                    if changed and self._retry_at == math.inf:
                        self._replace(previous)
                        self._current = Watcher(directories, self._arrived) if directories else None
                        if self._current is not None:
                            self._running.add(self._current)
                            task_group.start_soon(self._follow, self._current)
                            task_group.start_soon(plan.settle, self._current)
                    self._arrived()
                    until_retry = self._retry_at - time.monotonic()
                    with anyio.move_on_after(min(self._until_one_expires(), until_retry)):
                        await self._wakeup.wait()
            finally:
                # watchfiles watches in a thread that cancellation cannot reach: stopping
                # ends it within a step instead of its 5 s timeout.
                for watcher in self._running:
                    watcher.stop()

    def _keep(self, wanted: frozenset[Path]) -> frozenset[Path]:
        """Return `wanted` and the directories wanted in the last `KEEP_FOR` s still there."""
        now = time.monotonic()
        self._wanted_at.update(dict.fromkeys(wanted, now))
        self._wanted_at = {
            directory: at
            for directory, at in self._wanted_at.items()
            if directory in wanted or (now - at < KEEP_FOR and watchable(directory))
        }
        return frozenset(self._wanted_at)

    def _until_one_expires(self) -> float:
        """Return the seconds until a kept directory is no longer kept (inf if none is)."""
        oldest = min(self._wanted_at.values(), default=math.inf)
        return max(0.0, oldest + KEEP_FOR - time.monotonic())

    def _forget_deleted(self, changes: Changes) -> None:
        """Stop keeping the directories that `changes` deleted: their watch went with them."""
        from watchfiles import Change  # imported by now: the watch runs

        deleted = {Path(path) for change, path in changes if change == Change.deleted}
        for watcher in self._running:  # whichever told it: the one before may have
            watcher.dead |= deleted & watcher.directories
        if gone := deleted & self._wanted_at.keys():
            for directory in gone:
                del self._wanted_at[directory]
            self._wake()

    def _replace(self, previous: Watcher | None) -> None:
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
        """Once the current watch is in place: retire the one before, tell the watches."""
        current = self._current
        if current is not None and not current.in_place:
            return
        if self._serving is not None:
            self._serving.stop(after=RETIRE_AFTER)
            self._serving = None
        self._placed(current.directories if current is not None else frozenset[Path]())

    async def _follow(self, watcher: Watcher) -> None:
        """Run `watcher` until it is stopped, handing each burst of changes on."""
        # Imported on first subscription: it costs start-up time.
        from watchfiles import watch

        bursts = watch(
            *sorted(map(str, watcher.directories)),  # text: Paths sort far slower
            recursive=False,  # it follows links out of a tree: see mcpkit.treewatch
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=watcher,
        )
        try:
            # Each wait for a burst runs in a worker thread; the watcher stops within a step.
            while (changes := await anyio.to_thread.run_sync(next, bursts, None)) is not None:
                self._failures = 0
                self._forget_deleted(changes)
                await self._changes(changes)
        except Exception:  # a directory went away, inotify ran out: not the server's end
            if watcher is self._current and self._serving is not None:
                # The watch it was to replace still runs: better its directories than none
                # (a replacement holds twice the inotify watches while it starts).
                self._current, self._serving = self._serving, None
            watcher.arrive()
            if gone := await anyio.to_thread.run_sync(_unwatchable, watcher.directories):
                # Deleted between the plan and the watch: a build's churn, nothing wrong.
                logger.debug("Gone before their watch began: %s", _some(sorted(gone)))
                # What it was to add, and is still there, went unseen meanwhile.
                current = self._current
                served = frozenset[Path]()
                if current is not None and current is not watcher:
                    served = current.live
                self._missed(watcher.directories - gone - served)
                await self._lost(gone)  # then a watch without them
            else:  # inotify's limit, a name watchfiles could not read: a while later
                shown = sorted(watcher.directories)
                logger.exception("Cannot watch %d directories: %s", len(shown), _some(shown))
                self._try_again(watcher.directories)
        finally:
            bursts.close()
            self._running.discard(watcher)


async def call_back(callbacks: Iterable[Callback]) -> None:
    """Call each callback; one's failure is logged and does not stop the others."""
    for callback in callbacks:
        try:
            await callback()
        except Exception:  # one subscription's trouble must not stop the others
            logger.exception("Telling the subscribers of a change failed")


def watchable(directory: Path) -> bool:
    """Whether `directory` is a directory this process may list, so a watch can take it in."""
    return readable_name(str(directory)) and directory.is_dir() and os.access(directory, os.R_OK)


def readable_name(path: str) -> bool:
    """Whether watchfiles can take `path`: a byte that is not UTF-8 fails its whole watch."""
    try:
        path.encode()
    except UnicodeEncodeError:  # a lone surrogate: Python's stand-in for such a byte
        return False
    return True


def _some(paths: list[Path], shown: int = 5) -> str:
    """Return the first `shown` of `paths` for a message, and how many more there are."""
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(map(str, paths[:shown])) + more


def _unwatchable(directories: frozenset[Path]) -> frozenset[Path]:
    """Return those of `directories` that a watch cannot take in now."""
    return frozenset(d for d in directories if not watchable(d))


def absolute(paths: Iterable[Path]) -> frozenset[Path]:
    """Return `paths` made absolute, without resolving symbolic links."""
    return frozenset(Path(os.path.abspath(path)) for path in paths)
