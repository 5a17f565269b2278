"""A watched directory is kept a while after its last subscription ends (`watchloop.KEEP_FOR`).

Subscriptions that come and go over the same directories reuse the one watch instead of
making a new one (two threads) each time; a kept directory is let go after a while, and at
once when it is deleted, since its watch went with it.
"""

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
import watchfiles
from watchfiles.main import FileChange

from core.watching import running
from mcpkit import watchloop
from mcpkit.watch import FileWatcher


@dataclass
class Made:
    """One watchfiles watch the file watcher made."""

    paths: frozenset[Path]
    recursive: bool
    ended: bool = False


@dataclass
class Watches:
    """Every watchfiles watch made while the test runs."""

    made: list[Made] = field(default_factory=list[Made])

    async def reach(self, done: Callable[[list[Made]], bool]) -> None:
        """Wait until `done(made)` holds, looking every 20 ms."""
        with anyio.fail_after(5):
            while not done(self.made):  # noqa: ASYNC110 - set in watchfiles' threads
                await anyio.sleep(0.02)


@pytest.fixture
def watches(monkeypatch: pytest.MonkeyPatch) -> Watches:
    real_watch = watchfiles.watch
    seen = Watches()

    def recorded(*paths: Path, **options: Any) -> Iterator[set[FileChange]]:
        made = Made(frozenset(map(Path, paths)), options["recursive"])
        seen.made.append(made)
        try:
            yield from real_watch(*paths, **options)
        finally:
            made.ended = True

    monkeypatch.setattr(watchfiles, "watch", recorded)
    return seen


async def subscribe(
    task_group: anyio.abc.TaskGroup, files: FileWatcher, path: Path, *, recursive: bool = False
) -> tuple[anyio.Event, anyio.CancelScope]:
    """Follow `path` until the scope returned is cancelled; return once it is in place.

    The event returned is set on the first change heard.
    """
    heard, in_place, scope = anyio.Event(), anyio.Event(), anyio.CancelScope()

    async def callback() -> None:
        heard.set()

    async def follow() -> None:
        with scope:
            if recursive:
                await files.watch_tree([path], callback, in_place.set)
            else:
                await files.watch([path], callback, in_place.set)

    task_group.start_soon(follow)
    with anyio.fail_after(5):
        await in_place.wait()
    return heard, scope


async def test_subscriptions_that_come_and_go_reuse_the_watch(
    tmp_path: Path, watches: Watches
) -> None:
    for name in "ab":
        (tmp_path / name).mkdir()
    files = FileWatcher()
    async with running(files) as task_group:
        for turn in range(10):
            _, scope = await subscribe(task_group, files, tmp_path / "ab"[turn % 2] / "f.txt")
            scope.cancel()
        flat = [made for made in watches.made if not made.recursive]
    # One for a and the directory above, one more once b comes: never one per subscription.
    assert [made.paths for made in flat] == [
        {tmp_path, tmp_path / "a"},
        {tmp_path, tmp_path / "a", tmp_path / "b"},
    ]


async def test_a_kept_directory_is_let_go_after_a_while(
    tmp_path: Path, watches: Watches, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watchloop, "KEEP_FOR", 0.3)
    files = FileWatcher()
    async with running(files) as task_group:
        _, scope = await subscribe(task_group, files, tmp_path / "f.txt")
        scope.cancel()
        await watches.reach(lambda made: all(watch.ended for watch in made))
    assert len(watches.made) == 1  # none made in its place: nothing is wanted


@pytest.mark.parametrize("recursive", [False, True])
async def test_a_kept_directory_deleted_and_made_again_is_watched_again(
    tmp_path: Path, watches: Watches, recursive: bool
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    followed = folder if recursive else folder / "f.txt"
    files = FileWatcher()
    async with running(files) as task_group:
        _, scope = await subscribe(task_group, files, followed, recursive=recursive)
        scope.cancel()
        await anyio.wait_all_tasks_blocked()  # the folder is kept, with nobody subscribed
        shutil.rmtree(folder)
        # The deletion stops the folder being kept (its watch went with it).
        loop = files.trees if recursive else files
        kept = loop._wanted_at  # pyright: ignore[reportPrivateUsage]
        await watches.reach(lambda _: folder not in kept)
        folder.mkdir()
        heard, _ = await subscribe(task_group, files, followed, recursive=recursive)
        (folder / "f.txt").write_text("seen by a watch of the new folder")
        with anyio.fail_after(5):
            await heard.wait()
