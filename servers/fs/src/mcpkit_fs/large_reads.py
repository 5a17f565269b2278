"""Reading lines of a text file too large to read whole, in bounded memory.

Lines are read from a given line on, skipping those before it without holding them, or
backwards from the end; no line is held longer than a page can show. Skipping lines may
read much of a file (a sparse file of one terabyte-long line reads as fast as the disk
goes, for ever): it ticks the MiB read, which reports progress and stops it once its
request is cancelled.
"""

from typing import BinaryIO

from .models import TextRead
from .pages import fit_page, joined, past_the_end
from .text import Codec
from .ticks import Tick, no_tick

_BLOCK = 64 * 1024  # read at a time where a line is skipped or the end is read backwards
_MiB = 1024 * 1024  # reading.MiB, which this module cannot import: reading imports it
LOOK_PAST_CUT = 16 * _MiB
"""How far past a line cut short a read looks for the line after it, to say whether one
follows; past that, it says one may (a later read from there will know)."""


def read_large(
    file: BinaryIO,
    shown: str,
    size: int,
    codec: Codec,
    *,
    head: int | None,
    tail: int | None,
    offset: int | None,
    limit: int | None,
    max_bytes: int,
    line_numbers: bool,
    tick: Tick = no_tick,
) -> TextRead:
    """Read part of the text file `file`, too large to read whole, stored as `codec` says.

    `codec` has the line ending of the first lines, which the result reports.

    The arguments are those of `reading.read_text`; the lines are read from the start, or
    backwards from the end for a `tail`, only as far as the page needs. `tick` follows
    the MiB read where lines are skipped.

    Raises:
        FsError: `offset` is past the last line.
    """
    count = head if head is not None else limit
    if tail is not None:
        raw, more = _last_lines(file, size, tail, max_bytes), False
        first = None  # unknown without reading the whole file
    else:
        first = (offset or 1) - 1
        raw, more = _lines_from(file, first, count, max_bytes, tick)
        if first and not raw and count != 0:
            raise past_the_end(shown, first + 1, None)
        if first == 0 and raw:
            raw[0] = raw[0].removeprefix(codec.bom)  # not text: small files leave it out too
    lines = [line.decode(codec.encoding, "replace") for line in raw]
    page = fit_page(lines, max_bytes, from_end=tail is not None)
    return TextRead(
        path=shown,
        content=joined(page.lines, first or 0, line_numbers and first is not None),
        start_line=None if first is None else first + 1,
        end_line=None if first is None else first + len(page.lines),
        total_lines=None,
        truncated=page.truncated or (count is None and more),
        line_cut=page.line_cut,
        next_offset=None
        if first is None or not (page.truncated or more)
        else first + len(page.lines) + 1,
        encoding=codec.name,
        eol=codec.eol,
        size=size,
        sha256=None,
    )


def _lines_from(
    file: BinaryIO, first: int, count: int | None, max_bytes: int, tick: Tick
) -> tuple[list[bytes], bool]:
    """Return lines from 0-based line `first`, `count` of them or until `max_bytes`.

    The flag says whether the file has (or may have) more lines after them. No line is
    held longer than `max_bytes + 1` bytes, which is more than a page shows: a file may
    be one line.
    """
    file.seek(0)
    for _ in range(first):
        _skip_line(file, tick)
    lines: list[bytes] = []
    taken = 0
    while (count is None or len(lines) < count) and taken <= max_bytes:
        line = file.readline(max_bytes + 1)
        if not line:
            return lines, False
        lines.append(line)
        taken += len(line)
        # The rest of a line longer than a page, if not too long to look past.
        if not line.endswith(b"\n") and not _skip_line(file, tick, LOOK_PAST_CUT):
            return lines, True
    return lines, bool(file.read(1))


def _skip_line(file: BinaryIO, tick: Tick, most: int | None = None) -> bool:
    """Read past the end of the current line, a block at a time; return whether it ended.

    Reading stops without the line's end past `most` bytes, if given.
    """
    start = file.tell()
    while block := file.readline(_BLOCK):
        tick(file.tell() // _MiB)
        if block.endswith(b"\n"):
            return True
        if most is not None and file.tell() - start > most:
            return False
    return True


def _last_lines(file: BinaryIO, size: int, count: int, max_bytes: int) -> list[bytes]:
    """Return the last `count` lines of a file, reading backwards from its end.

    Reading stops past `max_bytes`, more than a page shows: the first line returned may
    then be the end of a longer one.
    """
    blocks: list[bytes] = []
    position, newlines = size, 0
    while position > 0 and newlines <= count and size - position <= max_bytes:
        step = min(_BLOCK, position)
        position -= step
        file.seek(position)
        blocks.append(file.read(step))
        newlines += blocks[-1].count(b"\n")
    lines = b"".join(reversed(blocks)).splitlines(keepends=True)
    return lines[-count:] if count else []
