"""Reading files: text a page at a time, bytes whole, several files at once, a diff of two.

Every function takes the sandbox first, resolves its paths through it, and returns a typed
result or raises `FsError` with a message that says what to do next. Nothing here knows
about MCP; the server runs these functions in worker threads, except the reads of one
file, which it runs `on_loop` (on the event loop) while they stay small.
"""

import codecs
import hashlib
import os
from collections.abc import Generator
from contextlib import contextmanager
from typing import BinaryIO, NamedTuple

from .diffs import unified_diff
from .errors import FsError
from .files import open_file
from .hashing import hash_file as hash_file  # where resources.py takes it from
from .large_reads import read_large
from .mime import guess_mime
from .models import Comparison, FileText, MultipleFiles, TextRead
from .pages import fit_page, joined, past_the_end
from .sandbox import Sandbox
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
from .ticks import Tick, no_tick

KiB = 1024
MiB = 1024 * KiB
WHOLE_FILE_BYTES = 16 * MiB  # larger text files are read line by line, never whole
DEFAULT_READ_BYTES = 256 * KiB  # about what a client takes in one tool result
# What a read may do `on_loop`: about a millisecond of work, as much as the hop to a worker
# thread would cost. Larger work goes to a thread, where it blocks no other request.
LOOP_FILE_BYTES = 256 * KiB


class TooLarge(Exception):
    """Work asked to stay small (`on_loop`) is larger: run it again in a worker thread."""


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
    tick: Tick = no_tick,
) -> TextRead:
    """Read lines of a text file: all, the first or last `head`/`tail`, or a range.

    `offset` is the 1-based first line and `limit` the number of lines. At most
    `max_bytes` of text are returned; `truncated` and `next_offset` say where to go on.
    A file over `WHOLE_FILE_BYTES` is read line by line, only as far as the page needs
    (with no `total_lines` nor `sha256`), and so is one over `max_bytes` if `page_only`;
    `tick` follows the MiB its lines skipped take.

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
            codec = _codec_of_large(file, shown)
            return read_large(
                file,
                shown,
                size,
                codec,
                head=head,
                tail=tail,
                offset=offset,
                limit=limit,
                max_bytes=max_bytes,
                line_numbers=line_numbers,
                tick=tick,
            )
        data = _read_up_to(file, size, WHOLE_FILE_BYTES)
    if len(data) > WHOLE_FILE_BYTES:
        raise FsError(f"{shown} grew while being read: read it again.")
    text, codec = decode_text(data, shown)
    total = line_count(text)
    first = max(0, total - tail) if tail is not None else (offset or 1) - 1
    if offset is not None and first >= max(total, 1):
        raise past_the_end(shown, offset, total)
    count = head if head is not None else limit
    wanted = total - first if count is None else min(count, total - first)
    # A line takes a byte at least, so a page holds `max_bytes` lines at most: only those
    # are made, never a list of all (which costs 30 times the file for short lines).
    if tail is not None:
        first += max(0, wanted - max_bytes)
    chosen = some_lines(text, first, first + min(wanted, max_bytes))
    page = fit_page(chosen, max_bytes, from_end=tail is not None)
    if tail is not None:
        first += len(chosen) - len(page.lines)  # a tail cut by max_bytes loses its first lines
    more = first + len(page.lines) < total
    return TextRead(
        path=shown,
        content=joined(page.lines, first, line_numbers),
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


def _codec_of_large(file: BinaryIO, shown: str) -> Codec:
    """Return how a file too large to read whole is stored, from its first bytes.

    Raises:
        FsError: it is not text, or is UTF-16, which is only read whole.
    """
    start = file.read(SNIFF_BYTES)
    codec = sniff_text(start, shown)
    if codec.encoding.startswith("utf-16"):
        raise FsError(f"{shown} is a UTF-16 file over {WHOLE_FILE_BYTES // MiB} MiB: too large.")
    return codec._replace(eol=line_ending(start.decode(codec.encoding, "replace")))


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
