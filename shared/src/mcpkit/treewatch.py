"""Whole directory trees watched recursively, beside the flat file watcher: `TreeWatcher`.

One recursive `watchfiles` watch serves every tree of the process (see `mcpkit.watchloop`
for how it is replaced when the set of roots changes). A change anywhere below a root calls
the tree back, once per burst; a directory made below a root later is watched as well
(watchfiles adds it as it appears).

A recursive watch cannot see its own root come back after a deletion, nor appear if it was
missing: each root is also watched as an entry of the directory above it, by the flat
watcher (`watch_entries`). A change to a root itself (made, deleted, replaced, touched)
gets a new recursive watch, and the tree is called back once that is in place, as what was
written in the root meanwhile was not seen; at once if the root is gone (or a file): there
is no watch to wait for.
"""

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from .watchloop import Callback, Changes, Plan, Watcher, WatchLoop, absolute, call_back, watchable

WatchEntries = Callable[[Iterable[Path], Callback, Callable[[], None]], Awaitable[None]]
"""`FileWatcher.watch_entries`: call back on changes to the paths themselves."""


@dataclass(eq=False)
class _Tree:
    roots: frozenset[Path]
    callback: Callback
    in_place: Callable[[], None]
    entries_in_place: bool = False  # the flat watch of the roots themselves


class TreeWatcher(WatchLoop):
    """One recursive watch for the trees of the process. Run `run()` in a task."""

    recursive = True

    def __init__(self, watch_entries: WatchEntries) -> None:
        super().__init__()
        self._watch_entries = watch_entries
        self._trees: dict[object, _Tree] = {}
        self._remade: set[Path] = set()  # roots whose watch may be stale: made, deleted...

    async def watch(
        self, roots: Iterable[Path], callback: Callback, in_place: Callable[[], None]
    ) -> None:
        """Call `callback` after each burst of changes at or below `roots`; until cancelled.

        `in_place` is called once those changes are seen (maybe more than once).
        """
        key = object()
        tree = _Tree(absolute(roots), callback, in_place)

        async def roots_changed() -> None:
            self._remade |= tree.roots
            self._wake()
            # A root that is a directory now is called back once its new watch is in
            # place (`_settle`); one that is gone, or a file, has no watch to wait for.
            if not all(watchable(root) for root in tree.roots):
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

    def _plan(self) -> Plan:
        roots = frozenset(r for t in self._trees.values() for r in t.roots if watchable(r))
        renewed = frozenset(self._remade & roots)
        self._remade.clear()
        return Plan(roots, bool(renewed), partial(self._settle, renewed=renewed))

    async def _settle(self, watcher: Watcher, *, renewed: frozenset[Path]) -> None:
        """Once `watcher` is in place, call back the trees whose roots were made again."""
        await watcher.placed.wait()
        await call_back({t.callback for t in list(self._trees.values()) if t.roots & renewed})

    def _placed(self, covered: frozenset[Path]) -> None:
        for tree in list(self._trees.values()):
            if tree.entries_in_place and {r for r in tree.roots if watchable(r)} <= covered:
                tree.in_place()

    async def _changes(self, changes: Changes) -> None:
        # A root's own changes are the flat watcher's to tell: not twice.
        changed = {Path(path) for _, path in changes}
        await call_back(
            {
                t.callback
                for t in list(self._trees.values())
                if any(root in path.parents for path in changed for root in t.roots)
            }
        )
