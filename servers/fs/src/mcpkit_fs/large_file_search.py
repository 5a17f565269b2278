"""search_content in one file too large to read whole (a log of gigabytes): block by block.

Memory stays bounded whatever the file: the file is read in blocks of whole lines, and a
line longer than `MAX_LINE_BYTES` is searched (and shown) in its first part only. Lines
end at LF (CRLF included); a file whose lines end in CR alone reads as one long line. A
block is checked whole first, when the query allows (`Skip`): the blocks of a log that do
not hold it, most of them, are passed over at that cost alone.
"""

from collections import deque
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

from . import finders
from .models import ContentMatch
from .reading import MiB
from .ticks import Tick

MAX_LINE_BYTES = MiB  # a longer line is searched, and shown, in its first MiB only
BLOCK_BYTES = MiB
# Enough of a line's bytes for the characters a context line shows (a character of UTF-8
# takes at most 4): context lines are kept this short, whatever the lines are.
_CONTEXT_BYTES = 4 * finders.MAX_MATCH_CHARS


class Skip(NamedTuple):
    """The tests that rule out a block of lines that no line of matches; either or both."""

    prefilter: finders.Prefilter | None  # of a literal query: the block's bytes, each line's
    block_test: finders.BlockTest | None  # of a regular expression: the block's text


def matches(
    file: BinaryIO,
    name: str,
    encoding: str,
    find: finders.Find,
    skip: Skip,
    context: int,
    tick: Tick,
) -> Iterator[ContentMatch]:
    """Yield the matching lines of the open text `file`, with `context` lines around each.

    `encoding` is the file's (UTF-8 or Latin-1); the tests of `skip`, when given, must pass
    every line that `find` can match. `tick` follows each MiB read.
    """
    prefilter = skip.prefilter
    before: deque[bytes] = deque(maxlen=context)
    waiting: deque[ContentMatch] = deque()  # found, with their lines after still to come
    number = 0
    for block in _blocks(file, tick):
        if not waiting and _passed_over(block, encoding, skip):
            number += block.count(b"\n")
            if context:  # the block's last lines, in a deque that keeps `context` of them
                tail = block.rsplit(b"\n", context + 1)[:-1]
                before.extend(line[:_CONTEXT_BYTES] for line in tail)
            continue
        for line in block.split(b"\n")[:-1]:
            number += 1
            line = line[:MAX_LINE_BYTES]
            if waiting:
                shown = _decode(line[:_CONTEXT_BYTES], encoding)[: finders.MAX_MATCH_CHARS]
                for match in waiting:
                    match["after"].append(shown)
                while waiting and len(waiting[0]["after"]) == context:
                    yield waiting.popleft()
            if prefilter is None or prefilter(line):
                text = _decode(line, encoding)
                if (hit := find(text)) is not None:
                    match = _match(name, number, text, hit.start(), before, encoding)
                    if context:
                        waiting.append(match)
                    else:
                        yield match
            before.append(line[:_CONTEXT_BYTES])
    yield from waiting  # the end of the file came before their lines after


def _passed_over(block: bytes, encoding: str, skip: Skip) -> bool:
    """Return whether no line of `block` can match, as its tests tell."""
    if skip.prefilter is not None:
        return not skip.prefilter(block)
    if skip.block_test is not None:
        # As `_decode` leaves each line: with no CR before its LF, which `$` would see.
        return not skip.block_test(block.decode(encoding, "replace").replace("\r\n", "\n"))
    return False


def _blocks(file: BinaryIO, tick: Tick) -> Iterator[bytes]:
    """Yield `file` in blocks of whole lines, each ending in LF; tick each MiB read.

    Of a line longer than `MAX_LINE_BYTES` and still unfinished at the end of a read, only
    the first `MAX_LINE_BYTES` are kept: the rest is read past, never held.
    """
    pending = b""  # the start of a line that goes on in the next read
    skipping = False  # in a long line, past the part kept
    read = done = 0
    while data := file.read(BLOCK_BYTES):
        read += len(data)
        if read >> 20 > done:
            done = read >> 20
            tick(done)
        if skipping:
            end = data.find(b"\n")
            if end < 0:
                continue
            data, skipping = data[end + 1 :], False
        data = pending + data
        end = data.rfind(b"\n") + 1
        block, pending = data[:end], data[end:]
        if len(pending) > MAX_LINE_BYTES:
            block += pending[:MAX_LINE_BYTES] + b"\n"
            pending, skipping = b"", True
        if block:
            yield block
    if pending:
        yield pending + b"\n"


def _match(
    name: str, number: int, text: str, column: int, before: deque[bytes], encoding: str
) -> ContentMatch:
    """Return the match of line `number`, whose text is `text`, found at `column`."""
    return {
        "path": name,
        "line": number,
        "column": column + 1,
        "text": finders.around(text, column),
        "before": [_decode(line, encoding)[: finders.MAX_MATCH_CHARS] for line in before],
        "after": [],
    }


def _decode(line: bytes, encoding: str) -> str:
    """Return the text of a line (split at LF) without its line ending: a CR before the LF."""
    return line.removesuffix(b"\r").decode(encoding, "replace")
