"""Changing files: write, append, edit, make directories; atomic, and never through a link.

Like the reads, every function takes the sandbox first and raises `FsError` with a message
that says what to do next; a refused change leaves everything as it was.
"""

import hashlib
import os
import re
import stat
from collections.abc import Callable
from functools import partial
from typing import Literal

from .diffs import unified_diff
from .edits import Edit, EditMismatch, apply_edits
from .errors import FsError, explain
from .files import (
    open_read,
    require_regular,
    require_writable,
    require_writable_file,
    write_atomic,
)
from .hashing import sha256_of
from .locks import changing
from .lookup import Place, check_made_depth
from .models import Created, Edited, Written
from .reading import WHOLE_FILE_BYTES, MiB, decode_text
from .sandbox import Sandbox
from .text import (
    SNIFF_BYTES,
    BinaryFile,
    Codec,
    decode,
    line_ending,
    sniff,
    to_lf,
    with_endings,
    with_eol,
)
from .ticks import Tick, no_tick

_SHA256 = re.compile("[0-9a-fA-F]{64}")
WriteMode = Literal["overwrite", "append", "create"]


def write(
    sandbox: Sandbox,
    path: str,
    content: str,
    *,
    mode: WriteMode = "overwrite",
    expected_sha256: str | None = None,
    create_parents: bool = False,
    tick: Tick = no_tick,
) -> Written:
    """Write `content` (UTF-8) to a file: replace it, append to it, or create it only.

    With `expected_sha256`, the file must exist with exactly that hash. The file is hashed
    before the write (then `tick(n)` follows its n-th MiB, and may stop it: nothing is
    written) and after an append (stopped there, the append is made, its answer dropped).

    Raises:
        FsError: the file exists in create mode, changed since it was read, or cannot
            be written.
    """
    if path.endswith(("/", "/.", "/..")):
        raise FsError(f"{path} ends as a directory does: give a file path.")
    data = _encode(content, "utf-8", path)  # before any parent is made for it
    # A file that must have a hash exists, and so do its parents: none is made for it.
    make_parents = create_parents and expected_sha256 is None
    with sandbox.place(path, follow=False, make_parents=make_parents) as place:
        if place.name is None:
            raise FsError(f"{place.shown} is an allowed directory: give a file path inside it.")
        require_writable(place)
        with changing(place):
            _refuse_link(sandbox, place)
            existed = place.lstat() is not None
            if mode == "create" and existed:
                raise FsError(f"{place.shown} already exists: use mode 'overwrite' to replace it.")
            if expected_sha256 is not None:
                _check_hash(place, expected_sha256, partial(sha256_of, place, tick))
            if mode == "append" and existed:
                written = _append(place, content)
                digest = sha256_of(place, tick)
            else:
                write_atomic(place, data, create_only=mode == "create")
                written = len(data)
                digest = hashlib.sha256(data).hexdigest()  # of what this call wrote
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
    """Append `content` to the file at `place`, in its encoding and line ending; return the bytes.

    Raises:
        FsError: the file is not a plain regular text file, or its encoding cannot hold
            `content`.
    """
    assert place.name is not None
    status = place.lstat()
    if status is not None:
        require_regular(place, status.st_mode)  # before opening: opening a device can act
    # Read and write: the file whose text decides the encoding is the one appended to.
    flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(place.name, flags, dir_fd=place.dir_fd)
    except OSError as exc:
        raise explain(exc, place.shown) from None
    try:
        status = os.fstat(fd)
        require_regular(place, status.st_mode)  # it may have been swapped meanwhile
        require_writable_file(place, status)  # root opens a file of mode 444 for writing
        if status.st_nlink > 1:
            # Appending in place would change every other name of this file too.
            raise FsError(f"{place.shown} has other hard links: append refused.")
        # The whole text tells UTF-8 from Latin-1 (up to 16 MiB: then the first lines do).
        head = os.pread(fd, min(status.st_size, WHOLE_FILE_BYTES) + 1, 0)
        try:
            codec = _codec_of(head)
        except BinaryFile:
            raise FsError(
                f"{place.shown} is a binary file: append adds text to a text file only."
                " Nothing was written."
            ) from None
        # The new lines end as the file's lines do, as an edit's would; in a file with no
        # line ending yet (empty, or one line), as the content's own.
        ended = b"\n" in head or b"\r" in head
        text = with_eol(content, codec.eol) if ended else content
        data = _encode(text, codec.encoding, place.shown)
        _append_whole(fd, data, status.st_size, place.shown)
    finally:
        os.close(fd)
    return len(data)


def _append_whole(fd: int, data: bytes, size: int, shown: str) -> None:
    """Append all of `data` to the file of `size` bytes open at `fd`, or nothing.

    Raises:
        FsError: it could not be written whole (a full disk, say): the file is cut back.
    """
    rest = memoryview(data)
    try:
        while rest:
            rest = rest[os.write(fd, rest) :]
    except OSError as exc:
        os.ftruncate(fd, size)
        raise FsError(f"{explain(exc, shown)} Nothing was appended.") from None


def _codec_of(head: bytes) -> Codec:
    """Return how the file that starts with `head` stores text (all of it, up to 16 MiB).

    Raises:
        BinaryFile: the file is not text.
    """
    if len(head) <= WHOLE_FILE_BYTES:
        return decode(head)[1]
    codec = sniff(head[:SNIFF_BYTES])  # a larger file's lines end as its first ones do
    first = head[len(codec.bom) : SNIFF_BYTES].decode(codec.encoding, "replace")
    return codec._replace(eol=line_ending(first))


def _refuse_link(sandbox: Sandbox, place: Place) -> None:
    """Refuse to change a symbolic link's target through it, naming the target if allowed.

    Raises:
        FsError: `place` is a symbolic link.
    """
    status = place.lstat()
    if status is None or not stat.S_ISLNK(status.st_mode):
        return
    try:
        with sandbox.place(place.shown) as target:
            shown = target.shown
    except FsError:
        raise FsError(
            f"{place.shown} is a symbolic link that leads outside the allowed directories, or"
            " nowhere: changes never go through a link."
        ) from None
    raise FsError(
        f"{place.shown} is a symbolic link to {shown}: changes never go through a link, so"
        f" make this one to {shown} itself."
    )


def _check_hash(place: Place, expected: str, actual: Callable[[], str]) -> None:
    """Raise FsError unless the file at `place` exists with SHA-256 `expected`.

    `actual()` returns the file's hash; it is asked once the other checks have passed.
    """
    if not _SHA256.fullmatch(expected):
        raise FsError(
            "expected_sha256 is not a SHA-256 (64 hexadecimal digits): pass the sha256 that"
            " reading or writing the file returned."
        )
    if place.lstat() is None:
        raise FsError(f"{place.shown} does not exist, but expected_sha256 was given.")
    now = actual()
    if now != expected.lower():
        raise FsError(
            f"{place.shown} changed since it was read (its SHA-256 is now {now}): read it"
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
    with sandbox.place(path, follow=False) as place, changing(place):
        if not dry_run:
            require_writable(place)
        _refuse_link(sandbox, place)
        with open_read(place) as file:
            data = file.read(WHOLE_FILE_BYTES + 1)
        if len(data) > WHOLE_FILE_BYTES:
            raise FsError(
                f"{place.shown} is over {WHOLE_FILE_BYTES // MiB} MiB: too large to edit."
            )
        if expected_sha256 is not None:  # of the bytes read: the file is hashed no further
            _check_hash(place, expected_sha256, hashlib.sha256(data).hexdigest)
        text, codec = decode_text(data, place.shown)
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
        shown = place.shown
    # The diff is made once the file is let go: it may take seconds (16 MiB of text), which
    # the file's other changes need not wait for.
    return Edited(
        path=shown,
        diff=unified_diff(before, after, shown, shown),
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
        check_made_depth(place.relative.count("/") + 1, place.shown)
        try:
            os.mkdir(place.name, dir_fd=place.dir_fd)
        except FileExistsError:
            return Created(path=place.shown, created=False)
        except OSError as exc:
            raise explain(exc, place.shown) from None
        return Created(path=place.shown, created=True)
