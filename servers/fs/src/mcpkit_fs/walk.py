"""Operations that walk a directory tree: the tree itself, search by name, search by content.

A walk goes through directory descriptors and never follows a link to a directory, leaves
out denied and excluded entries (and, when asked, what `.gitignore` files ignore), and is
bounded: depth, entries, results. It calls `tick(count)` as it goes, every `TICK_EVERY`
entries; the server uses it to report progress and to stop when the request is cancelled.
"""

import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .globs import Glob, GlobSet, IgnoreRule, is_ignored, parse_gitignore
from .models import ContentMatch, ContentMatches, EntryType, Matches, Tree, TreeNode
from .ops import entry_type
from .sandbox import AllowedDir, FsError, Sandbox, open_directory
from .text import BinaryFile, sniff

Tick = Callable[[int], None]
TICK_EVERY = 256
MAX_SEARCHED_FILE = 8 * 1024 * 1024  # larger files are skipped by search_content
MAX_MATCH_CHARS = 500  # a longer matching line is cut
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _no_tick(count: int) -> None:
    """Default `tick`: nothing to report."""


@dataclass(frozen=True)
class Found:
    """An entry met by a walk; `dir_fd` (its directory) is open only during that step."""

    relative: str  # below the walk's start, `/`-separated
    name: str
    type: EntryType
    depth: int  # 1 for the entries of the start directory
    dir_fd: int


class _Walker:
    """A depth-first walk below one directory, in name order."""

    def __init__(
        self,
        sandbox: Sandbox,
        root: AllowedDir,
        base: str,
        *,
        exclude: GlobSet,
        gitignore: bool,
        max_depth: int | None,
        tick: Tick,
    ) -> None:
        self.sandbox = sandbox
        self.root = root
        self.base = base  # the start directory, relative to the root
        self.exclude = exclude
        self.gitignore = gitignore
        self.max_depth = max_depth
        self.tick = tick
        self.seen = 0

    def walk(self, fd: int, relative: str = "", depth: int = 1) -> Iterator[Found]:
        """Yield the entries below the directory open at `fd`."""
        rules = self._rules(fd, relative) if self.gitignore else []
        yield from self._walk(fd, relative, depth, rules)

    def _walk(self, fd: int, relative: str, depth: int, rules: list[IgnoreRule]) -> Iterator[Found]:
        for name in sorted(os.listdir(fd)):
            path = f"{relative}/{name}" if relative else name
            if self.exclude.match(path) or self.sandbox.is_denied(
                self.root, f"{self.base}/{path}" if self.base else path
            ):
                continue
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except OSError:  # gone since the listing
                continue
            kind = entry_type(mode)
            if rules and (name == ".git" or is_ignored(rules, path, kind == "directory")):
                continue
            self.seen += 1
            if self.seen % TICK_EVERY == 0:
                self.tick(self.seen)
            yield Found(path, name, kind, depth, fd)
            if kind == "directory" and (self.max_depth is None or depth < self.max_depth):
                try:
                    sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:  # unreadable or swapped for a link: not descended
                    continue
                try:
                    more = self._rules(sub, path) if self.gitignore else []
                    yield from self._walk(sub, path, depth + 1, rules + more)
                finally:
                    os.close(sub)

    def _rules(self, fd: int, relative: str) -> list[IgnoreRule]:
        """Return the rules of the `.gitignore` in the directory open at `fd`, if any."""
        try:
            handle = os.open(".gitignore", _FILE_FLAGS, dir_fd=fd)
        except OSError:
            return []
        with os.fdopen(handle, "rb") as file:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                return []
            text = file.read(1 << 20).decode("utf-8", "replace")
        return parse_gitignore(text, relative)


def _start(
    sandbox: Sandbox,
    path: str,
    *,
    exclude: list[str],
    gitignore: bool = False,
    max_depth: int | None = None,
    tick: Tick,
) -> tuple[str, int, _Walker]:
    """Open the start directory; return its shown path, its descriptor and a walker."""
    with sandbox.place(path) as place:
        fd = open_directory(place)
        walker = _Walker(
            sandbox,
            place.root,
            place.relative,
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
    tick: Tick = _no_tick,
) -> Tree:
    """Return the tree below a directory, at most `max_depth` levels and `max_entries`.

    Raises:
        FsError: the path is not a directory that may be read.
    """
    shown, fd, walker = _start(sandbox, path, exclude=exclude, max_depth=max_depth, tick=tick)
    top: list[TreeNode] = []
    levels = [top]  # levels[d]: the children list being filled at depth d + 1
    count = 0
    truncated = False
    try:
        for found in walker.walk(fd):
            if count >= max_entries:
                truncated = True
                break
            count += 1
            del levels[found.depth :]
            node = TreeNode(name=found.name, type=found.type)
            if found.type == "directory":
                node.children = []
                node.truncated = found.depth >= max_depth
            levels[-1].append(node)
            if node.children is not None and not node.truncated:
                levels.append(node.children)
    finally:
        os.close(fd)
    return Tree(path=shown, tree=top, entries=count, truncated=truncated)


def search_files(
    sandbox: Sandbox,
    path: str,
    pattern: str,
    *,
    exclude: list[str],
    max_results: int,
    tick: Tick = _no_tick,
) -> Matches:
    """Find entries below a directory whose path matches a glob.

    A pattern without glob characters matches names that contain it, ignoring case, as
    the reference server once did.

    Raises:
        FsError: the path is not a directory that may be read.
    """
    matches = _name_matcher(pattern)
    shown, fd, walker = _start(sandbox, path, exclude=exclude, tick=tick)
    found: list[str] = []
    truncated = False
    try:
        for entry in walker.walk(fd):
            if matches(entry.relative):
                if len(found) >= max_results:
                    truncated = True
                    break
                found.append(f"{shown.rstrip('/')}/{entry.relative}")
    finally:
        os.close(fd)
    return Matches(path=shown, matches=found, truncated=truncated)


def _name_matcher(pattern: str) -> Callable[[str], bool]:
    """Return a test of relative paths for a search_files pattern."""
    if any(char in pattern for char in "*?["):
        return Glob(pattern).match
    needle = pattern.lower()
    return lambda relative: needle in relative.rsplit("/", 1)[-1].lower()


def search_content(
    sandbox: Sandbox,
    path: str,
    query: str,
    *,
    is_regex: bool = False,
    case_sensitive: bool = False,
    include: str | None = None,
    exclude: list[str],
    context_lines: int = 0,
    max_results: int = 200,
    gitignore: bool = True,
    tick: Tick = _no_tick,
) -> ContentMatches:
    """Find lines matching a text or regular expression in the files below a directory.

    Binary files, files over 8 MiB, and what `.gitignore` files ignore are skipped.

    Raises:
        FsError: the expression is invalid, or the path is not a readable directory.
    """
    try:
        regex = re.compile(
            query if is_regex else re.escape(query), 0 if case_sensitive else re.IGNORECASE
        )
    except re.error as exc:
        raise FsError(f"Invalid regular expression: {exc}. Fix it or set is_regex=false.") from None
    only = Glob(include) if include else None
    shown, fd, walker = _start(sandbox, path, exclude=exclude, gitignore=gitignore, tick=tick)
    matches: list[ContentMatch] = []
    files = 0
    try:
        for entry in walker.walk(fd):
            if entry.type != "file" or (only is not None and not only.match(entry.relative)):
                continue
            text = _searchable_text(entry)
            files += 1
            if text is None or regex.search(text) is None:  # one fast scan rules most files out
                continue
            name = f"{shown.rstrip('/')}/{entry.relative}"
            room = max_results - len(matches)
            matches += _matching_lines(name, text, regex, context_lines, room + 1)
            if len(matches) > max_results:
                break
    finally:
        os.close(fd)
    return ContentMatches(
        path=shown,
        matches=matches[:max_results],
        files_searched=files,
        truncated=len(matches) > max_results,
    )


def _searchable_text(entry: Found) -> str | None:
    """Return the text of a regular file to search, or None to skip it."""
    try:
        handle = os.open(entry.name, _FILE_FLAGS, dir_fd=entry.dir_fd)
    except OSError:
        return None
    with os.fdopen(handle, "rb") as file:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_SEARCHED_FILE:
            return None
        data = file.read(MAX_SEARCHED_FILE)
    try:
        codec = sniff(data[:8192])
    except BinaryFile:
        return None
    return data[len(codec.bom) :].decode(codec.encoding, "replace")


def _matching_lines(
    name: str, text: str, regex: re.Pattern[str], context: int, limit: int
) -> list[ContentMatch]:
    """Return up to `limit` matching lines of `text` with `context` lines around each."""
    lines = text.splitlines()
    found: list[ContentMatch] = []
    for index, line in enumerate(lines):
        hit = regex.search(line)
        if hit is None:
            continue
        found.append(
            ContentMatch(
                path=name,
                line=index + 1,
                column=hit.start() + 1,
                text=line[:MAX_MATCH_CHARS],
                before=[x[:MAX_MATCH_CHARS] for x in lines[max(0, index - context) : index]],
                after=[x[:MAX_MATCH_CHARS] for x in lines[index + 1 : index + 1 + context]],
            )
        )
        if len(found) >= limit:
            break
    return found
