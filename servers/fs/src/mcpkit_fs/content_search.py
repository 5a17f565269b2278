"""search_content: grep in one file, or in the text files below a directory.

Below a directory, the walk (`walk.start`) gives the files; each is read whole, up to
`MAX_SEARCHED_FILE`, and ruled out as cheaply as possible: literal text is looked for in
its bytes, then in its whole text, before any line is. A file named by `path` is searched
whatever its size: read whole up to the 16 MiB that read_text_file reads whole (so both
count lines alike), and a larger one in bounded memory, by `large_file_search`.
"""

import codecs
import os
import re
import stat
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, NamedTuple

from mcpkit import readbuffer

from . import finders, large_file_search
from .errors import FsError
from .files import open_read
from .globs import Glob
from .models import ContentMatch, ContentMatches
from .reading import WHOLE_FILE_BYTES, sniff_text
from .sandbox import Sandbox
from .text import SNIFF_BYTES, BinaryFile, bare_lines, text_of, to_lf
from .ticks import Tick, no_tick
from .walk import Batch, start

MAX_SEARCHED_FILE = 8 * 1024 * 1024  # larger files are skipped below a directory
MAX_PAGE_CHARS = 1024 * 1024  # of matching and context lines in one page
READ_BLOCK = readbuffer.BLOCK  # through the thread's buffer: see `mcpkit.readbuffer`
# See _read_small_file.
_SEARCH_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


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
    whatever its size: one over 16 MiB block by block (see `large_file_search`), calling
    `tick_mib` with the MiB read. The first `offset` matches are skipped (a next page). A
    page ends after `max_results` matches, or once its lines hold over `MAX_PAGE_CHARS`
    characters.

    Raises:
        FsError: the expression is invalid, or the path is not a readable directory or
            text file.
    """
    budget = finders.Budget()  # a regular expression's, for its lines and blocks together
    if is_regex:
        whole_text = None
        find = finders.expression(query, case_sensitive=case_sensitive, budget=budget)
    else:
        whole_text = finders.literal(query, case_sensitive=case_sensitive)
        find = whole_text.search
    wanted = _Query(
        find,
        whole_text,
        # Literal ASCII text can rule files out on their bytes, before any decoding.
        finders.byte_prefilter(query, case_sensitive=case_sensitive) if not is_regex else None,
        finders.block_test(query, case_sensitive=case_sensitive, budget=budget)
        if is_regex
        else None,
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
        too_deep=searched.too_deep,
    )


class _Query(NamedTuple):
    """What search_content looks for."""

    find: finders.Find
    whole_text: re.Pattern[str] | None  # literal text: rules a file out in one scan
    prefilter: finders.Prefilter | None  # literal ASCII: rules bytes out before decoding
    block_test: finders.BlockTest | None  # a regex: rules many lines out at once
    only: Glob | None  # the files to search below a directory
    context: int


@dataclass
class _Searched:
    """How many files a search has read, and the first directory too deep to walk into."""

    files: int = 0
    too_deep: str | None = None


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
        # Anything but a directory is opened as one file: a FIFO or device is refused there.
        one_file = (
            place.name is not None and status is not None and not stat.S_ISDIR(status.st_mode)
        )
        file = open_read(place) if one_file else None
        shown = place.shown
    if file is not None:
        with file:
            searched.files = 1
            yield shown, _in_one_file(file, shown, wanted, tick_mib)
        return
    shown, fd, walker = start(sandbox, path, exclude=exclude, gitignore=gitignore, tick=tick)
    try:
        yield shown, _in_files(walker.batches(fd), walker.prefix, wanted, searched)
        searched.too_deep = walker.too_deep
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
        FsError: the file is binary, or in UTF-16 and too large to read whole.
    """
    head = file.read(SNIFF_BYTES)
    codec = sniff_text(head, shown)
    if os.fstat(file.fileno()).st_size <= WHOLE_FILE_BYTES:
        yield from _in_text(head + file.read(WHOLE_FILE_BYTES + 1 - len(head)), shown, wanted)
        return
    if codec.encoding.startswith("utf-16"):
        raise FsError(f"{shown} is a UTF-16 file over {WHOLE_FILE_BYTES >> 20} MiB: too large.")
    file.seek(len(codec.bom))
    yield from large_file_search.matches(
        file,
        shown,
        codec.encoding,
        wanted.find,
        large_file_search.Skip(wanted.prefilter, wanted.block_test),
        wanted.context,
        tick_mib,
    )


def _in_text(data: bytes, name: str, wanted: _Query) -> Iterator[ContentMatch]:
    """Yield the matches in the bytes of the file `name`, if it is text."""
    if wanted.prefilter is not None and _misses(wanted.prefilter, data):
        return
    text = _text(data)
    if text is None:
        return
    # One scan of the whole text rules most files out: literal text as it is, a regex with
    # every line ending made LF (as `bare_lines` splits them), when it allows (`block_test`).
    if wanted.whole_text is not None and wanted.whole_text.search(text) is None:
        return
    if wanted.block_test is not None and not wanted.block_test(to_lf(text)):
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
        data = readbuffer.read(handle, READ_BLOCK)
        if len(data) < READ_BLOCK:  # the whole file (most are smaller than a block)
            return data
        blocks = [data]
        size = len(data)
        while data and size <= MAX_SEARCHED_FILE:
            data = readbuffer.read(handle, READ_BLOCK)
            blocks.append(data)
            size += len(data)
        return None if size > MAX_SEARCHED_FILE else b"".join(blocks)
    except OSError:  # a FIFO with a writer, say
        return None
    finally:
        os.close(handle)


def _text(data: bytes) -> str | None:
    """Return the text of a file's bytes, as a read gives it, or None if they are binary."""
    try:
        return text_of(data)[0]
    except BinaryFile:
        return None


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
