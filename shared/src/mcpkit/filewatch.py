"""The process's one file watcher, shared by every file subscription: `FileWatcher`.

It runs one `watchfiles` watch over the directories that current subscriptions need (not
recursive), started by the first subscription; see `mcpkit.watchloop` for how a new set of
directories replaces the watch. Trees watched whole (`watch_tree`) get a watch of their own
beside it, of every directory in them (`mcpkit.treewatch`).

A watched directory that is deleted loses its watch for good, so the directory above it is
watched too, and while it is missing, the nearest directory above it that exists: when it
comes back (`rm -rf build && mkdir -p build/out` included), a new watch takes it in, and
the callbacks of the files in it are called once, as what changed there before could not
be seen.
"""

from collections.abc import Callable, Collection, Iterable
from functools import partial
from pathlib import Path
from typing import NamedTuple

import anyio

from .treewatch import Skip, TreeWatcher
from .watchloop import Callback, Changes, Plan, Watcher, WatchLoop, absolute, call_back, watchable


class _Watch(NamedTuple):
    homes: frozenset[Path]  # the directories where changes to `paths` show up
    paths: frozenset[Path]
    callback: Callback
    in_place: Callable[[], None]
    exact: bool  # only changes to `paths` themselves, not to what is in them, call back


class FileWatcher(WatchLoop):
    """One watcher for every file subscription of the process. Run `run()` in a task."""

    def __init__(self) -> None:
        super().__init__()
        self._watches: dict[object, _Watch] = {}
        self._remade: set[Path] = set()  # homes, or directories above them, added or deleted
        self.trees = TreeWatcher(self.watch_entries)

    async def watch(
        self, paths: Iterable[Path], callback: Callback, in_place: Callable[[], None]
    ) -> None:
        """Call `callback` after each burst of changes to `paths`; runs until cancelled.

        A directory in `paths` changes when an entry in it does (not deeper: see
        `watch_tree`). `in_place` is called once changes to `paths` are seen (maybe more
        than once).
        """
        watched = absolute(paths)
        homes = frozenset(p if p.is_dir() else p.parent for p in watched)
        await self._watch(_Watch(homes, watched, callback, in_place, exact=False))

    async def watch_entries(
        self, paths: Iterable[Path], callback: Callback, in_place: Callable[[], None]
    ) -> None:
        """Like `watch`, but only a change to `paths` themselves calls back.

        A directory in `paths` changes when it is made, deleted, moved or touched; not when
        what is in it changes.
        """
        watched = absolute(paths)
        homes = frozenset(p.parent for p in watched)
        await self._watch(_Watch(homes, watched, callback, in_place, exact=True))

    async def watch_tree(
        self,
        roots: Iterable[Path],
        callback: Callback,
        in_place: Callable[[], None],
        skip: Skip | None = None,
        rules: Collection[str] = (),
    ) -> None:
        """Call `callback` after each burst of changes at or below `roots`; until cancelled.

        A directory made below a root after the call is watched too; a root may be a file,
        or missing for now. `in_place` is called once those changes are seen. The
        directories `skip` leaves out are not watched, nor what is below them; a change to
        a file named in `rules` asks `skip` again (`TreeWatcher.walk_again`).
        """
        await self.trees.watch(roots, callback, in_place, skip, rules)

    async def run(self) -> None:
        """Watch what is asked for, flat and whole trees, with a new watch when that changes."""
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(self.trees.run)
            await super().run()

    async def _watch(self, watch: _Watch) -> None:
        """Keep `watch` among the watches until cancelled."""
        key = object()
        self._watches[key] = watch
        self._wake()
        try:
            await anyio.sleep_forever()
        finally:
            del self._watches[key]
            self._wake()

    def _plan(self) -> Plan:
        missing = self._missing_homes()  # before the directories: one may come
        directories = frozenset(self._wanted())
        # A watch on the old one sees nothing; files in it changed unseen.
        back = frozenset(d for d in self._remade if d.is_dir())
        self._remade.clear()
        return Plan(directories, bool(back), partial(self._settle, back=back, missing=missing))

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
        self, watcher: Watcher, *, back: frozenset[Path], missing: frozenset[Path]
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
            self._wake()
        watches = list(self._watches.values())
        await call_back(
            {w.callback for w in watches if any(_at_or_above(d, h) for d in back for h in w.homes)}
        )

    def _missed(self, directories: frozenset[Path]) -> None:
        self._remade |= directories

    def _placed(self, covered: frozenset[Path]) -> None:
        for watch in self._watches.values():
            if _directories(watch.homes) <= covered:
                watch.in_place()

    async def _changes(self, changes: Changes) -> None:
        from watchfiles import Change  # imported by now: the watch runs

        changed = {Path(path) for _, path in changes}
        remade = {Path(p) for change, p in changes if change != Change.modified}
        if remade := {p for p in remade if self._shapes_a_home(p)}:
            self._remade |= remade  # deleted, or made again: a new watch is needed
            self._wake()
        touched = changed | {path.parent for path in changed}
        await call_back(
            {
                w.callback
                for w in list(self._watches.values())
                if w.paths & (changed if w.exact else touched)
            }
        )


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
    return {d for d in directories if watchable(d)}


def _at_or_above(path: Path, home: Path) -> bool:
    """Whether `path` is `home` or a directory above it."""
    return path == home or path in home.parents
