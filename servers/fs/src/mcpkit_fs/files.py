"""Opening what a walk found, and writing a file all at once.

Files are opened `O_NOFOLLOW | O_NONBLOCK` and checked with `fstat`, so a FIFO or device is
refused instead of blocking, and a link swapped in is never followed. Writes go to a
temporary file in the same directory, then `os.replace`, which replaces a name and never
writes through a link.
"""

import errno
import os
import secrets
import select
import stat
from contextlib import suppress
from typing import BinaryIO

from .errors import AccessDenied, FsError, explain
from .lookup import DIR_FLAGS, Place

FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
PERMISSIONS = 0o1777  # what writes and copies keep of a mode: not setuid, not setgid
KEPT_ATTRIBUTES = ("user.", "system.posix_acl_access")
"""The extended attributes a write keeps: the user's own, and the file's access list."""


def require_writable(place: Place) -> None:
    """Raise AccessDenied if `place` lies in a read-only directory."""
    if place.root.read_only:
        raise AccessDenied(f"{place.shown} is in a read-only directory: it cannot be changed.")


def open_file(place: Place) -> int:
    """Open the regular file at `place` for reading and return its descriptor.

    Raises:
        FsError: it is missing, a directory, a link swapped in, or not a regular file.
    """
    if place.name is None:
        raise FsError(f"{place.shown} is a directory: use list_directory.")
    status = place.lstat()
    if status is not None:
        require_regular(place, status.st_mode)  # before opening: opening a device can act
    try:
        fd = os.open(place.name, FILE_FLAGS, dir_fd=place.dir_fd)
    except OSError as exc:
        raise explain(exc, place.shown) from None
    try:
        status = os.fstat(fd)
        require_regular(place, status.st_mode)  # it may have been swapped meanwhile
    except FsError:
        os.close(fd)
        raise
    # A file that says it is empty may be the kernel's, whose read waits for it: /proc/kmsg
    # held the server's thread for ever (and its event loop, where /proc counted as local).
    if not status.st_size and not ready(fd):
        os.close(fd)
        raise FsError(f"{place.shown} is a file whose read would wait (the kernel's): refused.")
    os.set_blocking(fd, True)
    return fd


def ready(fd: int) -> bool:
    """Whether a read of `fd` would return at once (a file on a disk always would)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def require_regular(place: Place, mode: int) -> None:
    """Raise FsError unless `mode`, of the entry at `place`, is a regular file's.

    A link is let through: opening it with `O_NOFOLLOW` fails (ELOOP).
    """
    if stat.S_ISDIR(mode):
        raise FsError(f"{place.shown} is a directory: use list_directory.")
    if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
        raise FsError(f"{place.shown} is not a regular file (a FIFO, socket or device): refused.")


def open_read(place: Place) -> BinaryIO:
    """Open the regular file at `place` as a binary file object.

    Raises:
        FsError: as `open_file`.
    """
    return os.fdopen(open_file(place), "rb")


def open_directory(place: Place) -> int:
    """Open the directory at `place` and return its descriptor.

    Raises:
        FsError: it is missing or not a directory.
    """
    try:
        return os.open(place.name or ".", DIR_FLAGS, dir_fd=place.dir_fd)
    except OSError as exc:
        raise explain(exc, place.shown) from None


def require_writable_file(place: Place, status: os.stat_result) -> None:
    """Refuse the file at `place` (whose status is `status`) if it may not be written.

    A replace needs no permission on the file, but its owner may have made it read-only
    (a file not checked out, say): the server keeps to what writing it in place allows,
    and a mode with no write bit allows nobody, root included (whom `os.access` allows
    everything).

    Raises:
        AccessDenied: the file may not be written.
    """
    assert place.name is not None
    if not status.st_mode & 0o222 or not os.access(
        place.name, os.W_OK, dir_fd=place.dir_fd, effective_ids=True
    ):
        raise AccessDenied(
            f"{place.shown} is read-only (mode {stat.S_IMODE(status.st_mode):03o}): it is"
            " not changed. Ask the user to make it writable if it should change."
        )


def write_atomic(
    place: Place, data: bytes | BinaryIO, *, create_only: bool = False, mode: int | None = None
) -> None:
    """Replace (or create) the file at `place` with `data`, all at once.

    The data goes to a temporary file in the same directory, which then takes the name:
    a reader sees the old or the new content, never a mix, and a link at the name is
    replaced, not followed. `data` is bytes or a binary file to copy. `create_only` fails
    if the name exists. The file gets the permissions `mode`, else those of the file it
    replaces, else the default; never setuid or setgid, which the kernel drops on a write.
    It keeps the owner and attributes of the file it replaces, where it may (`keep_owner`).

    Raises:
        FsError: the place is a directory or a link, or the write fails.
    """
    require_writable(place)
    if place.name is None:
        raise FsError(f"{place.shown} is a directory: give a file path.")
    current = place.lstat()
    if current is not None and not stat.S_ISREG(current.st_mode):
        kind = "symbolic link" if stat.S_ISLNK(current.st_mode) else "directory or special file"
        raise FsError(f"{place.shown} is a {kind}: write to a regular file path instead.")
    if current is not None:
        require_writable_file(place, current)
    if mode is None and current is not None:
        mode = stat.S_IMODE(current.st_mode)
    temporary = temporary_name()
    try:
        fd = os.open(temporary, NEW_FLAGS, 0o666 if mode is None else 0o600, dir_fd=place.dir_fd)
    except PermissionError:
        raise AccessDenied(
            f"{place.shown} cannot be written: its directory does not allow new files"
            " (permission denied), and a write goes to a new file first. An existing file"
            " can still be changed in place with mode 'append'."
        ) from None
    except OSError as exc:
        raise explain(exc, place.shown) from None
    try:
        _fill(fd, data, place.dir_fd, place.name, current, mode)
        if create_only:
            # link() fails if the name exists: an exclusive create that is still all-at-once.
            os.link(temporary, place.name, src_dir_fd=place.dir_fd, dst_dir_fd=place.dir_fd)
            os.unlink(temporary, dir_fd=place.dir_fd)
        else:
            os.replace(temporary, place.name, src_dir_fd=place.dir_fd, dst_dir_fd=place.dir_fd)
    except (OSError, FsError) as exc:
        with suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=place.dir_fd)
        if isinstance(exc, FsError):
            raise
        raise explain(exc, place.shown) from None


def _fill(
    fd: int,
    data: bytes | BinaryIO,
    dir_fd: int,
    name: str,
    current: os.stat_result | None,
    mode: int | None,
) -> None:
    """Write `data` to the new file `fd`, then close it, synced, with the permissions `mode`.

    It takes the owner and attributes of `current`, the status of file `name` of `dir_fd`
    that it replaces, if any.

    Raises:
        OSError: a write failed.
        FsError: a file copied changed size meanwhile (see `copy_stored`).
    """
    with os.fdopen(fd, "wb") as file:
        if isinstance(data, bytes):
            file.write(data)
        else:
            copy_stored(data, file)
        if current is not None:
            keep_owner(file.fileno(), dir_fd, name, current)
        if mode is not None:
            os.fchmod(file.fileno(), mode & PERMISSIONS)
        file.flush()
        os.fsync(file.fileno())


def keep_owner(fd: int, dir_fd: int, name: str, current: os.stat_result) -> None:
    """Give the new file `fd` the owner, group and kept attributes of the file `name`.

    The new file is the server's own: a server running as root made a user's file root's
    at every edit, and every write dropped the file's ACLs and user attributes. What the
    server may not set (another user's ownership) stays as the new file has it.
    `KEPT_ATTRIBUTES` only: a file capability (`security.capability`), say, would give the
    new content what the kernel takes away from a file written in place.
    """
    if hasattr(os, "fchown"):  # POSIX
        for owner, group in ((current.st_uid, current.st_gid), (-1, current.st_gid)):
            try:
                os.fchown(fd, owner, group)
                break
            except OSError:  # not root: then the group alone, if it is one of the server's
                continue
    if not hasattr(os, "listxattr"):  # Linux only
        return
    try:
        old = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:  # not readable: its attributes cannot be read either
        return
    try:
        for attribute in os.listxattr(old):
            if attribute.startswith(KEPT_ATTRIBUTES):
                with suppress(OSError):
                    os.setxattr(fd, attribute, os.getxattr(old, attribute))
    except OSError:  # a filesystem without attributes
        pass
    finally:
        os.close(old)


COPY_BLOCK = 1024 * 1024


def copy_stored(source: BinaryIO, target: BinaryIO) -> None:
    """Copy the file `source` into the empty file `target` as it is stored: holes stay holes.

    Written out whole, a file of holes (`truncate -s 1T`, a few KiB on disk) would fill
    the disk. Only the parts that hold data are copied (`SEEK_DATA`, `SEEK_HOLE`; where a
    filesystem cannot tell, all of it is data), then `target` is given the full size.

    Raises:
        FsError: the source changed size meanwhile (what `target` holds is not a copy).
    """
    source.flush()
    target.flush()
    src, dst = source.fileno(), target.fileno()
    size = os.fstat(src).st_size
    position = 0
    while position < size:
        try:
            start = os.lseek(src, position, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # no data after `position`: holes to the end
                break
            raise
        end = os.lseek(src, start, os.SEEK_HOLE)
        while start < end:
            block = os.pread(src, min(COPY_BLOCK, end - start), start)
            if not block:  # the file shrank meanwhile
                break
            written = 0
            while written < len(block):
                written += os.pwrite(dst, block[written:], start + written)
            start += len(block)
        position = max(end, start)
    if os.fstat(src).st_size != size:
        # Given its first size, the copy of a file cut meanwhile (a log rotated) was its
        # first bytes, then gigabytes of zeros, reported done.
        raise FsError("The file changed size while it was copied: nothing was copied. Try again.")
    os.ftruncate(dst, size)


def temporary_name() -> str:
    """Return a new name for a file made under it, then given its own name all at once."""
    return f".mcp-fs-{secrets.token_hex(8)}.tmp"  # short: any name may be 255 bytes
