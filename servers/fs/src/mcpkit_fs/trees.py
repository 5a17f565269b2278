"""Copying and removing entries and whole trees, by descriptor, never through a link.

A copy keeps permissions (never setuid or setgid) and times, leaves out denied entries and
what cannot be copied (FIFOs, sockets, devices), and leaves nothing behind if it fails. Nor
does it make a link that would lead outside the destination's allowed directory
(`leads_inside`): mcp-fs never follows one, but an editor, a build or git would. Nor may a
move (`link_led_out_by_move`).
"""

import os
import stat
from contextlib import suppress
from typing import BinaryIO

from .errors import explain
from .files import (
    FILE_FLAGS,
    NEW_FLAGS,
    PERMISSIONS,
    copy_stored,
    open_directory,
    open_read,
    temporary_name,
    write_atomic,
)
from .lookup import DIR_FLAGS, Place
from .paths import naming
from .policy import AllowedDir, join_relative
from .sandbox import Sandbox


def copy_entry(
    sandbox: Sandbox, src: Place, dst: Place, status: os.stat_result, *, replace: bool
) -> int:
    """Copy the entry at `src` (a file, link or tree) to `dst`, permissions and times too.

    Unless `replace`, the copy takes the name only if it is still free: an entry made there
    since it was checked stays (a tree's new directory never replaces anything).
    Return how many entries of a tree were left out (see `_copy_tree`).
    """
    assert dst.name is not None
    try:
        if stat.S_ISDIR(status.st_mode):
            fd = open_directory(src)  # may be an allowed directory itself
            try:
                return _copy_tree(sandbox, src, fd, src.relative, dst, dst.name, status)
            finally:
                os.close(fd)
        if stat.S_ISLNK(status.st_mode) and src.name is not None:
            # Made under another name, then given the name: all at once, as a file is.
            temporary = temporary_name()
            target = os.readlink(src.name, dir_fd=src.dir_fd)
            os.symlink(target, temporary, dir_fd=dst.dir_fd)  # a move checked where it leads
            try:
                if replace:
                    os.replace(temporary, dst.name, src_dir_fd=dst.dir_fd, dst_dir_fd=dst.dir_fd)
                else:  # link() fails if the name exists; the link itself, not its target
                    os.link(
                        temporary,
                        dst.name,
                        src_dir_fd=dst.dir_fd,
                        dst_dir_fd=dst.dir_fd,
                        follow_symlinks=False,
                    )
            finally:
                with suppress(FileNotFoundError):
                    os.unlink(temporary, dir_fd=dst.dir_fd)
        else:
            with open_read(src) as file:
                write_atomic(dst, file, mode=stat.S_IMODE(status.st_mode), create_only=not replace)
        _keep_times(dst.name, dst.dir_fd, status)
    except OSError as exc:
        raise explain(exc, dst.shown) from None
    return 0


def leads_inside(root: AllowedDir, relative: str, target: str) -> bool:
    """Whether a link at `relative` below `root`, to `target`, leads inside `root`.

    Read as written, and strictly: `..` may only begin a target, where it climbs the
    directories the link is in; after a name, which may be a link, it could lead anywhere.
    """
    if target.startswith("/"):
        names = [name for name in target.split("/") if name not in ("", ".")]
        inside = root.path.rstrip("/")
        written = "/" + "/".join(names)
        return ".." not in names and (written == inside or written.startswith(inside + "/"))
    return stays_below(relative, target)


def stays_below(relative: str, target: str) -> bool:
    """Whether a link at `relative`, to the relative `target`, stays below where `relative` starts.

    It climbs no more directories than those `relative` names. Read strictly, as by
    `leads_inside`: `..` after a name could lead anywhere.
    """
    names = [name for name in target.split("/") if name not in ("", ".")]
    climbs = 0  # the `..` that begin it
    while climbs < len(names) and names[climbs] == "..":
        climbs += 1
    return ".." not in names[climbs:] and climbs <= relative.count("/")


def link_led_out_by_move(src: Place, fd: int, dst: Place) -> str | None:
    """Return a link of the tree at `src` (open at `fd`) that a move to `dst` would lead outside.

    The link is named by its path below the tree; None if there is none. Only a relative
    link that climbs out of the tree leads elsewhere once the tree is elsewhere, and only a
    move nearer the root of its allowed directory (this one or another) can then make it
    lead outside: only then is the tree read.

    Raises:
        FsError: a directory in it cannot be read, so this cannot be told.
    """
    if dst.relative.count("/") >= src.relative.count("/"):
        return None
    return _link_led_out(src, fd, "", dst)


def _link_led_out(src: Place, fd: int, below: str, dst: Place) -> str | None:
    """`link_led_out_by_move` for the directory open at `fd`, `below` the tree."""
    for name in sorted(os.listdir(fd)):
        entry = join_relative(below, name)
        with naming(src.root, join_relative(src.relative, entry)):
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            if stat.S_ISLNK(mode):
                target = os.readlink(name, dir_fd=fd)
                moved = join_relative(dst.relative, entry)
                changes = not target.startswith("/") and not stays_below(entry, target)
                if changes and not leads_inside(dst.root, moved, target):
                    return entry
            if not stat.S_ISDIR(mode):
                continue
            sub = os.open(name, DIR_FLAGS, dir_fd=fd)
        try:
            found = _link_led_out(src, sub, entry, dst)
        finally:
            os.close(sub)
        if found is not None:
            return found
    return None


def _copy_tree(
    sandbox: Sandbox,
    src: Place,
    src_fd: int,
    relative: str,
    dst: Place,
    name: str,
    status: os.stat_result,
) -> int:
    """Copy the tree open at `src_fd` (of status `status`) to `name` in `dst`'s directory.

    Permissions and times are copied too. Denied entries are left out, and so are FIFOs,
    sockets and devices, which cannot be copied, and links that would lead outside: return
    how many of those there were.
    """
    os.mkdir(name, 0o700, dir_fd=dst.dir_fd)  # no one else may look in until it is whole
    try:
        return _fill_tree(sandbox, src, src_fd, relative, dst, name, status)
    except BaseException:  # a failed copy leaves nothing behind
        with suppress(OSError):
            remove_tree(dst.dir_fd, name, copied=True)
        raise


def _fill_tree(
    sandbox: Sandbox,
    src: Place,
    src_fd: int,
    relative: str,
    dst: Place,
    name: str,
    status: os.stat_result,
) -> int:
    """Copy into the new directory `name` of `dst`'s directory what `_copy_tree` copies."""
    dst_fd = os.open(name, DIR_FLAGS, dir_fd=dst.dir_fd)
    left_out = 0
    try:
        for child in sorted(os.listdir(src_fd)):
            child_relative = join_relative(relative, child)
            if sandbox.is_denied(src.root, child_relative):
                continue
            with naming(src.root, child_relative):
                child_status = os.stat(child, dir_fd=src_fd, follow_symlinks=False)
            mode = child_status.st_mode
            made = Place(dst_fd, child, dst.root, join_relative(dst.relative, child))
            if stat.S_ISDIR(mode):
                with naming(src.root, child_relative):
                    sub = os.open(child, DIR_FLAGS, dir_fd=src_fd)
                try:
                    left_out += _copy_tree(
                        sandbox, src, sub, child_relative, made, child, child_status
                    )
                finally:
                    os.close(sub)
                continue
            if stat.S_ISLNK(mode):
                with naming(src.root, child_relative):
                    target = os.readlink(child, dir_fd=src_fd)
                if not leads_inside(dst.root, made.relative, target):
                    left_out += 1
                    continue
                os.symlink(target, child, dir_fd=dst_fd)
            elif not stat.S_ISREG(mode):
                left_out += 1
                continue
            else:
                with naming(src.root, child_relative):
                    source = os.fdopen(os.open(child, FILE_FLAGS, dir_fd=src_fd), "rb")
                if not _copy_file(source, child, dst_fd, mode):
                    left_out += 1
                    continue
            _keep_times(child, dst_fd, child_status)
        os.fchmod(dst_fd, stat.S_IMODE(status.st_mode) & PERMISSIONS)
        os.utime(dst_fd, ns=(status.st_atime_ns, status.st_mtime_ns))
    finally:
        os.close(dst_fd)
    return left_out


def _copy_file(source: BinaryIO, name: str, dst_fd: int, mode: int) -> bool:
    """Copy the open file `source` into `dst_fd` as `name`, with the permissions of `mode`.

    Return False if it is no longer a regular file (and close it either way).
    """
    with source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):  # swapped since the listing
            return False
        with os.fdopen(os.open(name, NEW_FLAGS, 0o600, dir_fd=dst_fd), "wb") as target:
            copy_stored(source, target)
            os.fchmod(target.fileno(), stat.S_IMODE(mode) & PERMISSIONS)
    return True


def _keep_times(name: str, dir_fd: int, status: os.stat_result) -> None:
    """Give entry `name` of `dir_fd` (a link itself, not its target) the times of `status`."""
    os.utime(
        name, ns=(status.st_atime_ns, status.st_mtime_ns), dir_fd=dir_fd, follow_symlinks=False
    )


def remove_tree(dir_fd: int, name: str, *, copied: bool = False) -> int:
    """Remove directory `name` of `dir_fd` and everything in it; return the entries removed.

    A tree this server has just `copied` is its own: each directory is made writable
    first, as a read-only one copied whole would keep its entries.
    """
    fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    removed = 0
    try:
        if copied:
            os.fchmod(fd, 0o700)
        for child in os.listdir(fd):
            status = os.stat(child, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(status.st_mode):
                removed += remove_tree(fd, child, copied=copied)
            else:
                os.unlink(child, dir_fd=fd)
                removed += 1
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)
    return removed + 1
