"""The file operations behind the tools: blocking, bounded, and confined by a `Sandbox`.

Every function takes the sandbox first, resolves its paths through it, and returns a typed
result or raises `FsError` with a message that says what to do next. Nothing here knows
about MCP; the server runs these functions in worker threads, except the reads of one file
or one directory, which it runs `on_loop` (on the event loop) while they stay small.
"""

import hashlib
import mimetypes
import os
import re
import stat
from collections.abc import Callable, Generator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from itertools import islice
from operator import itemgetter
from typing import BinaryIO, Literal, NamedTuple, TypeVar

from .edits import Edit, EditMismatch, apply_edits, unified_diff
from .models import (
    AllowedDirectories,
    AllowedDirectory,
    Comparison,
    Created,
    Edited,
    Entry,
    EntryType,
    FileInfo,
    FileText,
    Listing,
    MultipleFiles,
    Page,
    SizedEntry,
    SizedListing,
    TextRead,
    Written,
)
from .sandbox import (
    FsError,
    Place,
    Sandbox,
    explain,
    open_directory,
    open_file,
    require_writable,
    write_atomic,
)
from .text import BinaryFile, Codec, decode, sniff, split_lines, to_lf, with_endings

KiB = 1024
MiB = 1024 * KiB
WHOLE_FILE_BYTES = 16 * MiB  # larger text files are read line by line, never whole
DEFAULT_READ_BYTES = 256 * KiB  # about what a client takes in one tool result
MAX_LINE_CHARS = 2000  # a longer line is cut (minified code), in listings of matches
# What a read may do `on_loop`: about a millisecond of work, as much as the hop to a worker
# thread would cost. Larger work goes to a thread, where it blocks no other request.
LOOP_FILE_BYTES = 256 * KiB
LOOP_ENTRIES = 2000
_SHA256 = re.compile("[0-9a-fA-F]{64}")

EntryT = TypeVar("EntryT", bound=Entry)
# Called as long work goes on (walks, hashes) with a count so far: the server reports it as
# progress, and stops the work there once its request is cancelled (see access.Progress).
Tick = Callable[[int], None]
WriteMode = Literal["overwrite", "append", "create"]
SortBy = Literal["name", "size"]


class TooLarge(Exception):
    """Work asked to stay small (`on_loop`) is larger: run it again in a worker thread."""


def no_tick(count: int) -> None:
    """Default `tick`: nothing to report."""


# Reading ---------------------------------------------------------------------------------


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
) -> TextRead:
    """Read lines of a text file: all, the first or last `head`/`tail`, or a range.

    `offset` is the 1-based first line and `limit` the number of lines. At most
    `max_bytes` of text are returned; `truncated` and `next_offset` say where to go on.

    Raises:
        FsError: conflicting arguments, or the file cannot be read as text.
        TooLarge: `on_loop`, and the file is over `LOOP_FILE_BYTES`.
    """
    if head is not None and tail is not None:
        raise FsError("Give head or tail, not both.")
    if tail is not None and offset is not None:
        raise FsError("Give tail or offset, not both.")
    with _reading(sandbox, path, on_loop=on_loop) as (file, size, shown):
        if size > WHOLE_FILE_BYTES:
            return _read_large(
                file, shown, size, head, tail, offset, limit, max_bytes, line_numbers
            )
        data = _read_up_to(file, size, WHOLE_FILE_BYTES)
    if len(data) > WHOLE_FILE_BYTES:
        raise FsError(f"{shown} grew while being read: read it again.")
    text, codec = _decode(data, shown)
    lines = split_lines(text)
    first = max(0, len(lines) - tail) if tail is not None else (offset or 1) - 1
    count = head if head is not None else limit
    chosen = lines[first:] if count is None else lines[first : first + count]
    page = _page(chosen, max_bytes, from_end=tail is not None)
    if tail is not None:
        first += len(chosen) - len(page.lines)  # a tail cut by max_bytes loses its first lines
    more = first + len(page.lines) < len(lines)
    return TextRead(
        path=shown,
        content=_join(page.lines, first, line_numbers),
        start_line=first + 1,
        end_line=first + len(page.lines),
        total_lines=len(lines),
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
    codec = _sniff(file.read(8192), shown)
    if codec.encoding.startswith("utf-16"):
        raise FsError(f"{shown} is a UTF-16 file over {WHOLE_FILE_BYTES // MiB} MiB: too large.")
    count = head if head is not None else limit
    if tail is not None:
        raw, more = _last_lines(file, size, tail, max_bytes), False
        first = None  # unknown without reading the whole file
    else:
        first = (offset or 1) - 1
        raw, more = _lines_from(file, first, count, max_bytes)
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
        eol="\n",
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


def _decode(data: bytes, shown: str) -> tuple[str, Codec]:
    try:
        return decode(data)
    except BinaryFile:
        raise FsError(f"{shown} is a binary file: use read_media_file.") from None


def _sniff(head: bytes, shown: str) -> Codec:
    try:
        return sniff(head)
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
    return Media(shown, guess_mime(shown, data[:64]), data)


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


_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"fLaC", "audio/flac"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
)


# Text formats that Python's own table leaves out (it varies by version).
_TEXT_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
}


def guess_mime(path: str, head: bytes) -> str:
    """Return a file's MIME type: from its first bytes when they tell, else its name.

    Names are looked up in Python's own table, not the machine's `/etc/mime.types`: that
    one calls `.ts` files Qt translations and `.rs` files XML, and differs between machines.
    """
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE"):
        return "image/webp" if head[8:12] == b"WEBP" else "audio/wav"
    extension = os.path.splitext(path)[1].lower()
    guessed, _ = _python_types().guess_type(path, strict=False)
    return _TEXT_TYPES.get(extension) or guessed or "application/octet-stream"


@cache
def _python_types() -> mimetypes.MimeTypes:
    """Python's own table of types by name (made on first use: it costs start-up time)."""
    return mimetypes.MimeTypes()


def read_many(
    sandbox: Sandbox, paths: list[str], *, max_bytes_per_file: int, max_total_bytes: int
) -> MultipleFiles:
    """Read several text files; a file that fails carries its error instead of content."""
    files: list[FileText] = []
    budget = max_total_bytes
    for path in paths:
        if budget <= 0:
            error = "Not read: max_total_bytes was reached."
            files.append(FileText(path=path, content=None, truncated=False, error=error))
            continue
        try:
            read = read_text(sandbox, path, max_bytes=min(max_bytes_per_file, budget))
        except FsError as exc:
            files.append(FileText(path=path, content=None, truncated=False, error=str(exc)))
            continue
        content = read["content"]
        budget -= len(content.encode("utf-8"))
        files.append(
            FileText(path=read["path"], content=content, truncated=read["truncated"], error=None)
        )
    return MultipleFiles(files=files)


# Writing ---------------------------------------------------------------------------------


def write(
    sandbox: Sandbox,
    path: str,
    content: str,
    *,
    mode: WriteMode = "overwrite",
    expected_sha256: str | None = None,
    create_parents: bool = False,
) -> Written:
    """Write `content` (UTF-8) to a file: replace it, append to it, or create it only.

    With `expected_sha256`, the file must exist with exactly that hash.

    Raises:
        FsError: the file exists in create mode, changed since it was read, or cannot
            be written.
    """
    if path.endswith(("/", "/.", "/..")):
        raise FsError(f"{path} ends as a directory does: give a file path.")
    with sandbox.place(path, follow=False, make_parents=create_parents) as place:
        require_writable(place)
        existed = place.lstat() is not None
        if mode == "create" and existed:
            raise FsError(f"{place.shown} already exists: use mode 'overwrite' to replace it.")
        if expected_sha256 is not None:
            _check_hash(place, expected_sha256)
        if mode == "append" and existed:
            written = _append(place, content)
        else:
            data = _encode(content, "utf-8", place.shown)
            write_atomic(place, data, create_only=mode == "create")
            written = len(data)
        digest = _sha256(place)
        return Written(
            path=place.shown,
            mode=mode,
            bytes_written=written,
            created=not existed,
            sha256=digest,
        )


def _encode(content: str, encoding: str, shown: str) -> bytes:
    """Return `content` in `encoding`.

    Raises:
        FsError: the encoding cannot hold it (or it is not Unicode: a lone surrogate).
    """
    try:
        return content.encode(encoding)
    except UnicodeEncodeError as exc:
        bad = content[exc.start : exc.end]
        raise FsError(
            f"{shown}: {encoding} cannot hold {bad!r} of the content: nothing was written."
        ) from None


def _append(place: Place, content: str) -> int:
    """Append `content` to the file at `place`, in the file's own encoding; return the bytes.

    Raises:
        FsError: the file is not a plain regular file, or its encoding cannot hold `content`.
    """
    assert place.name is not None
    flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(place.name, flags, dir_fd=place.dir_fd)
    except OSError as exc:
        raise explain(exc, place.shown) from None
    with os.fdopen(fd, "ab") as file:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise FsError(f"{place.shown} is not a regular file: refused.")
        if status.st_nlink > 1:
            # Appending in place would change every other name of this file too.
            raise FsError(f"{place.shown} has other hard links: append refused.")
        with open_read(place) as reader:  # the whole text tells UTF-8 from Latin-1
            head = reader.read(WHOLE_FILE_BYTES + 1)
        if len(head) <= WHOLE_FILE_BYTES:
            _, codec = _decode(head, place.shown)
        else:
            codec = _sniff(head[:8192], place.shown)
        data = _encode(content, codec.encoding, place.shown)
        file.write(data)
    return len(data)


def open_read(place: Place) -> BinaryIO:
    """Open the regular file at `place` as a binary file object."""
    return os.fdopen(open_file(place), "rb")


def hash_file(file: BinaryIO, tick: Tick = no_tick) -> str:
    """Return the SHA-256 of an open file, read to its end a MiB at a time.

    `tick(n)` follows the n-th MiB, so a hash of a large file can be reported and stopped.
    """
    digest = hashlib.sha256()
    for done, block in enumerate(iter(lambda: file.read(MiB), b""), start=1):
        digest.update(block)
        tick(done)
    return digest.hexdigest()


def _sha256(place: Place, tick: Tick = no_tick) -> str:
    """Return the SHA-256 of the file at `place`."""
    with open_read(place) as file:
        return hash_file(file, tick)


def _check_hash(place: Place, expected: str) -> None:
    """Raise FsError unless the file at `place` exists with SHA-256 `expected`."""
    if not _SHA256.fullmatch(expected):
        raise FsError(
            "expected_sha256 is not a SHA-256 (64 hexadecimal digits): pass the sha256 that"
            " reading or writing the file returned."
        )
    if place.lstat() is None:
        raise FsError(f"{place.shown} does not exist, but expected_sha256 was given.")
    actual = _sha256(place)
    if actual != expected.lower():
        raise FsError(
            f"{place.shown} changed since it was read (its SHA-256 is now {actual}): read it"
            " again and redo the change."
        )


def edit(
    sandbox: Sandbox,
    path: str,
    edits: list[Edit],
    *,
    dry_run: bool = False,
    expected_sha256: str | None = None,
) -> Edited:
    """Apply text edits to a file, keeping its encoding, BOM and line endings.

    Raises:
        FsError: an edit does not match exactly once, or the file cannot be edited.
    """
    with sandbox.place(path, follow=False) as place:
        if not dry_run:
            require_writable(place)
        if expected_sha256 is not None:
            _check_hash(place, expected_sha256)
        with open_read(place) as file:
            data = file.read(WHOLE_FILE_BYTES + 1)
        if len(data) > WHOLE_FILE_BYTES:
            raise FsError(
                f"{place.shown} is over {WHOLE_FILE_BYTES // MiB} MiB: too large to edit."
            )
        text, codec = _decode(data, place.shown)
        # Edits are matched on LF text; each line gets its own ending back.
        before = to_lf(text)
        normalised = [Edit(to_lf(e.old), to_lf(e.new), e.replace_all) for e in edits]
        try:
            after, count = apply_edits(before, normalised)
        except EditMismatch as exc:
            raise FsError(f"{place.shown}: {exc} Nothing was changed.") from None
        try:
            new_data = codec.encode(with_endings(after, text, codec.eol))
        except UnicodeEncodeError:
            raise FsError(
                f"{place.shown} is stored as {codec.name}, which cannot hold the new text."
            ) from None
        if not dry_run:
            write_atomic(place, new_data)
        return Edited(
            path=place.shown,
            diff=unified_diff(before, after, place.shown, place.shown),
            replacements=count,
            applied=not dry_run,
            sha256=hashlib.sha256(data if dry_run else new_data).hexdigest(),
        )


def create_directory(sandbox: Sandbox, path: str) -> Created:
    """Create a directory and any missing parents (an existing one is fine).

    Raises:
        FsError: something else is at the path, or the directory is read-only.
    """
    with sandbox.place(path, make_parents=True) as place:
        status = place.lstat()
        if status is not None:
            if not stat.S_ISDIR(status.st_mode):
                raise FsError(f"{place.shown} exists and is not a directory.")
            return Created(path=place.shown, created=False)
        require_writable(place)
        assert place.name is not None
        try:
            os.mkdir(place.name, dir_fd=place.dir_fd)
        except FileExistsError:
            return Created(path=place.shown, created=False)
        except OSError as exc:
            raise explain(exc, place.shown) from None
        return Created(path=place.shown, created=True)


# Listing and information ------------------------------------------------------------------


def entry_type(mode: int) -> EntryType:
    """Return the entry type for an `st_mode`."""
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def list_directory(
    sandbox: Sandbox, path: str, *, offset: int = 0, limit: int = 1000, on_loop: bool = False
) -> Listing:
    """List a directory's entries by name (denied ones left out), a page at a time.

    Raises:
        FsError: the path is not a directory that may be read.
        TooLarge: `on_loop`, and the directory has over `LOOP_ENTRIES` entries.
    """
    shown, entries = _scan(sandbox, path, _plain, on_loop=on_loop)
    page, about = _paginate(shown, entries, offset, limit)
    return Listing(**about, entries=page)


def list_directory_with_sizes(
    sandbox: Sandbox,
    path: str,
    *,
    sort_by: SortBy = "name",
    offset: int = 0,
    limit: int = 1000,
    on_loop: bool = False,
) -> SizedListing:
    """List a directory's entries with sizes (largest first by `size`), a page at a time.

    Raises:
        FsError: the path is not a directory that may be read.
        TooLarge: `on_loop`, and the directory has over `LOOP_ENTRIES` entries.
    """
    shown, entries = _scan(sandbox, path, _sized, on_loop=on_loop)
    if sort_by == "size":
        entries.sort(key=lambda e: e["size"] or 0, reverse=True)  # stable: ties stay by name
    total = sum(e["size"] or 0 for e in entries)
    page, about = _paginate(shown, entries, offset, limit)
    return SizedListing(**about, entries=page, total_size=total)


def _paginate(
    shown: str, entries: list[EntryT], offset: int, limit: int
) -> tuple[list[EntryT], Page]:
    """Return the page of `entries` that starts at `offset`, and what a listing says of it."""
    page = entries[offset : offset + limit]
    end = offset + len(page)
    more = end < len(entries)
    return page, {
        "path": shown,
        "total_entries": len(entries),
        "truncated": more,
        "next_offset": end if more else None,
    }


def _scan(
    sandbox: Sandbox,
    path: str,
    describe: Callable[[list[os.DirEntry[str]]], list[EntryT]],
    *,
    on_loop: bool,
) -> tuple[str, list[EntryT]]:
    """Return the shown path of a directory and its entries by name, denied ones left out.

    `describe` turns the directory's items into entries, while it is open (a stat of an
    entry needs it).

    Raises:
        FsError: the path is not a directory that may be read.
        TooLarge: `on_loop`, and the directory has over `LOOP_ENTRIES` entries.
    """
    with sandbox.place(path) as place:
        fd = open_directory(place)
        try:
            with os.scandir(fd) as found:
                items = list(islice(found, LOOP_ENTRIES + 1) if on_loop else found)
            if len(items) > LOOP_ENTRIES and on_loop:
                raise TooLarge(place.shown)
            if sandbox.deny:  # checked once: most sandboxes have no deny globs
                items = [
                    item
                    for item in items
                    if not sandbox.is_denied(place.root, _child(place.relative, item.name))
                ]
            entries = describe(items)
        finally:
            os.close(fd)
        entries.sort(key=_by_name)
        return place.shown, entries


_by_name = itemgetter("name")


def _child(relative: str, name: str) -> str:
    return f"{relative}/{name}" if relative else name


def _plain(items: list[os.DirEntry[str]]) -> list[Entry]:
    """Return the entries with their types, from the listing itself.

    One loop, no call per entry for files (most entries): a listing's cost is per entry.
    """
    return [
        {
            "name": item.name,
            "type": "file" if item.is_file(follow_symlinks=False) else dirent_type(item),
        }
        for item in items
    ]


def _sized(items: list[os.DirEntry[str]]) -> list[SizedEntry]:
    """Return the entries with their sizes and modification times (a stat call each)."""
    return [_sized_entry(item) for item in items]


def _sized_entry(item: os.DirEntry[str]) -> SizedEntry:
    kind = dirent_type(item)
    try:
        status = item.stat(follow_symlinks=False)
    except OSError:  # gone since the listing
        return {"name": item.name, "type": kind, "size": None, "modified": None}
    size = status.st_size if kind == "file" else None
    return {"name": item.name, "type": kind, "size": size, "modified": _iso(status.st_mtime)}


def dirent_type(item: os.DirEntry[str]) -> EntryType:
    """Return the type of a directory entry, from the listing itself when it tells.

    Files come first: they are most entries, and a link is neither a file nor a directory
    when links are not followed.
    """
    if item.is_file(follow_symlinks=False):
        return "file"
    if item.is_dir(follow_symlinks=False):
        return "directory"
    if item.is_symlink():
        return "symlink"
    return "other"


def file_info(
    sandbox: Sandbox,
    path: str,
    *,
    with_hash: bool = False,
    tick: Tick = no_tick,
    on_loop: bool = False,
) -> FileInfo:
    """Describe a file, directory or link (a link itself, not what it points to).

    A hash calls `tick` with the MiB hashed so far.

    Raises:
        FsError: the path does not exist or may not be read.
        TooLarge: `on_loop` and `with_hash`: a hash reads the whole file.
    """
    if on_loop and with_hash:
        raise TooLarge(path)
    with sandbox.place(path, follow=False) as place:
        status = place.lstat()
        if status is None:
            raise FsError(f"{place.shown} does not exist.")
        kind = entry_type(status.st_mode)
        target = _link_target(sandbox, place) if kind == "symlink" else None
        digest = _sha256(place, tick) if with_hash and kind == "file" else None
        shown = place.shown
    birth: float | None = getattr(status, "st_birthtime", None)
    return FileInfo(
        path=shown,
        size=status.st_size,
        created=_iso(birth) if birth is not None else None,
        modified=_iso(status.st_mtime),
        accessed=_iso(status.st_atime),
        isDirectory=kind == "directory",
        isFile=kind == "file",
        permissions=f"{stat.S_IMODE(status.st_mode):03o}",
        type=kind,
        symlink_target=target,
        mime_type=guess_mime(shown, b"") if kind == "file" else None,
        sha256=digest,
    )


def _link_target(sandbox: Sandbox, place: Place) -> str:
    """Return where the link at `place` leads, if that is inside the allowed directories."""
    try:
        with sandbox.place(place.shown) as target:
            return target.shown
    except FsError:
        return "(outside the allowed directories, or missing)"


def allowed_directories(sandbox: Sandbox) -> AllowedDirectories:
    """Return the directories the sandbox allows."""
    return AllowedDirectories(
        directories=[
            AllowedDirectory(path=d.given, read_only=d.read_only, source=d.source)
            for d in sandbox.directories
        ]
    )


def compare(sandbox: Sandbox, path_a: str, path_b: str, *, context: int = 3) -> Comparison:
    """Return the unified diff between two text files.

    Raises:
        FsError: either file cannot be read as text.
    """
    data_a, shown_a = read_bytes(sandbox, path_a, max_bytes=WHOLE_FILE_BYTES)
    data_b, shown_b = read_bytes(sandbox, path_b, max_bytes=WHOLE_FILE_BYTES)
    text_a, _ = _decode(data_a, shown_a)
    text_b, _ = _decode(data_b, shown_b)
    return Comparison(
        path_a=shown_a,
        path_b=shown_b,
        identical=data_a == data_b,
        diff=unified_diff(text_a, text_b, shown_a, shown_b, context),
    )
