"""What a watch function gets to tell subscribers that their resource changed: `Changed`.

A watch function (`@app.watch(uri)`) runs while someone is subscribed to a matching URI and
is cancelled when the last subscriber leaves. It gets a `Changed`: awaiting `changed()`
tells the subscribers. Two helpers do that until the subscription ends:

- `await changed.follow_files(paths)` on every change to those files or directories (with
  `recursive=True`, anywhere in the trees below them), through the process's one file
  watcher (`mcpkit.filewatch`);
- `await changed.poll(fingerprint, interval=...)` whenever a source that cannot be watched
  as files (a SQLite database's `PRAGMA data_version`, a web page's ETag, a git ref read
  through a command) gives another fingerprint than the last.

A subscription is answered once its watch is in place (see `Changed.in_place`), so a change
made right after the answer is not missed; both helpers say so themselves.
"""

import logging
import math
from collections.abc import Awaitable, Callable, Collection, Iterable
from functools import partial
from pathlib import Path

import anyio

from .filewatch import FileWatcher
from .treewatch import Skip
from .watchloop import Callback

__all__ = ["Changed", "FileWatcher", "Fingerprint"]

logger = logging.getLogger("mcpkit.watch")

Fingerprint = Callable[[], Awaitable[object]]
"""An async function returning a value that differs (`!=`) whenever the source changed."""


class Changed:
    """Given to a watch function: call it to tell the subscribers their resource changed."""

    def __init__(self, notify: Callback, files: FileWatcher, in_place: Callable[[], None]) -> None:
        self._notify = notify
        self._files = files
        self._in_place = in_place
        self._trees: list[Callback] = []  # how the trees followed here call back

    def in_place(self) -> None:
        """Say that changes are seen from now on: subscribing is answered then.

        `follow_files` and `poll` say it themselves; a watch function that uses neither
        calls this once it is watching. A watch function that ends is in place too.
        """
        self._in_place()

    async def __call__(self) -> None:
        """Send `notifications/resources/updated` to every subscriber of the URI."""
        await self._notify()

    def parts(self, count: int) -> list["Changed"]:
        """Return `count` parts of this `Changed`, for helpers that run at once.

        Each part tells the same subscribers; the watch is in place once every part is
        (files followed and a source polled, say: an answer as soon as one of them was in
        place could miss a change to the other).
        """
        waiting = set(range(count))

        def part_in_place(part: int) -> None:
            waiting.discard(part)
            if not waiting:
                self._in_place()

        return [Changed(self._notify, self._files, partial(part_in_place, n)) for n in waiting]

    async def follow_files(
        self,
        paths: Iterable[Path],
        *,
        recursive: bool = False,
        when: Callable[[], Awaitable[bool]] | None = None,
        skip: Skip | None = None,
        rules: Collection[str] = (),
    ) -> None:
        """Notify on every change to `paths` (files or directories); runs until cancelled.

        A directory changes when an entry in it does; with `recursive`, when anything at
        any depth below it does, in directories made after the call too (git's
        `refs/heads/feature/x` below `refs/heads`), except below those `skip` leaves out
        (see `mcpkit.treewatch`). A path may be missing for now: it is followed once it
        appears. A burst of changes notifies once (a root deleted or made again, with what
        is in it, may notify twice; so may a burst that makes directories). With `when`, a
        burst notifies only if `await when()` is true (for example, only if the content
        really differs). What `skip` answers is asked again when a file named in `rules`
        changes in the tree (`.gitignore`, say), or on `walk_again()`.
        """

        async def notify() -> None:
            if when is None or await when():
                await self._notify()

        if recursive:
            self._trees.append(notify)
            await self._files.watch_tree(paths, notify, self._in_place, skip, rules)
        else:
            await self._files.watch(paths, notify, self._in_place)

    async def walk_again(self) -> None:
        """Walk again the trees followed here (`recursive`), asking their `skip` afresh.

        Call it when what `skip` answers may have changed for a reason the trees do not
        show (git's index, where a file added by force stops its directory being ignored).
        """
        for callback in self._trees:
            await self._files.trees.walk_again(callback)

    async def poll(self, fingerprint: Fingerprint, *, interval: float = 1.0) -> None:
        """Notify whenever `await fingerprint()` differs from before; runs until cancelled.

        The first fingerprint is taken at once, and the watch is then in place; after that
        one is taken `interval` seconds after the last returned, and one that differs
        (`!=`) from the last good one notifies the subscribers. Polling stops when the
        watch is cancelled, that is when the last subscriber leaves.

        A fingerprint that raises does not end the subscription: the failure is logged on
        the `mcpkit.watch` logger (the first of a series as a warning with its traceback,
        the rest at debug level) and polling goes on, so a database locked or a web server
        down for a while costs no subscriber. The next value is compared with the last good
        one: a change made meanwhile is told. If no fingerprint has worked yet, the first
        that does notifies, as anything may have changed since subscribing. To tell
        subscribers that the source is gone, return a value for it (None, say): a failure
        is taken as passing trouble, not as a change. To refuse a URI (a table that does
        not exist), check before polling: a watch that raises before it is in place
        refuses the subscription.

        Raises:
            ValueError: `interval` is not a positive, finite number of seconds.
        """
        if not (interval > 0 and math.isfinite(interval)):
            raise ValueError(f"interval must be a positive number of seconds, not {interval!r}")
        poller = _Poller(fingerprint)
        last = await poller.take()
        self._in_place()
        while True:
            await anyio.sleep(interval)
            value = await poller.take()
            if value is not _FAILED and value != last:
                last = value
                await self._notify()


_FAILED = object()
"""What `_Poller.take` returns for a fingerprint that raised (and a first good value differs
from, as the last good one while there is none)."""


class _Poller:
    """Takes fingerprints, logging failures once per series."""

    def __init__(self, fingerprint: Fingerprint) -> None:
        self._fingerprint = fingerprint
        self._name = getattr(fingerprint, "__qualname__", repr(fingerprint))
        self._failures = 0  # in a row

    async def take(self) -> object:
        """Return the fingerprint, or `_FAILED` if it raised an exception (logged)."""
        try:
            value = await self._fingerprint()
        except Exception:  # the source's trouble, not the subscription's end: see poll
            self._failures += 1
            if self._failures == 1:
                logger.warning("Polling %s failed; polling goes on", self._name, exc_info=True)
            else:
                logger.debug("Polling %s failed again (%d in a row)", self._name, self._failures)
            return _FAILED
        if self._failures:
            logger.info("Polling %s works again after %d failures", self._name, self._failures)
            self._failures = 0
        return value
