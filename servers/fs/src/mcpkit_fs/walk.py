"""Walking a directory tree: the walk itself (`start`), and the tree and search by name.

A walk goes through directory descriptors and never follows a link to a directory, leaves
out denied and excluded entries (and, when asked, what `.gitignore` files ignore), and is
bounded: depth, entries, results. It calls `tick(count)` as it goes, every `TICK_EVERY`
entries; the server uses it to report progress and to stop when the request is cancelled.
"""

import logging
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import attrgetter

from .errors import FsError
from .files import FILE_FLAGS, open_directory
from .globs import Glob, GlobSet, IgnoreRule, is_ignored, parse_gitignore
from .listing import dirent_type
from .lookup import DIR_FLAGS
from .models import EntryType, Matches, Tree, TreeNode
from .policy import AllowedDir
from .sandbox import Sandbox
from .ticks import Tick, no_tick

TICK_EVERY = 256
MAX_IGNORE_RULES = 1_000
"""`.gitignore` rules in force at once, from every file above an entry, which is matched
against each: a hostile repository's 66,000 rules made a search of 2,000 files take 99 s.
Rules past it are not applied (the walk logs where), so more is walked, never less."""
# Levels a walk goes down at most: each holds a directory open and a frame of the walk,
# and deeper trees are made to break tools, not by people.
MAX_WALK_DEPTH = 100
# A tree's JSON at most: what max_entries of usual names take. Long names would make the
# largest tree 32 MB, which a client takes seconds to parse and check.
MAX_TREE_BYTES = 4 * 1024 * 1024
_NODE_BYTES = 64  # a node's JSON besides its name

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Found:
    """An entry met by a walk; `dir_fd` (its directory) is open only during that step."""

    relative: str  # below the walk's start, `/`-separated
    name: str
    type: EntryType
    depth: int  # 1 for the entries of the start directory
    dir_fd: int


@dataclass(slots=True)
class Batch:
    """Entries of one directory met by a walk, in name order; `dir_fd` is open meanwhile.

    A batch ends with each subdirectory walked into, whose batches come next, and at each
    tick (every `TICK_EVERY` entries of the walk), so a search ticks between its reads.
    Walking by batches spares the hot loop of a search an object per entry.
    """

    directory: str  # below the walk's start, `/`-separated ("" for the start itself)
    depth: int  # of the entries: 1 for those of the start directory
    dir_fd: int
    entries: list[tuple[str, EntryType]]  # name and type

    def relative(self, name: str) -> str:
        """Return the path of the entry `name` below the walk's start."""
        return f"{self.directory}/{name}" if self.directory else name


class Walker:
    """A depth-first walk below one directory, in name order."""

    def __init__(
        self,
        sandbox: Sandbox,
        root: AllowedDir,
        base: str,
        shown: str,
        *,
        exclude: GlobSet,
        gitignore: bool,
        max_depth: int,
        tick: Tick,
    ) -> None:
        self.sandbox = sandbox
        self.root = root
        self.base = base  # the start directory, relative to the root
        self.prefix = f"{shown.rstrip('/')}/"  # of the shown paths of entries
        self.exclude = exclude
        self.gitignore = gitignore
        self.max_depth = max_depth
        self.tick = tick
        self.seen = 0
        self.too_deep: str | None = None  # the shown path of the first directory at max_depth
        self.unopened: list[str] = []  # directories (relative) that could not be walked into
        self.filtering = bool(exclude) or bool(sandbox.deny)  # checked per entry: kept cheap

    def walk(self, fd: int) -> Iterator[Found]:
        """Yield the entries below the directory open at `fd`, one by one."""
        for batch in self.batches(fd):
            for name, kind in batch.entries:
                yield Found(batch.relative(name), name, kind, batch.depth, batch.dir_fd)

    def batches(self, fd: int) -> Iterator[Batch]:
        """Yield the entries below the directory open at `fd` in batches."""
        rules: list[IgnoreRule] = []
        if self.gitignore:
            rules = self._inherited_rules(fd)
            rules += self._rules(fd, "", len(rules))
        yield from self._batches(fd, "", 1, rules)

    def _batches(
        self, fd: int, relative: str, depth: int, rules: list[IgnoreRule]
    ) -> Iterator[Batch]:
        with os.scandir(fd) as found:
            items = sorted(found, key=attrgetter("name"))
        batch = Batch(relative, depth, fd, [])
        for item in items:
            name = item.name
            # policy.join_relative, inline: a call per entry would cost this loop some 2%.
            path = f"{relative}/{name}" if relative else name
            if self.filtering and self._left_out(path):
                continue
            kind = dirent_type(item)
            if self.gitignore and (
                name == ".git" or (rules and is_ignored(rules, path, kind == "directory"))
            ):
                continue
            batch.entries.append((name, kind))
            self.seen += 1
            ticks = self.seen % TICK_EVERY == 0
            if ticks:
                self.tick(self.seen)
            descend = kind == "directory" and depth < self.max_depth
            if ticks or descend:
                yield batch
                batch = Batch(relative, depth, fd, [])
            if not descend:
                if kind == "directory" and self.too_deep is None:
                    self.too_deep = self.prefix + path
                continue
            try:
                sub = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError:  # unreadable or swapped for a link: not descended
                self.unopened.append(path)
                continue
            try:
                more = self._rules(sub, path, len(rules)) if self.gitignore else []
                yield from self._batches(sub, path, depth + 1, rules + more)
            finally:
                os.close(sub)
        if batch.entries:
            yield batch

    def _left_out(self, path: str) -> bool:
        """Return whether the entry at `path` is excluded or denied."""
        below_root = f"{self.base}/{path}" if self.base else path
        return self.exclude.match(path) or self.sandbox.is_denied(self.root, below_root)

    def _inherited_rules(self, fd: int) -> list[IgnoreRule]:
        """Return the rules of the `.gitignore` files above the start, open at `fd`.

        They are read from the allowed directory down, within the start's repository: the
        rules above a directory that holds `.git` do not apply below it.
        """
        if not self.base or _holds_git(fd):
            return []
        names = self.base.split("/")
        rules: list[IgnoreRule] = []
        try:
            current = os.open(self.root.path, DIR_FLAGS)
        except OSError:
            return []
        try:
            for index, name in enumerate(names):
                if _holds_git(current):
                    rules = []
                rules += self._rules(current, "", len(rules), above="/".join(names[index:]))
                below = os.open(name, DIR_FLAGS, dir_fd=current)
                os.close(current)
                current = below
        except OSError:  # the path changed since it was resolved: no rules from above
            return []
        finally:
            os.close(current)
        return rules

    def _rules(self, fd: int, relative: str, held: int, *, above: str = "") -> list[IgnoreRule]:
        """Return the rules of the `.gitignore` in the directory open at `fd`, if any.

        `held` rules (at most `MAX_IGNORE_RULES`) are in force already: at most that many
        are, in all.
        """
        try:
            handle = os.open(".gitignore", FILE_FLAGS, dir_fd=fd)
        except OSError:
            return []
        with os.fdopen(handle, "rb") as file:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                return []
            text = file.read(1 << 20).decode("utf-8", "replace")
        room = MAX_IGNORE_RULES - held
        rules = parse_gitignore(text, relative, above=above, most=room + 1)
        if len(rules) > room:
            logger.warning(
                "%s.gitignore: only %d of its rules are applied (at most %d at once)",
                self.prefix + (f"{relative}/" if relative else ""),
                room,
                MAX_IGNORE_RULES,
            )
        return rules[:room]


def _holds_git(fd: int) -> bool:
    """Return whether the directory open at `fd` is the top of a git repository."""
    try:
        os.stat(".git", dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def start(
    sandbox: Sandbox,
    path: str,
    *,
    exclude: list[str],
    gitignore: bool = False,
    max_depth: int = MAX_WALK_DEPTH,
    tick: Tick,
) -> tuple[str, int, Walker]:
    """Open the start directory; return its shown path, its descriptor and a walker.

    Raises:
        FsError: the path is not a directory that may be read, or a pattern of `exclude`
            is absolute (it would exclude nothing).
    """
    for pattern in exclude:
        if pattern.startswith("/"):
            raise FsError(
                f"The exclude pattern {pattern} is absolute, but it is matched against the"
                " paths below path: give it relative to path (for example node_modules or"
                " **/dist)."
            )
    with sandbox.place(path) as place:
        fd = open_directory(place)
        walker = Walker(
            sandbox,
            place.root,
            place.relative,
            place.shown,
            exclude=GlobSet(exclude),
            gitignore=gitignore,
            max_depth=max_depth,
            tick=tick,
        )
        return place.shown, fd, walker


def directory_tree(
    sandbox: Sandbox,
    path: str,
    *,
    exclude: list[str],
    max_depth: int,
    max_entries: int,
    tick: Tick = no_tick,
) -> Tree:
    """Return the tree below a directory: `max_depth` levels, `max_entries`, at most.

    The entries are also bounded by `MAX_TREE_BYTES` of JSON, about.

    Raises:
        FsError: the path is not a directory that may be read.
    """
    shown, fd, walker = start(sandbox, path, exclude=exclude, max_depth=max_depth, tick=tick)
    top: list[TreeNode] = []
    levels = [top]  # levels[d]: the children list being filled at depth d + 1
    opened: list[TreeNode] = []  # opened[d]: the directory whose children are levels[d + 1]
    entered: dict[str, TreeNode] = {}  # the directories walked into, by relative path
    count = size = 0
    truncated = False
    try:
        for found in walker.walk(fd):
            del levels[found.depth :]
            del opened[found.depth - 1 :]
            size += len(found.name) + _NODE_BYTES
            if count >= max_entries or size > MAX_TREE_BYTES:
                truncated = True
                for directory in opened:  # each holds an entry left out: `found`
                    directory["truncated"] = True
                break
            count += 1
            if found.type != "directory":
                levels[-1].append(
                    {"name": found.name, "type": found.type, "children": None, "truncated": False}
                )
                continue
            children: list[TreeNode] = []
            cut = found.depth >= max_depth
            node: TreeNode = {
                "name": found.name,
                "type": "directory",
                "children": children,
                "truncated": cut,
            }
            levels[-1].append(node)
            if not cut:
                levels.append(children)
                opened.append(node)
                entered[found.relative] = node
    finally:
        os.close(fd)
    for relative in walker.unopened:  # not empty: unknown (no permission, say)
        entered[relative]["truncated"] = True
    return Tree(path=shown, tree=top, entries=count, truncated=truncated)


def search_files(
    sandbox: Sandbox,
    path: str,
    pattern: str,
    *,
    exclude: list[str],
    max_results: int,
    offset: int = 0,
    tick: Tick = no_tick,
) -> Matches:
    """Find entries below a directory whose path matches a glob.

    A pattern without glob characters matches names that contain it, ignoring case, as
    the reference server once did. The first `offset` matches are skipped (a next page).

    Raises:
        FsError: the path is not a directory that may be read, or the pattern is absolute.
    """
    if pattern.startswith("/"):
        raise FsError(
            f"The pattern {pattern} is absolute, but it is matched against the paths below"
            " path: give the directory as path and the rest as the pattern (for example"
            " path=/home/me/src and pattern=**/*.py)."
        )
    matches = _name_matcher(pattern)
    shown, fd, walker = start(sandbox, path, exclude=exclude, tick=tick)
    found: list[str] = []
    skipped = 0
    truncated = False
    try:
        for entry in walker.walk(fd):
            if not matches(entry.relative):
                continue
            if skipped < offset:
                skipped += 1
            elif len(found) < max_results:
                found.append(walker.prefix + entry.relative)
            else:
                truncated = True
                break
    finally:
        os.close(fd)
    next_offset = offset + len(found) if truncated else None
    return Matches(
        path=shown,
        matches=found,
        truncated=truncated,
        next_offset=next_offset,
        too_deep=walker.too_deep,
    )


def _name_matcher(pattern: str) -> Callable[[str], bool]:
    """Return a test of relative paths for a search_files pattern."""
    if any(char in pattern for char in "*?["):
        return Glob(pattern).match
    needle = pattern.lower()
    return lambda relative: needle in relative.rsplit("/", 1)[-1].lower()
