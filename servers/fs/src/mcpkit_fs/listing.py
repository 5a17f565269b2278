"""Listing directories and describing entries: types, sizes, times, link targets.

Listings leave denied entries out and come a page at a time. list_directory gives names
grouped by kind, directories first: a name list is a third of the JSON of a list of typed
objects, and costs a client a fifth of the time to parse and check against the schema.
"""

import os
import stat
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from typing import Literal, TypeVar

from .errors import AccessDenied, FsError
from .files import open_directory, open_read
from .hashing import sha256_of
from .lookup import Place
from .mime import guess_mime
from .models import (
    AllowedDirectories,
    AllowedDirectory,
    EntryType,
    FileInfo,
    Listing,
    Page,
    SizedEntry,
    SizedListing,
)
from .policy import join_relative
from .reading import TooLarge
from .sandbox import Sandbox
from .text import SNIFF_BYTES, composed
from .ticks import Tick, no_tick

LOOP_ENTRIES = 2000  # what a listing may do `on_loop` (see reading.LOOP_FILE_BYTES)
PRUNE_AFTER = 4096  # entries beyond twice a page's end that a listing holds before it prunes
ScanT = TypeVar("ScanT")
Sortable = TypeVar(  # what a listing keeps
    "Sortable", str, tuple[int, str], tuple[tuple[int, str], SizedEntry]
)
KINDS: tuple[EntryType, ...] = ("directory", "file", "symlink", "other")
"""The kinds of entry in the order listings give them."""
SortBy = Literal["name", "size"]


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
    """List a directory's names by kind, directories first, denied ones left out, by pages.

    Raises:
        FsError: the path is not a directory that may be read, or `offset` is past its end.
        TooLarge: `on_loop`, and the directory has over `LOOP_ENTRIES` entries.
    """
    shown, (kinds, total) = _scan(
        sandbox, path, partial(_names_by_kind, keep=offset + limit), on_loop=on_loop
    )
    about = _page(shown, total, offset, limit)
    pages: list[list[str]] = []  # the page's part of each kind
    skip, room = offset, limit
    for names in kinds:
        page = names[skip : skip + room]
        pages.append(page)
        skip, room = max(0, skip - len(names)), room - len(page)
    directories, files, symlinks, other = pages
    return Listing(**about, directories=directories, files=files, symlinks=symlinks, other=other)


def named_entries(listing: Listing) -> list[tuple[EntryType, str]]:
    """Return the type and name of each entry of a listing's page, in its order."""
    return [
        *(("directory", name) for name in listing["directories"]),
        *(("file", name) for name in listing["files"]),
        *(("symlink", name) for name in listing["symlinks"]),
        *(("other", name) for name in listing["other"]),
    ]


def entries_starting(
    sandbox: Sandbox, path: str, prefix: str, *, keep: int
) -> tuple[list[tuple[EntryType, str]], int]:
    """Return the first `keep` entries whose names start with `prefix`, and their number.

    They come as a listing gives them: directories first, each kind by name. Names and
    `prefix` are compared in composed form, as a path finds a name in another Unicode form.
    Only `keep` of them are held at once, however many there are.

    Raises:
        FsError: the path is not a directory that may be read.
    """
    _, (kept, count) = _scan(
        sandbox, path, partial(_ranked_starting, prefix=composed(prefix), keep=keep), on_loop=False
    )
    return [(KINDS[rank], name) for rank, name in kept], count


def _ranked_starting(
    items: Iterator[os.DirEntry[str]], prefix: str, keep: int
) -> tuple[list[tuple[int, str]], int]:
    """Return the first `keep` (kind's rank, name) of items named `prefix`..., and their number."""
    kept: list[tuple[int, str]] = []
    count = 0
    for item in items:
        if composed(item.name).startswith(prefix):
            kept.append((KINDS.index(dirent_type(item)), item.name))
            count += 1
            if len(kept) > 2 * keep + PRUNE_AFTER:
                _keep_first(kept, keep)
    _keep_first(kept, keep)
    return kept, count


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
        FsError: the path is not a directory that may be read, or `offset` is past its end.
        TooLarge: `on_loop`, and the directory has over `LOOP_ENTRIES` entries.
    """
    shown, (entries, count, total) = _scan(
        sandbox, path, partial(_sized, sort_by=sort_by, keep=offset + limit), on_loop=on_loop
    )
    about = _page(shown, count, offset, limit)
    return SizedListing(**about, entries=entries[offset : offset + limit], total_size=total)


def _page(shown: str, total: int, offset: int, limit: int) -> Page:
    """Return what a listing of `total` entries says of its page from `offset`.

    Raises:
        FsError: `offset` is past the last entry.
    """
    if offset and offset >= total:
        raise FsError(
            f"{shown} has {total} entries: offset {offset} is past its end."
            " Use a smaller offset, or none to list from the start."
        )
    end = min(total, offset + limit)
    more = end < total
    return {
        "path": shown,
        "total_entries": total,
        "truncated": more,
        "next_offset": end if more else None,
    }


def _scan(
    sandbox: Sandbox,
    path: str,
    describe: Callable[[Iterator[os.DirEntry[str]]], ScanT],
    *,
    on_loop: bool,
) -> tuple[str, ScanT]:
    """Return the shown path of a directory and what `describe` makes of its items.

    Denied items are left out. `describe` runs while the directory is open (a stat of an
    item needs it), and is given the items one at a time: a directory of a million
    entries held as a list took 380 MiB, the page of ten asked for or not.

    Raises:
        FsError: the path is not a directory that may be read.
        TooLarge: `on_loop`, and the directory has over `LOOP_ENTRIES` entries.
    """
    with sandbox.place(path) as place:
        fd = open_directory(place)
        try:
            with os.scandir(fd) as found:
                items: Iterator[os.DirEntry[str]] = found
                if on_loop:
                    items = _at_most(found, LOOP_ENTRIES, place.shown)
                if sandbox.deny:  # checked once: most sandboxes have no deny globs
                    items = (
                        item
                        for item in items
                        if not sandbox.is_denied(
                            place.root, join_relative(place.relative, item.name)
                        )
                    )
                described = describe(items)
        finally:
            os.close(fd)
        return place.shown, described


def _at_most(
    items: Iterator[os.DirEntry[str]], most: int, shown: str
) -> Iterator[os.DirEntry[str]]:
    """Yield `items`, raising TooLarge at the one past `most`."""
    for count, item in enumerate(items, start=1):
        if count > most:
            raise TooLarge(shown)
        yield item


def _names_by_kind(
    items: Iterator[os.DirEntry[str]], keep: int
) -> tuple[tuple[list[str], ...], int]:
    """Return the first `keep` names of each kind (directories, files, links, others).

    Each kind's names are sorted; the count of all entries comes beside them. Types come
    from the listing itself, with no system call. Files, most entries, are told apart
    inline rather than by `dirent_type`: a listing's cost is per entry.
    """
    kinds: dict[EntryType, list[str]] = {"directory": [], "file": [], "symlink": [], "other": []}
    count = 0
    for item in items:
        kind = "file" if item.is_file(follow_symlinks=False) else dirent_type(item)
        names = kinds[kind]
        names.append(item.name)
        count += 1
        if len(names) > 2 * keep + PRUNE_AFTER:
            _keep_first(names, keep)
    for names in kinds.values():
        _keep_first(names, keep)
    return tuple(kinds.values()), count


def _sized(
    items: Iterator[os.DirEntry[str]], sort_by: SortBy, keep: int
) -> tuple[list[SizedEntry], int, int]:
    """Return the first `keep` entries with sizes and times, how many there are, their size.

    Entries come by name, or largest first by `size` (ties by name); each costs a stat.
    """
    by_size = sort_by == "size"
    keyed: list[tuple[tuple[int, str], SizedEntry]] = []  # names differ: keys never tie
    count = total = 0
    for item in items:
        entry = _sized_entry(item)
        size = entry["size"] or 0
        keyed.append(((-size if by_size else 0, entry["name"]), entry))
        count += 1
        total += size
        if len(keyed) > 2 * keep + PRUNE_AFTER:
            _keep_first(keyed, keep)
    _keep_first(keyed, keep)
    return [entry for _, entry in keyed], count, total


def _keep_first(items: list[Sortable], keep: int) -> None:
    """Sort `items` and drop all but the first `keep`."""
    items.sort()
    del items[keep:]


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
        hashed = with_hash and kind == "file"
        digest = sha256_of(place, tick, size=status.st_size) if hashed else None
        mime = _mime_of(place) if kind == "file" else None
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
        mime_type=mime,
        sha256=digest,
    )


def _mime_of(place: Place) -> str:
    """Return the MIME type of the regular file at `place`, from its first bytes and name.

    A file that may not be read (mode 000, say) is known by its name alone.
    """
    try:
        with open_read(place) as file:
            head = file.read(SNIFF_BYTES)
    except (FsError, OSError):
        head = b""
    return guess_mime(place.shown, head)


def _link_target(sandbox: Sandbox, place: Place) -> str:
    """Return where the link at `place` leads, if that is inside the allowed directories.

    Otherwise say why not, but nothing of a target outside, not even whether it exists.
    """
    try:
        with sandbox.place(place.shown) as target:
            return target.shown
    except AccessDenied:
        return "(outside the allowed directories, or denied)"
    except FsError as exc:  # inside, and not to be followed: a loop of links, say
        return f"(cannot be followed: {str(exc).rstrip('.')})"


def allowed_directories(sandbox: Sandbox) -> AllowedDirectories:
    """Return the directories the sandbox allows."""
    return AllowedDirectories(
        directories=[
            AllowedDirectory(path=d.given, read_only=d.read_only, source=d.source)
            for d in sandbox.directories
        ]
    )
