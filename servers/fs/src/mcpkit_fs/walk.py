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
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from operator import attrgetter
from typing import BinaryIO, NamedTuple

from . import finders, large_file_search
from .globs import Glob, GlobSet, IgnoreRule, is_ignored, parse_gitignore
from .listing import dirent_type
from .models import ContentMatch, ContentMatches, EntryType, Matches, Tree, TreeNode
from .policy import AllowedDir
from .reading import Tick, no_tick, open_read
from .sandbox import FsError, Sandbox, open_directory
from .text import SNIFF_BYTES, BinaryFile, bare_lines, sniff

TICK_EVERY = 256
MAX_SEARCHED_FILE = 8 * 1024 * 1024  # larger files are skipped below a directory
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
    tick_mib: Tick = no_tick,
) -> ContentMatches:
    """Find lines matching a text or regular expression in a file, or the files below a directory.

    Below a directory, binary files, files over 8 MiB, and what `.gitignore` files ignore
    are skipped. A file named by `path` is searched whatever `.gitignore` says, and
    whatever its size: one over 8 MiB block by block (see `large_file_search`), calling
    `tick_mib` with the MiB read. The first `offset` matches are skipped (a next page). A
    page ends after `max_results` matches, or once its lines hold over `MAX_PAGE_CHARS`
    characters.

    Raises:
        FsError: the expression is invalid, or the path is not a readable directory or
            text file.
    """
    if is_regex:
        whole_text, find = None, finders.expression(query, case_sensitive=case_sensitive)
    else:
        whole_text = finders.literal(query, case_sensitive=case_sensitive)
        find = whole_text.search
    wanted = _Query(
        find,
        whole_text,
        # Literal ASCII text can rule files out on their bytes, before any decoding.
        finders.byte_prefilter(query, case_sensitive=case_sensitive) if not is_regex else None,
        Glob(include) if include else None,
        context_lines,
    )
    searched = _Searched()
    with _searching(sandbox, path, wanted, searched, exclude, gitignore, tick, tick_mib) as (
        shown,
        found,
    ):
        page, truncated = _page(found, offset, max_results)
    return ContentMatches(
        path=shown,
        matches=page,
        files_searched=searched.files,
        truncated=truncated,
        next_offset=offset + len(page) if truncated else None,
    )


class _Query(NamedTuple):
    """What search_content looks for."""

    find: finders.Find
    whole_text: re.Pattern[str] | None  # literal text: rules a file out in one scan
    prefilter: finders.Prefilter | None  # literal ASCII: rules bytes out before decoding
    only: Glob | None  # the files to search below a directory
    context: int


@dataclass
class _Searched:
    """How many files a search has read."""

    files: int = 0


@contextmanager
def _searching(
    sandbox: Sandbox,
    path: str,
    wanted: _Query,
    searched: _Searched,
    exclude: list[str],
    gitignore: bool,
    tick: Tick,
    tick_mib: Tick,
) -> Generator[tuple[str, Iterator[ContentMatch]]]:
    """Open where a search starts, one file or a directory; yield its shown path and matches.

    Raises:
        FsError: the path is neither a directory nor a regular file that may be read.
    """
    with sandbox.place(path) as place:
        status = place.lstat()
        one_file = place.name is not None and status is not None and stat.S_ISREG(status.st_mode)
        file = open_read(place) if one_file else None
        shown = place.shown
    if file is not None:
        with file:
            searched.files = 1
            yield shown, _in_one_file(file, shown, wanted, tick_mib)
        return
    shown, fd, walker = _start(sandbox, path, exclude=exclude, gitignore=gitignore, tick=tick)
    try:
        yield shown, _in_files(walker.batches(fd), f"{shown.rstrip('/')}/", wanted, searched)
    finally:
        os.close(fd)


def _in_files(
    batches: Iterator[Batch], prefix: str, wanted: _Query, searched: _Searched
) -> Iterator[ContentMatch]:
    """Yield the matches in the text files of `batches`, whose shown paths start with `prefix`."""
    for batch, name in _files(batches, wanted.only):
        data = _read_small_file(name, batch.dir_fd)
        if data is not None:
            searched.files += 1
            yield from _in_text(data, prefix + batch.relative(name), wanted)


def _in_one_file(
    file: BinaryIO, shown: str, wanted: _Query, tick_mib: Tick
) -> Iterator[ContentMatch]:
    """Yield the matches in the open regular file `file`, of any size.

    Raises:
        FsError: the file is in UTF-16 and too large to read whole.
    """
    if os.fstat(file.fileno()).st_size <= MAX_SEARCHED_FILE:
        yield from _in_text(file.read(MAX_SEARCHED_FILE + 1), shown, wanted)
        return
    try:
        codec = sniff(file.read(SNIFF_BYTES))
    except BinaryFile:
        return
    if codec.encoding.startswith("utf-16"):
        raise FsError(f"{shown} is a UTF-16 file over {MAX_SEARCHED_FILE >> 20} MiB: too large.")
    file.seek(len(codec.bom))
    yield from large_file_search.matches(
        file, shown, codec.encoding, wanted.find, wanted.prefilter, wanted.context, tick_mib
    )


def _in_text(data: bytes, name: str, wanted: _Query) -> Iterator[ContentMatch]:
    """Yield the matches in the bytes of the file `name`, if it is text."""
    if wanted.prefilter is not None and _misses(wanted.prefilter, data):
        return
    text = _text(data)
    if text is None:
        return
    # One scan of the whole text rules most files out, for literal text only: a regex can
    # match a line alone and not the text (`^x`, `x$` before CRLF, ...).
    if wanted.whole_text is not None and wanted.whole_text.search(text) is None:
        return
    yield from _matching_lines(name, text, wanted.find, wanted.context)


def _page(
    found: Iterator[ContentMatch], offset: int, max_results: int
) -> tuple[list[ContentMatch], bool]:
    """Return the page of `found` that starts at `offset`, and whether more follow.

    A page ends after `max_results` matches, or once its lines hold over `MAX_PAGE_CHARS`
    characters; the search stops at the first match past it.
    """
    matches: list[ContentMatch] = []
    end = offset + max_results
    page_chars = 0
    for match in found:
        matches.append(match)
        if len(matches) > end:
            break
        if len(matches) > offset:
            page_chars += _chars(match)
        if page_chars > MAX_PAGE_CHARS and len(matches) < end:
            end = len(matches)  # the page ends here; a next one takes the rest
    return matches[offset:end], len(matches) > end


def _chars(match: ContentMatch) -> int:
    """Return the characters of a match's lines, context included."""
    return len(match["text"]) + sum(map(len, match["before"])) + sum(map(len, match["after"]))


def _misses(prefilter: finders.Prefilter, data: bytes) -> bool:
    """Return whether the bytes certainly do not contain the query (UTF-16 is not checked)."""
    return not prefilter(data) and not data.startswith(_UTF16_BOMS)


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
    name: str, text: str, find: finders.Find, context: int
) -> Iterator[ContentMatch]:
    """Yield the matching lines of `text` with `context` lines around each."""
    lines = bare_lines(text)
    for index, line in enumerate(lines):
        hit = find(line)
        if hit is None:
            continue
        if context:
            before = [x[: finders.MAX_MATCH_CHARS] for x in lines[max(0, index - context) : index]]
            after = [x[: finders.MAX_MATCH_CHARS] for x in lines[index + 1 : index + 1 + context]]
        else:  # the usual case, spared two comprehensions (a third of the time per match)
            before, after = [], []
        yield {
            "path": name,
            "line": index + 1,
            "column": hit.start() + 1,
            "text": finders.around(line, hit.start()),
            "before": before,
            "after": after,
        }
