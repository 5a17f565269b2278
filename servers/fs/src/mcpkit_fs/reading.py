"""Reading files: text a page at a time, bytes whole, several files at once, a diff of two.

Every function takes the sandbox first, resolves its paths through it, and returns a typed
result or raises `FsError` with a message that says what to do next. Nothing here knows
about MCP; the server runs these functions in worker threads, except the reads of one
file, which it runs `on_loop` (on the event loop) while they stay small.
"""

import codecs
import hashlib
import os
from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import BinaryIO, NamedTuple

from .diffs import unified_diff
from .mime import guess_mime
from .models import Comparison, FileText, MultipleFiles, TextRead
from .sandbox import FsError, Place, Sandbox, open_file
from .text import (
    SNIFF_BYTES,
    BinaryFile,
    Codec,
    decode,
    line_count,
    line_ending,
    sniff,
    some_lines,
    text_of,
)

KiB = 1024
MiB = 1024 * KiB
WHOLE_FILE_BYTES = 16 * MiB  # larger text files are read line by line, never whole
DEFAULT_READ_BYTES = 256 * KiB  # about what a client takes in one tool result
# What a read may do `on_loop`: about a millisecond of work, as much as the hop to a worker
# thread would cost. Larger work goes to a thread, where it blocks no other request.
LOOP_FILE_BYTES = 256 * KiB
# Called as long work goes on (walks, hashes) with a count so far: the server reports it as
# progress, and stops the work there once its request is cancelled (see access.Progress).
Tick = Callable[[int], None]


class TooLarge(Exception):
    """Work asked to stay small (`on_loop`) is larger: run it again in a worker thread."""


def no_tick(count: int) -> None:
    """Default `tick`: nothing to report."""


def read_text(
    sandbox: Sandbox,
    path: str,
    *,
    head: int | None = None,
    tail: int | None = None,
    offset: int | None = None,
    limit: int | None = None,
    max_bytes: int = DEFAULT_READ_BYTES,
    line_numbers: bool = False,
    on_loop: bool = False,
    page_only: bool = False,
) -> TextRead:
    """Read lines of a text file: all, the first or last `head`/`tail`, or a range.

    `offset` is the 1-based first line and `limit` the number of lines. At most
    `max_bytes` of text are returned; `truncated` and `next_offset` say where to go on.
    A file over `WHOLE_FILE_BYTES` is read line by line, only as far as the page needs
    (with no `total_lines` nor `sha256`), and so is one over `max_bytes` if `page_only`.

    Raises:
        FsError: conflicting arguments, `offset` past the last line, or the file cannot
            be read as text.
        TooLarge: `on_loop`, and the file is over `LOOP_FILE_BYTES`.
    """
    if head is not None and tail is not None:
        raise FsError("Give head or tail, not both.")
    if tail is not None and offset is not None:
        raise FsError("Give tail or offset, not both.")
    with _reading(sandbox, path, on_loop=on_loop) as (file, size, shown):
        if size > WHOLE_FILE_BYTES or (page_only and size > max_bytes and not _utf16(file)):
            return _read_large(
                file, shown, size, head, tail, offset, limit, max_bytes, line_numbers
            )
        data = _read_up_to(file, size, WHOLE_FILE_BYTES)
    if len(data) > WHOLE_FILE_BYTES:
        raise FsError(f"{shown} grew while being read: read it again.")
    text, codec = decode_text(data, shown)
    total = line_count(text)
    first = max(0, total - tail) if tail is not None else (offset or 1) - 1
    if offset is not None and first >= max(total, 1):
        raise _past_the_end(shown, offset, total)
    count = head if head is not None else limit
    wanted = total - first if count is None else min(count, total - first)
    # A line takes a byte at least, so a page holds `max_bytes` lines at most: only those
    # are made, never a list of all (which costs 30 times the file for short lines).
    if tail is not None:
        first += max(0, wanted - max_bytes)
    chosen = some_lines(text, first, first + min(wanted, max_bytes))
    page = _page(chosen, max_bytes, from_end=tail is not None)
    if tail is not None:
        first += len(chosen) - len(page.lines)  # a tail cut by max_bytes loses its first lines
    more = first + len(page.lines) < total
    return TextRead(
        path=shown,
        content=_join(page.lines, first, line_numbers),
        start_line=first + 1,
        end_line=first + len(page.lines),
        total_lines=total,
        truncated=page.truncated,
        line_cut=page.line_cut,
        next_offset=first + len(page.lines) + 1 if more else None,
        encoding=codec.name,
        eol=codec.eol,
        size=size,
        sha256=hashlib.sha256(data).hexdigest(),
    )


@contextmanager
def _reading(sandbox: Sandbox, path: str, *, on_loop: bool) -> Generator[tuple[BinaryIO, int, str]]:
    """Open the regular file at `path`; yield it, its size and its shown path.

    Raises:
        FsError: the path is not a regular file that may be read.
        TooLarge: `on_loop`, and the file is over `LOOP_FILE_BYTES`.
    """
    with sandbox.place(path) as place:
        fd = open_file(place)
        shown = place.shown
    with os.fdopen(fd, "rb") as file:
        size = os.fstat(fd).st_size
        if on_loop and size > LOOP_FILE_BYTES:
            raise TooLarge(shown)
        yield file, size, shown


def _utf16(file: BinaryIO) -> bool:
    """Return whether an open file starts with a UTF-16 byte order mark (it is read whole)."""
    start = file.read(2)
    file.seek(0)
    return start in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def _past_the_end(shown: str, offset: int, total: int | None) -> FsError:
    """The error for an `offset` past the last line of a file of `total` lines (None: unknown)."""
    if total is None:
        lines = f"fewer than {offset} lines"
    else:
        lines = "1 line" if total == 1 else f"{total} lines"
    return FsError(
        f"{shown} has {lines}: offset {offset} is past its end. Read from a smaller one."
    )


def _read_up_to(file: BinaryIO, size: int, cap: int) -> bytes:
    """Return the bytes of an open file: all of them, or `cap + 1` if it holds more than `cap`.

    `size` is what `fstat` said. A read allocates all it may return up front, so asking
    for `size + 1` bytes instead of `cap + 1` spares a small file a 16 MiB allocation; a
    file that grew since the `fstat` is read on, still up to `cap + 1` bytes.
    """
    data = file.read(min(size, cap) + 1)
    if size < len(data) <= cap:
        data += file.read(cap + 1 - len(data))
    return data


def _read_large(
    file: BinaryIO,
    shown: str,
    size: int,
    head: int | None,
    tail: int | None,
    offset: int | None,
    limit: int | None,
    max_bytes: int,
    line_numbers: bool,
) -> TextRead:
    """Read part of a text file too large to read whole (see `read_text`)."""
    start = file.read(SNIFF_BYTES)
    codec = sniff_text(start, shown)
    if codec.encoding.startswith("utf-16"):
        raise FsError(f"{shown} is a UTF-16 file over {WHOLE_FILE_BYTES // MiB} MiB: too large.")
    count = head if head is not None else limit
    if tail is not None:
        raw, more = _last_lines(file, size, tail, max_bytes), False
        first = None  # unknown without reading the whole file
    else:
        first = (offset or 1) - 1
        raw, more = _lines_from(file, first, count, max_bytes)
        if first and not raw and count != 0:
            raise _past_the_end(shown, first + 1, None)
        if first == 0 and raw:
            raw[0] = raw[0].removeprefix(codec.bom)  # not text: small files leave it out too
    lines = [line.decode(codec.encoding, "replace") for line in raw]
    page = _page(lines, max_bytes, from_end=tail is not None)
    return TextRead(
        path=shown,
        content=_join(page.lines, first or 0, line_numbers and first is not None),
        start_line=None if first is None else first + 1,
        end_line=None if first is None else first + len(page.lines),
        total_lines=None,
        truncated=page.truncated or (count is None and more),
        line_cut=page.line_cut,
        next_offset=None
        if first is None or not (page.truncated or more)
        else first + len(page.lines) + 1,
        encoding=codec.name,
        eol=line_ending(start.decode(codec.encoding, "replace")),  # of the first lines
        size=size,
        sha256=None,
    )


def _lines_from(
    file: BinaryIO, first: int, count: int | None, max_bytes: int
) -> tuple[list[bytes], bool]:
    """Return lines from 0-based line `first`, `count` of them or until `max_bytes`.

    The flag says whether the file has more lines after them. No line is held longer
    than `max_bytes + 1` bytes, which is more than a page shows: a file may be one line.
    """
    file.seek(0)
    for _ in range(first):
        _skip_line(file)
    lines: list[bytes] = []
    taken = 0
    while (count is None or len(lines) < count) and taken <= max_bytes:
        line = file.readline(max_bytes + 1)
        if not line:
            return lines, False
        if not line.endswith(b"\n"):
            _skip_line(file)  # the rest of a line longer than a page
        lines.append(line)
        taken += len(line)
    return lines, bool(file.read(1))


def _skip_line(file: BinaryIO) -> None:
    """Read past the end of the current line, a block at a time."""
    while (block := file.readline(64 * KiB)) and not block.endswith(b"\n"):
        pass


def _last_lines(file: BinaryIO, size: int, count: int, max_bytes: int) -> list[bytes]:
    """Return the last `count` lines of a file, reading backwards from its end.

    Reading stops past `max_bytes`, more than a page shows: the first line returned may
    then be the end of a longer one.
    """
    blocks: list[bytes] = []
    position, newlines = size, 0
    while position > 0 and newlines <= count and size - position <= max_bytes:
        step = min(64 * KiB, position)
        position -= step
        file.seek(position)
        blocks.append(file.read(step))
        newlines += blocks[-1].count(b"\n")
    lines = b"".join(reversed(blocks)).splitlines(keepends=True)
    return lines[-count:] if count else []


class _Page(NamedTuple):
    """The lines of a read that fit its byte cap."""

    lines: list[str]
    truncated: bool  # lines were left out, or the one line shown was cut
    line_cut: bool  # the one line shown is longer than the cap: only part of it is shown


def _page(lines: list[str], max_bytes: int, *, from_end: bool) -> _Page:
    """Return the lines that fit in `max_bytes` (from the end for a tail).

    A single line longer than the budget is cut to it (to its end, for a tail), so a read
    always makes progress.
    """
    if 4 * sum(map(len, lines)) <= max_bytes:  # a character is at most 4 bytes of UTF-8
        return _Page(lines, truncated=False, line_cut=False)
    budget = max_bytes
    kept: list[str] = []
    for line in reversed(lines) if from_end else lines:
        cost = len(line.encode("utf-8"))
        if cost > budget:
            line_cut = not kept
            if line_cut:
                kept.append(_cut(line, budget, from_end=from_end))
            return _Page(kept[::-1] if from_end else kept, truncated=True, line_cut=line_cut)
        kept.append(line)
        budget -= cost
    return _Page(kept[::-1] if from_end else kept, truncated=False, line_cut=False)


def _cut(line: str, budget: int, *, from_end: bool) -> str:
    """Return the start of `line` (its end, `from_end`) that is at most `budget` UTF-8 bytes."""
    data = line.encode("utf-8", "surrogateescape")
    part = data[len(data) - budget :] if from_end else data[:budget]
    return part.decode("utf-8", "ignore")  # a character cut in two is left out


def _join(lines: list[str], first: int, line_numbers: bool) -> str:
    if not line_numbers:
        return "".join(lines)
    return "".join(f"{first + n + 1:>6}\t{line}" for n, line in enumerate(lines))


def decode_text(data: bytes, shown: str) -> tuple[str, Codec]:
    """Return the text of a file's bytes and how it is stored.

    Raises:
        FsError: the bytes are not text.
    """
    with _text_only(shown):
        return decode(data)


def sniff_text(head: bytes, shown: str) -> Codec:
    """Return how a file is stored, from its first bytes alone.

    Raises:
        FsError: the bytes are not text.
    """
    with _text_only(shown):
        return sniff(head)


@contextmanager
def _text_only(shown: str) -> Generator[None]:
    """Turn the `BinaryFile` of the block into the error the client sees."""
    try:
        yield
    except BinaryFile:
        raise FsError(f"{shown} is a binary file: use read_media_file.") from None


class Media(NamedTuple):
    """The bytes of a file and their MIME type."""

    path: str
    mime_type: str
    data: bytes


def read_media(sandbox: Sandbox, path: str, *, max_bytes: int, on_loop: bool = False) -> Media:
    """Read a whole file as bytes, with its MIME type.

    Raises:
        FsError: the file cannot be read or is larger than `max_bytes`.
        TooLarge: `on_loop`, and the file is over `LOOP_FILE_BYTES`.
    """
    data, shown = read_bytes(sandbox, path, max_bytes=max_bytes, on_loop=on_loop)
    return Media(shown, guess_mime(shown, data[:SNIFF_BYTES]), data)


def read_bytes(
    sandbox: Sandbox, path: str, *, max_bytes: int, on_loop: bool = False
) -> tuple[bytes, str]:
    """Return the bytes of a regular file (at most `max_bytes`) and its shown path.

    Raises:
        FsError: the file cannot be read or is larger than `max_bytes`.
        TooLarge: `on_loop`, and the file is over `LOOP_FILE_BYTES`.
    """
    with _reading(sandbox, path, on_loop=on_loop) as (file, size, shown):
        data = _read_up_to(file, size, max_bytes)
    if len(data) > max_bytes:
        raise FsError(f"{shown} is larger than {max_bytes} bytes: too large to read whole.")
    return data, shown


def read_many(
    sandbox: Sandbox,
    paths: list[str],
    *,
    max_bytes_per_file: int,
    max_total_bytes: int,
    tick: Tick = no_tick,
) -> MultipleFiles:
    """Read the start of several text files; a file that fails carries its error instead.

    Each file is read only as far as its part of the page needs. `tick(n)` follows the
    n-th file.
    """
    files: list[FileText] = []
    budget = max_total_bytes
    for done, path in enumerate(paths, start=1):
        tick(done)
        if budget <= 0:
            error = "Not read: max_total_bytes was reached."
            files.append(FileText(path=path, content=None, truncated=False, error=error))
            continue
        try:
            read = read_text(
                sandbox, path, max_bytes=min(max_bytes_per_file, budget), page_only=True
            )
        except FsError as exc:
            files.append(FileText(path=path, content=None, truncated=False, error=str(exc)))
            continue
        content = read["content"]
        budget -= len(content.encode("utf-8"))
        files.append(
            FileText(path=read["path"], content=content, truncated=read["truncated"], error=None)
        )
    return MultipleFiles(files=files)


def compare(sandbox: Sandbox, path_a: str, path_b: str, *, context: int = 3) -> Comparison:
    """Return the unified diff between two text files; whether two files are the same.

    Files that are not both text are compared byte for byte only, as `diff` does.

    Raises:
        FsError: either file cannot be read, or is over `WHOLE_FILE_BYTES`.
    """
    data_a, shown_a = read_bytes(sandbox, path_a, max_bytes=WHOLE_FILE_BYTES)
    data_b, shown_b = read_bytes(sandbox, path_b, max_bytes=WHOLE_FILE_BYTES)
    texts = _both_text(data_a, data_b)
    return Comparison(
        path_a=shown_a,
        path_b=shown_b,
        identical=data_a == data_b,
        binary=texts is None,
        diff="" if texts is None else unified_diff(*texts, shown_a, shown_b, context),
    )


def _both_text(data_a: bytes, data_b: bytes) -> tuple[str, str] | None:
    """Return the texts of two files' bytes, or None if either is not text."""
    try:
        return text_of(data_a)[0], text_of(data_b)[0]
    except BinaryFile:
        return None


def open_read(place: Place) -> BinaryIO:
    """Open the regular file at `place` as a binary file object."""
    return os.fdopen(open_file(place), "rb")


def hash_file(file: BinaryIO, tick: Tick = no_tick, *, size: int | None = None) -> str:
    """Return the SHA-256 of an open file, read a MiB at a time to its end or `size` bytes.

    `tick(n)` follows the n-th MiB, so a hash of a large file can be reported and stopped.
    """
    digest = hashlib.sha256()
    left = size
    done = 0
    while block := file.read(MiB if left is None else min(MiB, left)):
        digest.update(block)
        if left is not None:
            left -= len(block)
        done += 1
        tick(done)
    return digest.hexdigest()


def sha256_of(place: Place, tick: Tick = no_tick, *, size: int | None = None) -> str:
    """Return the SHA-256 of the file at `place`: of its first `size` bytes, if given.

    A size reported with a hash bounds it: a file that grows meanwhile (a log) gets the
    hash of the bytes the size counts.
    """
    with open_read(place) as file:
        return hash_file(file, tick, size=size)
