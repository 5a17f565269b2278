"""Whole directory trees watched, beside the flat file watcher: `TreeWatcher`.

Every directory of a tree is watched on its own, in one watchfiles watch (not recursive)
that serves every tree of the process; see `mcpkit.watchloop` for how it is replaced when
the set of directories changes. The directories are found by walking each root without
following symbolic links. watchfiles' own recursive watch follows them: a link to `/usr` in
a watched work tree took fifteen thousand of the user's inotify watches, and one to `/`
failed on `/proc` and left the tree unwatched. The walk goes one depth at a time, and a
tree's `skip` function may leave directories out with all below them (mcp-git leaves out
what git ignores). What `skip` answers is asked again, the tree walked anew, when a file
named in the tree's `rules` changes in it (`.gitignore`) or when the watch is told to
(`walk_again`: git's index changed, say). A tree watches at most `MAX_DIRECTORIES`
directories, the shallowest first; past that it logs a warning.

A change anywhere below a root calls the tree back, once per burst. A directory made (or
moved in) below a root is walked and watched too, and the tree is called back again once
that watch is in place, as what was written in it meanwhile was not seen. A directory
deleted or moved out is dropped.

A watch cannot see its own root come back after a deletion, nor appear if it was missing:
each root is also watched as an entry of the directory above it, by the flat watcher
(`watch_entries`). A change to a root itself (made, deleted, replaced, touched) walks the
tree again, and the tree is called back once the new watch is in place; at once if the
root is gone (or a file): there is no watch to wait for.
"""

import logging
import os
import stat
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence, Set
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio

from .watchloop import (
    Callback,
    Changes,
    Plan,
    Watcher,
    WatchLoop,
    absolute,
    call_back,
    readable_name,
    watchable,
)

logger = logging.getLogger("mcpkit.watch")

SKIP_DEPTHS = 32
"""Depths of a walk at which `skip` is asked (each question may run a program, git's): a
chain of 1,200 directories took 39 s to walk when each depth was asked."""

MAX_DIRECTORIES = 10_000
"""Directories one tree may watch: each takes one of the user's inotify watches, of which
a system may allow as few as 8,192 for every program of the user together."""

WatchEntries = Callable[[Iterable[Path], Callback, Callable[[], None]], Awaitable[None]]
"""`FileWatcher.watch_entries`: call back on changes to the paths themselves."""

Skip = Callable[[Sequence[Path]], Awaitable[Collection[Path]]]
"""Given directories found in a tree, return those to leave out, with all below them (the
directories git ignores, say)."""


@dataclass(eq=False)
class _Tree:
    roots: frozenset[Path]
    callback: Callback
    in_place: Callable[[], None]
    skip: Skip | None
    rules: frozenset[str]  # names of files whose change may change what `skip` answers
    directories: frozenset[Path] = frozenset()  # found at or below the roots, links not followed
    entries_in_place: bool = False  # the flat watch of the roots themselves
    cut: bool = False  # it has more directories than it may watch (said once)

    def drop(self, gone: Set[Path]) -> None:
        """Forget the directories `gone` and all below them."""
        # Compared as text: Path.parents made this most of the cost of a deletion.
        below = tuple(os.path.join(directory, "") for directory in map(str, gone))
        kept = (d for d in self.directories if d not in gone and not str(d).startswith(below))
        self.directories = frozenset(kept)

    async def walk(self, tops: list[Path], room: int) -> frozenset[Path]:
        """Return up to `room` directories at or below `tops`, warning once if there are more."""
        found, more = await _walk(tops, room, self.skip)
        if more and not self.cut:
            self.cut = True
            logger.warning(
                "Watching only %d directories below %s: changes in the others go unseen",
                MAX_DIRECTORIES,
                ", ".join(map(str, sorted(self.roots))),
            )
        return found


class TreeWatcher(WatchLoop):
    """One watch for every directory of the trees of the process. Run `run()` in a task."""

    def __init__(self, watch_entries: WatchEntries) -> None:
        super().__init__()
        self._watch_entries = watch_entries
        self._trees: dict[object, _Tree] = {}
        # Directories new to the watch, or made again since it began: once a new watch
        # is in place, their trees are called back, as what happened there was not seen.
        self._fresh: set[Path] = set()

    async def watch(
        self,
        roots: Iterable[Path],
        callback: Callback,
        in_place: Callable[[], None],
        skip: Skip | None = None,
        rules: Collection[str] = (),
    ) -> None:
        """Call `callback` after each burst of changes at or below `roots`; until cancelled.

        `in_place` is called once those changes are seen (maybe more than once). The
        directories `skip` leaves out are not watched, nor what is below them; a change to
        a file named in `rules` walks the tree again (see `walk_again`).
        """
        key = object()
        tree = _Tree(absolute(roots), callback, in_place, skip, frozenset(rules))
        tree.directories = await tree.walk(await _run(_roots, tree.roots), MAX_DIRECTORIES)

        async def roots_changed() -> None:
            # A root made again as a link to elsewhere (`/`, say) is not followed: gone.
            real = await _run(_real, tree.roots)
            tree.directories = await tree.walk(real, MAX_DIRECTORIES)
            self._fresh |= tree.roots
            self._wake()
            # A root that is a directory now is called back once its new watch is in
            # place (`_settle`); one that is gone, a file or a link has no watch to wait for.
            if len(real) < len(tree.roots):
                await callback()

        def entries_in_place() -> None:
            tree.entries_in_place = True
            self._arrived()

        self._trees[key] = tree
        self._wake()
        try:
            await self._watch_entries(tree.roots, roots_changed, entries_in_place)
        finally:
            del self._trees[key]
            self._wake()

    async def walk_again(self, callback: Callback) -> None:
        """Walk again the trees watched for `callback`, asking their `skip` afresh.

        For when what `skip` answers may have changed: a directory it no longer leaves
        out is watched, and the tree called back once it is (what happened there was not
        seen); one it leaves out now is dropped.
        """
        for tree in [t for t in self._trees.values() if t.callback is callback]:
            await self._walk_again(tree)

    async def _walk_again(self, tree: _Tree) -> None:
        before = tree.directories
        tops = sorted(root for root in tree.roots if root in before)
        found = await tree.walk(tops, MAX_DIRECTORIES)
        # Directories made while the walk went on were added beside it: they stay.
        now = found | (tree.directories - before)
        if now != tree.directories:
            self._fresh |= now - tree.directories
            tree.directories = now
            self._wake()

    def _plan(self) -> Plan:
        directories = frozenset(d for t in self._trees.values() for d in t.directories)
        fresh = frozenset(self._fresh & directories)
        self._fresh.clear()
        return Plan(directories, bool(fresh), partial(self._settle, fresh=fresh))

    async def _settle(self, watcher: Watcher, *, fresh: frozenset[Path]) -> None:
        """Once `watcher` is in place, call back the trees with `fresh` directories."""
        await watcher.placed.wait()
        trees = list(self._trees.values())
        await call_back({t.callback for t in trees if not t.directories.isdisjoint(fresh)})

    def _placed(self, covered: frozenset[Path]) -> None:
        for tree in list(self._trees.values()):
            if tree.entries_in_place and tree.directories <= covered:
                tree.in_place()

    async def _changes(self, changes: Changes) -> None:
        from watchfiles import Change  # imported by now: the watch runs

        # A root's own changes are the flat watcher's to tell: not twice.
        changed = {Path(path) for _, path in changes}
        trees = list(self._trees.values())
        told = {t.callback for t in trees if any(p.parent in t.directories for p in changed)}
        deleted = {Path(path) for change, path in changes if change == Change.deleted}
        added = {Path(path) for change, path in changes if change == Change.added}
        for tree in trees:  # before any wait, so that no plan sees them
            if gone := deleted & tree.directories:
                tree.drop(gone)
        for tree in trees:
            if any(p.name in tree.rules and p.parent in tree.directories for p in changed):
                await self._walk_again(tree)
            made = {p for p in added if p.parent in tree.directories} - tree.directories
            room = MAX_DIRECTORIES - len(tree.directories)
            if made and (found := await tree.walk(await _run(_real, made), room)):
                # Two watches told it (the one before serves until this one is in place):
                # new to the tree once, not twice, or it would make two new watches.
                found -= tree.directories
                tree.directories |= found
                self._fresh |= found
        if self._fresh:
            self._wake()
        await call_back(told)

    def _missed(self, directories: frozenset[Path]) -> None:
        self._fresh |= directories

    async def _lost(self, directories: frozenset[Path]) -> None:
        for tree in list(self._trees.values()):
            if gone := directories & tree.directories:
                tree.drop(gone)
        self._wake()


async def _walk(tops: list[Path], limit: int, skip: Skip | None) -> tuple[frozenset[Path], bool]:
    """Return up to `limit` directories at or below `tops`, and whether there are more.

    One depth at a time, the shallowest first: what `skip` leaves out at one depth is
    not listed for the next (`skip` is asked at the first `SKIP_DEPTHS` depths). Links are
    not followed (`tops` are taken as they are).
    """
    found: list[Path] = []
    depth, level = tops, 0
    while depth:
        if skip is not None and level < SKIP_DEPTHS:
            left_out = set(await skip(depth))
            depth = [directory for directory in depth if directory not in left_out]
        room = limit - len(found)
        if len(depth) > room:
            return frozenset(found + depth[:room]), True
        found += depth
        depth, level = await _run(_below_each, depth), level + 1
    return frozenset(found), False


async def _run(
    function: Callable[[Iterable[Path]], list[Path]], paths: Iterable[Path]
) -> list[Path]:
    """Run `function(paths)` in a worker thread: it reads the disk."""
    return await anyio.to_thread.run_sync(function, paths)


def _roots(roots: Iterable[Path]) -> list[Path]:
    """Return the roots a watch can take in (one may be a link to a directory)."""
    return sorted(root for root in roots if watchable(root))


def _real(paths: Iterable[Path]) -> list[Path]:
    """Return those of `paths` that are directories themselves, not links to one."""
    return sorted(path for path in paths if _listable_directory(str(path)))


def _below_each(directories: Iterable[Path]) -> list[Path]:
    """Return the directories right below each of `directories`, links left out."""
    found: list[Path] = []
    for directory in directories:
        try:
            with os.scandir(directory) as entries:
                # The entry's type comes with it: a file costs no system call.
                below = (e.path for e in entries if e.is_dir(follow_symlinks=False))
                found += [Path(path) for path in sorted(p for p in below if _listable(p))]
        except OSError:  # gone meanwhile: its deletion is told, and drops it
            continue
    return found


def _listable_directory(path: str) -> bool:
    """Whether `path` is itself a directory (not a link to one) this process may list."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) and _listable(path)


def _listable(directory: str) -> bool:
    """Whether this process may list `directory`, and a watch take in its name."""
    return readable_name(directory) and os.access(directory, os.R_OK)
