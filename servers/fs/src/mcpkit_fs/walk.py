"""Operations that walk a directory tree: the tree itself, search by name, search by content.

A walk goes through directory descriptors and never follows a link to a directory, leaves
out denied and excluded entries (and, when asked, what `.gitignore` files ignore), and is
bounded: depth, entries, results. It calls `tick(count)` as it goes, every `TICK_EVERY`
entries; the server uses it to report progress and to stop when the request is cancelled.
"""

import codecs
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import attrgetter

from . import finders
from .globs import Glob, GlobSet, IgnoreRule, is_ignored, parse_gitignore
from .listing import dirent_type
from .models import ContentMatch, ContentMatches, EntryType, Matches, Tree, TreeNode
from .policy import AllowedDir
from .reading import Tick, no_tick
from .sandbox import FsError, Sandbox, open_directory
from .text import BinaryFile, bare_lines, sniff

TICK_EVERY = 256
MAX_SEARCHED_FILE = 8 * 1024 * 1024  # larger files are skipped by search_content
MAX_MATCH_CHARS = 500  # a longer matching line is cut to this much around the match
# Levels a walk goes down at most: each holds a directory open and a frame of the walk,
# and deeper trees are made to break tools, not by people.
MAX_WALK_DEPTH = 100
MAX_PAGE_CHARS = 1024 * 1024  # of matching and context lines in one page of search_content
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_SEARCH_FLAGS = _FILE_FLAGS | os.O_NOCTTY  # see _read_small_file
READ_BLOCK = 64 * 1024
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


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
        max_depth: int,
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
        self.filtering = bool(exclude) or bool(sandbox.deny)  # checked per entry: kept cheap

    def walk(self, fd: int) -> Iterator[Found]:
        """Yield the entries below the directory open at `fd`, one by one."""
        for batch in self.batches(fd):
            for name, kind in batch.entries:
                yield Found(batch.relative(name), name, kind, batch.depth, batch.dir_fd)

    def batches(self, fd: int) -> Iterator[Batch]:
        """Yield the entries below the directory open at `fd` in batches."""
        rules = self._rules(fd, "") if self.gitignore else []
        yield from self._batches(fd, "", 1, rules)

    def _batches(
        self, fd: int, relative: str, depth: int, rules: list[IgnoreRule]
    ) -> Iterator[Batch]:
        with os.scandir(fd) as found:
            items = sorted(found, key=attrgetter("name"))
        batch = Batch(relative, depth, fd, [])
        for item in items:
            name = item.name
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
                continue
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:  # unreadable or swapped for a link: not descended
                continue
            try:
                more = self._rules(sub, path) if self.gitignore else []
                yield from self._batches(sub, path, depth + 1, rules + more)
            finally:
                os.close(sub)
        if batch.entries:
            yield batch

    def _left_out(self, path: str) -> bool:
        """Return whether the entry at `path` is excluded or denied."""
        below_root = f"{self.base}/{path}" if self.base else path
        return self.exclude.match(path) or self.sandbox.is_denied(self.root, below_root)

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
    max_depth: int = MAX_WALK_DEPTH,
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
    tick: Tick = no_tick,
) -> Tree:
    """Return the tree below a directory, at most `max_depth` levels and `max_entries`.

    Raises:
        FsError: the path is not a directory that may be read.
    """
    shown, fd, walker = _start(sandbox, path, exclude=exclude, max_depth=max_depth, tick=tick)
    top: list[TreeNode] = []
    levels = [top]  # levels[d]: the children list being filled at depth d + 1
    opened: list[TreeNode] = []  # opened[d]: the directory whose children are levels[d + 1]
    count = 0
    truncated = False
    try:
        for found in walker.walk(fd):
            del levels[found.depth :]
            del opened[found.depth - 1 :]
            if count >= max_entries:
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
    offset: int = 0,
    tick: Tick = no_tick,
) -> Matches:
    """Find entries below a directory whose path matches a glob.

    A pattern without glob characters matches names that contain it, ignoring case, as
    the reference server once did. The first `offset` matches are skipped (a next page).

    Raises:
        FsError: the path is not a directory that may be read.
    """
    matches = _name_matcher(pattern)
    shown, fd, walker = _start(sandbox, path, exclude=exclude, tick=tick)
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
                found.append(f"{shown.rstrip('/')}/{entry.relative}")
            else:
                truncated = True
                break
    finally:
        os.close(fd)
    next_offset = offset + len(found) if truncated else None
    return Matches(path=shown, matches=found, truncated=truncated, next_offset=next_offset)


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
    offset: int = 0,
    gitignore: bool = True,
    tick: Tick = no_tick,
) -> ContentMatches:
    """Find lines matching a text or regular expression in a file, or the files below a directory.

    Binary files, files over 8 MiB, and what `.gitignore` files ignore are skipped (a file
    named by `path` is searched whatever `.gitignore` says, or refused). The
    first `offset` matches are skipped (a next page). A page ends after `max_results`
    matches, or once its lines hold over `MAX_PAGE_CHARS` characters.

    Raises:
        FsError: the expression is invalid, the path is not a readable directory or text
            file, or it is a file over 8 MiB.
    """
    if is_regex:
        text_pattern, find = None, finders.expression(query, case_sensitive=case_sensitive)
    else:
        text_pattern = finders.literal(query, case_sensitive=case_sensitive)
        find = text_pattern.search
    # Literal ASCII text can rule files out on their bytes, before any decoding.
    prefilter = _byte_pattern(query, case_sensitive) if not is_regex else None
    only = Glob(include) if include else None
    shown, prefix, fd, batches = _search_start(
        sandbox, path, exclude=exclude, gitignore=gitignore, tick=tick
    )
    matches: list[ContentMatch] = []
    wanted = offset + max_results
    page_chars = 0
    files = 0
    try:
        for batch, name in _files(batches, only):
            data = _read_small_file(name, batch.dir_fd)
            if data is None:
                continue
            files += 1
            if prefilter is not None and _misses(prefilter, data):
                continue
            text = _text(data)
            if text is None:
                continue
            # One scan of the whole text rules most files out, for literal text only: a
            # regex can match a line alone and not the text (`^x`, `x$` before CRLF, ...).
            if text_pattern is not None and text_pattern.search(text) is None:
                continue
            room = wanted - len(matches)
            shown_name = prefix + batch.relative(name)
            for match in _matching_lines(shown_name, text, find, context_lines, room + 1):
                matches.append(match)
                if len(matches) > offset:
                    page_chars += _chars(match)
                if page_chars > MAX_PAGE_CHARS and len(matches) < wanted:
                    wanted = len(matches)  # the page ends here; a next one takes the rest
            if len(matches) > wanted:
                break
    finally:
        os.close(fd)
    page = matches[offset:wanted]
    truncated = len(matches) > wanted
    return ContentMatches(
        path=shown,
        matches=page,
        files_searched=files,
        truncated=truncated,
        next_offset=offset + len(page) if truncated else None,
    )


def _search_start(
    sandbox: Sandbox, path: str, *, exclude: list[str], gitignore: bool, tick: Tick
) -> tuple[str, str, int, Iterator[Batch]]:
    """Open where a search starts: a directory to walk, or one regular file.

    Returns the shown path, what comes before the shown path of each file searched, a
    descriptor to close when done, and the batches of the files to search.

    Raises:
        FsError: the path is neither a directory nor a regular file that may be read, or
            it is a file over 8 MiB.
    """
    with sandbox.place(path) as place:
        status = place.lstat()
        if place.name is not None and status is not None and stat.S_ISREG(status.st_mode):
            if status.st_size > MAX_SEARCHED_FILE:
                raise FsError(
                    f"{place.shown} is over {MAX_SEARCHED_FILE >> 20} MiB, more than"
                    " search_content reads: read it with read_text_file, a page at a time."
                )
            fd = os.dup(place.dir_fd)
            file = Batch("", 1, fd, [(place.name, "file")])
            return place.shown, place.shown.removesuffix(place.name), fd, iter([file])
    shown, fd, walker = _start(sandbox, path, exclude=exclude, gitignore=gitignore, tick=tick)
    return shown, f"{shown.rstrip('/')}/", fd, walker.batches(fd)


def _around(line: str, column: int) -> str:
    """Return `line`, or the `MAX_MATCH_CHARS` of it around `column` if it is longer."""
    if len(line) <= MAX_MATCH_CHARS:
        return line
    start = max(0, min(column - MAX_MATCH_CHARS // 2, len(line) - MAX_MATCH_CHARS))
    return line[start : start + MAX_MATCH_CHARS]


def _chars(match: ContentMatch) -> int:
    """Return the characters of a match's lines, context included."""
    return len(match["text"]) + sum(map(len, match["before"])) + sum(map(len, match["after"]))


def _byte_pattern(query: str, case_sensitive: bool) -> re.Pattern[bytes] | None:
    """Return a bytes pattern for a literal ASCII query, or None if it has other characters."""
    if not query.isascii():
        return None
    return re.compile(re.escape(query.encode("ascii")), 0 if case_sensitive else re.IGNORECASE)


def _misses(prefilter: re.Pattern[bytes], data: bytes) -> bool:
    """Return whether the bytes certainly do not contain the query (UTF-16 is not checked)."""
    return prefilter.search(data) is None and not data.startswith(_UTF16_BOMS)


def _files(batches: Iterator[Batch], only: Glob | None) -> Iterator[tuple[Batch, str]]:
    """Yield the regular files of a walk (those `only` matches) as their batch and name."""
    for batch in batches:
        for name, kind in batch.entries:
            if kind == "file" and (only is None or only.match(batch.relative(name))):
                yield batch, name


def _read_small_file(name: str, dir_fd: int) -> bytes | None:
    """Return the bytes of the regular file `name` of at most 8 MiB, or None to skip it.

    The walk's listing said it is a regular file, so it is opened without an fstat: a
    fifth of the work of a search. Should something else be swapped in under that name
    since the listing, it is harmless: a link is refused (`O_NOFOLLOW`), a FIFO opens and
    reads without waiting (`O_NONBLOCK`), nothing becomes a controlling terminal
    (`O_NOCTTY`), and the reads stop past 8 MiB whatever the file is.
    """
    try:
        handle = os.open(name, _SEARCH_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        data = os.read(handle, READ_BLOCK)
        if len(data) < READ_BLOCK:  # the whole file (most are smaller than a block)
            return data
        blocks = [data]
        size = len(data)
        while data and size <= MAX_SEARCHED_FILE:
            data = os.read(handle, READ_BLOCK)
            blocks.append(data)
            size += len(data)
        return None if size > MAX_SEARCHED_FILE else b"".join(blocks)
    except OSError:  # a FIFO with a writer, say
        return None
    finally:
        os.close(handle)


def _text(data: bytes) -> str | None:
    """Return the text of a file's bytes, or None if they are binary."""
    try:
        codec = sniff(data[:8192])
    except BinaryFile:
        return None
    return data[len(codec.bom) :].decode(codec.encoding, "replace")


def _matching_lines(
    name: str, text: str, find: finders.Find, context: int, limit: int
) -> list[ContentMatch]:
    """Return up to `limit` matching lines of `text` with `context` lines around each."""
    lines = bare_lines(text)
    found: list[ContentMatch] = []
    for index, line in enumerate(lines):
        hit = find(line)
        if hit is None:
            continue
        if context:
            before = [x[:MAX_MATCH_CHARS] for x in lines[max(0, index - context) : index]]
            after = [x[:MAX_MATCH_CHARS] for x in lines[index + 1 : index + 1 + context]]
        else:  # the usual case, spared two comprehensions (a third of the time per match)
            before, after = [], []
        found.append(
            {
                "path": name,
                "line": index + 1,
                "column": hit.start() + 1,
                "text": _around(line, hit.start()),
                "before": before,
                "after": after,
            }
        )
        if len(found) >= limit:
            break
    return found
