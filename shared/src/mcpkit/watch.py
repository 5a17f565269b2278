"""What a watch function gets to tell subscribers that their resource changed: `Changed`.

A watch function (`@app.watch(uri)`) runs while someone is subscribed to a matching URI and
is cancelled when the last subscriber leaves. It gets a `Changed`: awaiting `changed()`
tells the subscribers; `await changed.follow_files(paths)` does that on every change to
those files or directories (with `recursive=True`, anywhere in the trees below them),
through the process's one file watcher (`mcpkit.filewatch`), until the subscription ends.

A subscription is answered once its watch is in place (see `Changed.in_place`), so a change
made right after the answer is not missed; `follow_files` says so itself.
"""

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from .filewatch import FileWatcher
from .watchloop import Callback

__all__ = ["Changed", "FileWatcher"]


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
        self,
        paths: Iterable[Path],
        *,
        recursive: bool = False,
        when: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        """Notify on every change to `paths` (files or directories); runs until cancelled.

        A directory changes when an entry in it does; with `recursive`, when anything at
        any depth below it does, in directories made after the call too (git's
        `refs/heads/feature/x` below `refs/heads`). A path may be missing for now: it is
        followed once it appears. A burst of changes notifies once (a root deleted or made
        again, with what is in it, may notify twice). With `when`, a burst notifies only if
        `await when()` is true (for example, only if the content really differs).
        """

        async def notify() -> None:
            if when is None or await when():
                await self._notify()

        if recursive:
            await self._files.watch_tree(paths, notify, self._in_place)
        else:
            await self._files.watch(paths, notify, self._in_place)
