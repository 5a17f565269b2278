"""Whole trees watched recursively: `follow_files(..., recursive=True)` and `watch_tree`."""

import errno
import os
import shutil
import time
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
import watchfiles
from watchfiles.main import FileChange

from checked import connect
from core.watching import running
from mcpkit import Changed, Server, treewatch, watchloop
from mcpkit.testing import Client
from mcpkit.watch import FileWatcher

QUIET = 0.7
"""Seconds without a call that show none is coming (a burst is told within 0.4 s)."""


class Heard:
    """A callback that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self._called = anyio.Event()

    async def __call__(self) -> None:
        self.calls += 1
        self._called.set()

    async def hears(self, path: Path, text: str) -> None:
        """Write `text` to `path`, then wait until the callback is called once more."""
        calls = self.calls
        await anyio.Path(path).write_text(text)
        await self.reach(calls + 1)

    async def reach(self, calls: int) -> None:
        """Wait until the callback has been called `calls` times in all."""
        with anyio.fail_after(5):
            while self.calls < calls:
                self._called = anyio.Event()
                await self._called.wait()


async def follow(
    task_group: anyio.abc.TaskGroup, files: FileWatcher, path: Path, *, recursive: bool
) -> Heard:
    """Follow `path` (its tree, or its entries) until the end; return once it is in place."""
    heard, in_place = Heard(), anyio.Event()
    if recursive:
        task_group.start_soon(files.watch_tree, [path], heard, in_place.set)
    else:
        task_group.start_soon(files.watch, [path], heard, in_place.set)
    with anyio.fail_after(5):
        await in_place.wait()
    return heard


async def test_a_file_made_two_levels_down_after_subscribing_is_heard(tmp_path: Path) -> None:
    heads, tags = tmp_path / "refs" / "heads", tmp_path / "refs" / "tags"
    heads.mkdir(parents=True)
    tags.mkdir()
    files = FileWatcher()
    async with running(files) as task_group:
        tree = await follow(task_group, files, heads, recursive=True)
        flat = await follow(task_group, files, heads, recursive=False)
        # git makes refs/heads/feature/x: one burst, at several depths, is told once,
        # and once more when the directories it made are watched (what was written in
        # them before that could not be seen).
        (heads / "feature" / "deeper").mkdir(parents=True)
        (heads / "feature" / "x.lock").write_text("1234\n")
        (heads / "feature" / "x.lock").rename(heads / "feature" / "x")
        (heads / "feature" / "deeper" / "y").write_text("5678\n")
        await tree.reach(2)
        await anyio.sleep(QUIET)
        assert tree.calls == 2
        assert flat.calls == 1  # it saw refs/heads/feature made
        # The directory made after subscribing is watched: a change in it is heard, by
        # the tree only (the flat watch sees no deeper than refs/heads' own entries).
        (heads / "feature" / "x").write_text("abcd\n")
        await tree.reach(3)
        (heads / "feature" / "deeper" / "y").write_text("efgh\n")
        await tree.reach(4)
        # Outside the tree: the directory above it, and beside it.
        (tmp_path / "refs" / "packed-refs").write_text("1234 refs/heads/main\n")
        (tags / "v1").write_text("1234\n")
        (tmp_path / "HEAD").write_text("ref: refs/heads/main\n")
        await anyio.sleep(QUIET)
        assert (tree.calls, flat.calls) == (4, 1)


@pytest.mark.parametrize("exists", [True, False])
async def test_a_root_deleted_or_missing_is_followed_when_it_comes(
    tmp_path: Path, exists: bool
) -> None:
    root = tmp_path / "build"
    if exists:
        (root / "old").mkdir(parents=True)
    files = FileWatcher()
    async with running(files) as task_group:
        tree = await follow(task_group, files, root, recursive=True)
        if exists:
            shutil.rmtree(root)
            await tree.reach(1)
            await anyio.sleep(QUIET)  # told (maybe twice: the root, and what was in it)
        # Made with its content at once: the recursive watch comes after, and tells again.
        calls = tree.calls
        (root / "out").mkdir(parents=True)
        (root / "out" / "f.txt").write_text("1")
        await tree.reach(calls + 1)
        await anyio.sleep(QUIET)  # its new watch is in place
        await tree.hears(root / "out" / "f.txt", "2")


async def test_a_tree_ends_with_its_watch(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "a").mkdir(parents=True)
    files = FileWatcher()
    scope = anyio.CancelScope()
    heard, in_place = Heard(), anyio.Event()

    async def watch() -> None:
        with scope:
            await files.watch_tree([root], heard, in_place.set)

    async with running(files) as task_group:
        task_group.start_soon(watch)
        with anyio.fail_after(5):
            await in_place.wait()
        (root / "a" / "f").write_text("1")
        await heard.reach(1)
        scope.cancel()
        (root / "a" / "f").write_text("2")
        (root / "b").mkdir()
        await anyio.sleep(QUIET)
        assert heard.calls == 1


def tree_server() -> Server:
    app = Server("trees", "1")

    @app.resource("tree:///{+path}", mime_type="text/plain")
    async def listing(path: str) -> str:
        """A directory tree (what it holds is not read here)."""
        return f"the tree at /{path}"

    @app.watch("tree:///{+path}")
    async def watch_tree(path: str, changed: Changed) -> None:
        await changed.follow_files([Path("/" + path)], recursive=True)

    return app


async def test_a_tree_subscription_through_the_client(tmp_path: Path) -> None:
    root, other = tmp_path / "root", tmp_path / "other"
    root.mkdir()
    other.mkdir()
    uri, beside = f"tree://{root}", f"tree://{other}"
    async with connect(tree_server()) as client:
        await client.request("resources/subscribe", {"uri": uri})
        await client.request("resources/subscribe", {"uri": beside})
        (root / "a" / "b").mkdir(parents=True)
        (root / "a" / "b" / "c.txt").write_text("deep")
        update = await client.wait_for_notification("notifications/resources/updated", 5)
        assert update["params"] == {"uri": uri}
        await anyio.sleep(QUIET)  # told once more, maybe, when a and b are watched
        await client.request("resources/unsubscribe", {"uri": uri})
        told = updated(client)
        (root / "a" / "b" / "c.txt").write_text("unheard")
        await anyio.sleep(QUIET)
        assert updated(client) == told
    assert set(told) == {uri}


def updated(client: Client) -> list[str]:
    """The URIs of the resources/updated notifications the client has had."""
    return [
        n["params"]["uri"]
        for n in client.notifications
        if n["method"] == "notifications/resources/updated"
    ]


async def test_links_out_of_a_tree_are_not_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    (root / "vendor").symlink_to(outside)  # a hostile repository's links
    (root / "src" / "everything").symlink_to("/")
    files = FileWatcher()
    async with running(files) as task_group:
        tree = await follow(task_group, files, root, recursive=True)
        (outside / "deep" / "f.txt").write_text("not in the tree")
        (outside / "g.txt").write_text("nor this")
        await anyio.sleep(QUIET)
        assert tree.calls == 0
        # The link to / neither failed the watch nor took the machine's directories.
        (root / "src" / "main.c").write_text("int main;")
        await tree.reach(1)
        watched = files.trees._current  # pyright: ignore[reportPrivateUsage]
        assert watched is not None
        assert watched.directories == {root, root / "src"}


async def test_a_tree_watches_its_shallowest_directories_up_to_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(treewatch, "MAX_DIRECTORIES", 3)
    root = tmp_path / "root"
    (root / "a" / "deep").mkdir(parents=True)
    (root / "b").mkdir()
    files = FileWatcher()
    async with running(files) as task_group:
        tree = await follow(task_group, files, root, recursive=True)
        assert "Watching only 3 directories" in caplog.text
        (root / "a" / "deep" / "f").write_text("past the cap")
        await anyio.sleep(QUIET)
        assert tree.calls == 0
        (root / "b" / "f").write_text("within it")
        await tree.reach(1)


async def test_a_directory_gone_before_its_watch_began_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "kept").mkdir(parents=True)
    listed = treewatch._below_each  # pyright: ignore[reportPrivateUsage]

    def listed_and_one_lost(directories: Iterable[Path]) -> list[Path]:
        found = listed(directories)
        return [*found, root / "gone"] if root in directories else found  # deleted meanwhile

    monkeypatch.setattr(treewatch, "_below_each", listed_and_one_lost)
    files = FileWatcher()
    async with running(files) as task_group:
        tree = await follow(task_group, files, root, recursive=True)
        monkeypatch.setattr(treewatch, "_below_each", listed)
        await tree.reach(1)  # the new watch is in place: what happened meanwhile is told
        (root / "kept" / "f").write_text("heard")
        await tree.reach(2)


async def test_a_watch_in_parts_is_in_place_once_every_part_is() -> None:
    # mcp-git follows a work tree and polls refs: answered when the poll alone was in
    # place, a subscriber could miss an edit made at once.
    told: list[str] = []
    in_place = anyio.Event()

    async def notify() -> None:
        told.append("updated")

    changed = Changed(notify, FileWatcher(), in_place.set)
    files, polled = changed.parts(2)
    polled.in_place()
    polled.in_place()  # twice is once
    assert not in_place.is_set()
    files.in_place()
    assert in_place.is_set()
    await files()
    await polled()
    assert told == ["updated", "updated"]


async def test_what_skip_leaves_out_is_not_watched_nor_below_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "src").mkdir()
    asked: list[list[Path]] = []

    async def skip(directories: Sequence[Path]) -> list[Path]:
        asked.append(list(directories))
        return [d for d in directories if d.name in ("node_modules", "build")]

    files = FileWatcher()
    heard, in_place = Heard(), anyio.Event()
    async with running(files) as task_group:
        task_group.start_soon(files.watch_tree, [root], heard, in_place.set, skip)
        with anyio.fail_after(5):
            await in_place.wait()
        (root / "node_modules" / "pkg" / "index.js").write_text("left out")
        await anyio.sleep(QUIET)
        assert heard.calls == 0
        (root / "build" / "out").mkdir(parents=True)  # made later, left out too
        await heard.reach(1)  # root's entry changed
        (root / "build" / "out" / "a.o").write_text("left out")
        (root / "src" / "new").mkdir()
        await heard.reach(3)  # an entry of src, then the new directory watched
        await anyio.sleep(QUIET)
        (root / "src" / "new" / "main.c").write_text("heard")
        await heard.reach(4)
        await anyio.sleep(QUIET)
        assert heard.calls == 4
        watched = files.trees._current  # pyright: ignore[reportPrivateUsage]
        assert watched is not None
        assert watched.directories == {root, root / "src", root / "src" / "new"}
    assert [root / "node_modules", root / "src"] in asked  # one depth at a time


async def test_a_replacement_watch_that_fails_leaves_the_old_one_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Near the user's inotify limit a replacement, which holds twice the watches while
    # it starts, failed with ENOSPC; the watch it replaced was stopped all the same.
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    files = FileWatcher()
    async with running(files) as task_group:
        tree = await follow(task_group, files, root, recursive=True)

        attempts: list[object] = []

        def no_room(*paths: object, **options: object) -> Iterator[set[tuple[int, str]]]:
            attempts.append(paths)
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
            yield set()  # pragma: no cover - a generator, as watchfiles.watch is

        watch = watchfiles.watch
        monkeypatch.setattr(watchfiles, "watch", no_room)
        (root / "b").mkdir()  # a new directory: a new watch, which fails
        await tree.reach(1)
        await anyio.sleep(QUIET)
        await tree.hears(root / "a" / "f.txt", "still heard")
        # Not tried again at once: the loop made hundreds of watches a second.
        assert 1 <= len(attempts) <= 2
        # Tried again a while later (RETRY_FIRST), the new watch takes b in.
        monkeypatch.setattr(watchfiles, "watch", watch)
        await anyio.sleep(watchloop.RETRY_FIRST + QUIET)
        await tree.hears(root / "b" / "g.txt", "heard at last")


async def test_a_watch_that_fails_for_days_is_still_tried_again_each_minute() -> None:
    # The delay doubled without end: past a thousand failures it overflowed, and the
    # watch loop ended with an OverflowError.
    files = FileWatcher()
    files._failures = 2_000  # pyright: ignore[reportPrivateUsage]
    files._try_again(frozenset())  # pyright: ignore[reportPrivateUsage]
    waits = files._retry_at - time.monotonic()  # pyright: ignore[reportPrivateUsage]
    assert watchloop.RETRY_LONGEST - 1 < waits <= watchloop.RETRY_LONGEST


async def test_a_directory_deleted_or_moved_away_costs_no_new_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each deletion replaced the watch of the whole tree: a build making and removing
    # directories in a large tree kept a core busy.
    root, away = tmp_path / "root", tmp_path / "away"
    for name in ("a", "b", "c"):
        (root / name).mkdir(parents=True)
    made: list[object] = []
    watch = watchfiles.watch

    def counted(*paths: Path, **options: Any) -> Iterator[set[FileChange]]:
        made.append(paths)
        return watch(*paths, **options)

    monkeypatch.setattr(watchfiles, "watch", counted)
    files = FileWatcher()
    async with running(files) as task_group:
        tree = await follow(task_group, files, root, recursive=True)
        watches = len(made)
        (root / "a").rmdir()
        (root / "b").rename(away)
        await tree.reach(1)
        await anyio.sleep(QUIET)
        assert len(made) == watches
        # Moved away, b may still be watched where it went: not the tree's changes.
        calls = tree.calls
        (away / "f.txt").write_text("not in the tree")
        await anyio.sleep(QUIET)
        assert tree.calls == calls
        await tree.hears(root / "c" / "f.txt", "heard")
        # Made again, it is watched again.
        (root / "a").mkdir()
        await tree.reach(tree.calls + 1)
        await anyio.sleep(QUIET)
        assert len(made) == watches + 1
        await tree.hears(root / "a" / "f.txt", "heard again")


async def test_a_name_that_is_not_utf8_costs_only_itself(tmp_path: Path) -> None:
    # watchfiles cannot take such a path: in the list, or in an event, it failed the
    # watch of every tree of the process, for good.
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (root / os.fsdecode(b"caf\xe9")).mkdir()
    files = FileWatcher()
    async with running(files) as task_group:
        tree = await follow(task_group, files, root, recursive=True)
        watched = files.trees._current  # pyright: ignore[reportPrivateUsage]
        assert watched is not None
        assert watched.directories == {root, root / "a"}
        (root / "a" / os.fsdecode(b"f\xe9.txt")).write_text("an event it cannot read")
        await tree.reach(1)  # once watched again: what happened meanwhile went unseen
        await anyio.sleep(QUIET)
        await tree.hears(root / "a" / "g.txt", "heard again")


@pytest.mark.parametrize("made", ["in the tree", "as the root"])
async def test_a_link_made_later_is_not_followed(tmp_path: Path, made: str) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    (outside / "deep").mkdir(parents=True)
    files = FileWatcher()
    async with running(files) as task_group:
        tree = await follow(task_group, files, root, recursive=True)
        if made == "in the tree":
            link = root / "vendor"
        else:  # the root deleted and made again as a link
            link = root
            root.rename(tmp_path / "old")
        link.symlink_to(outside)
        await tree.reach(1)
        await anyio.sleep(QUIET)
        calls = tree.calls
        (outside / "deep" / "f.txt").write_text("not in the tree")
        await anyio.sleep(QUIET)
        assert tree.calls == calls
        watched = files.trees._current  # pyright: ignore[reportPrivateUsage]
        assert watched is None or not {link / "deep", outside / "deep"} & watched.directories


async def test_skip_is_asked_at_the_first_depths_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A chain of 1,200 directories took 39 s when git was asked at each depth.
    monkeypatch.setattr(treewatch, "SKIP_DEPTHS", 2)
    root = tmp_path / "root"
    (root / "a" / "b" / "c").mkdir(parents=True)
    asked: list[Sequence[Path]] = []

    async def skip(directories: Sequence[Path]) -> list[Path]:
        asked.append(directories)
        return []

    files = FileWatcher()
    in_place = anyio.Event()
    async with running(files) as task_group:
        task_group.start_soon(files.watch_tree, [root], Heard(), in_place.set, skip)
        with anyio.fail_after(5):
            await in_place.wait()
        watched = files.trees._current  # pyright: ignore[reportPrivateUsage]
        assert watched is not None
        assert watched.directories == {root, root / "a", root / "a" / "b", root / "a" / "b" / "c"}
    assert asked == [[root], [root / "a"]]


async def test_skip_is_asked_again_when_a_rules_file_changes_or_when_told(tmp_path: Path) -> None:
    # What skip answers was decided once per directory: a directory let in later by the
    # rules (a .gitignore edited) stayed unwatched for the life of the watch.
    root = tmp_path / "root"
    (root / "build").mkdir(parents=True)
    (root / "src" / "cache").mkdir(parents=True)
    ignored = {"build"}

    async def skip(directories: Sequence[Path]) -> list[Path]:
        return [d for d in directories if d.name in ignored]

    def watched() -> set[Path]:
        """The tree's directories (a watch keeps those it had a while longer: see watchloop)."""
        trees = files.trees._trees.values()  # pyright: ignore[reportPrivateUsage]
        return {directory for tree in trees for directory in tree.directories}

    files = FileWatcher()
    heard, in_place = Heard(), anyio.Event()
    async with running(files) as task_group:
        watch = partial(files.watch_tree, [root], heard, in_place.set, skip, rules=[".ignore"])
        task_group.start_soon(watch)
        with anyio.fail_after(5):
            await in_place.wait()
        assert watched() == {root, root / "src", root / "src" / "cache"}
        ignored.clear()
        ignored.add("cache")
        # The burst is told, and build once it is watched: what was written there meanwhile
        # was not seen.
        (root / "src" / ".ignore").write_text("cache\n")
        await heard.reach(2)
        await anyio.sleep(QUIET)
        assert heard.calls == 2
        assert watched() == {root, root / "src", root / "build"}
        await heard.hears(root / "build" / "a.o", "heard now")
        (root / "src" / "cache" / "x").write_text("left out now")
        await anyio.sleep(QUIET)
        assert heard.calls == 3
        # Told to, for a reason the tree does not show (git's index, say).
        ignored.add("build")
        await files.trees.walk_again(heard)
        await anyio.sleep(QUIET)
        assert watched() == {root, root / "src"}
        (root / "build" / "b.o").write_text("left out again")
        await anyio.sleep(QUIET)
        assert heard.calls == 3
