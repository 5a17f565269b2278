"""Moving, copying and deleting: operations that take whole trees along.

Trees are handled through directory descriptors, never by path and never through a link,
so a link planted inside a tree cannot send a copy or a delete outside it. Nothing here
overwrites unless asked, an allowed directory (or one holding another) is never moved or
deleted, and a tree that holds denied entries is neither moved nor deleted (nor are those
entries copied). Nor is a tree moved or copied where an entry of it would land on a denied
path: a tree made elsewhere must not plant `.ssh/authorized_keys` under `**/.ssh/**`.
"""

import errno
import os
import secrets
import shutil
import stat
from collections.abc import Generator
from contextlib import contextmanager, suppress
from typing import BinaryIO

from .listing import entry_type
from .locks import changing
from .models import Copied, Deleted, Moved
from .policy import AllowedDir, is_below, join_relative
from .reading import open_read
from .sandbox import (
    PERMISSIONS,
    AccessDenied,
    FsError,
    Place,
    Sandbox,
    explain,
    open_directory,
    require_writable,
    shown_below,
    write_atomic,
)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# Why link() may fail where rename() works: a filesystem without hard links, another
# owner's file under fs.protected_hardlinks, a file with the most links it may have.
_NO_HARD_LINK = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK)
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def move(sandbox: Sandbox, source: str, destination: str, *, overwrite: bool = False) -> Moved:
    """Move or rename a file or directory, also across filesystems.

    Raises:
        FsError: the source is missing or protected, or the destination exists and
            `overwrite` is off (or is a directory).
    """
    with (
        sandbox.place(source, follow=False) as src,
        sandbox.place(destination, follow=False) as dst,
        changing(src, dst),
        _nested_too_deeply(src.shown, "moved", "nothing was moved"),
    ):
        status = _removable(sandbox, src, "moved")
        existed = _prepare_destination(dst, overwrite, status)
        _refuse_denied_landing(sandbox, src, dst, status, "moved")
        assert src.name is not None
        assert dst.name is not None
        try:
            _rename(src, dst, replace=overwrite or stat.S_ISDIR(status.st_mode))
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise explain(exc, dst.shown if exc.errno == errno.EEXIST else src.shown) from None
            # Another filesystem: copy, then remove the original.
            left_out = _copy_entry(sandbox, src, dst, status, replace=overwrite)
            if left_out:  # only a tree leaves entries out: the copy is a directory of ours
                _remove_tree(dst.dir_fd, dst.name, copied=True)
                raise FsError(
                    f"{src.shown} holds {left_out} FIFOs, sockets or devices, which cannot be"
                    " moved to another filesystem: nothing was moved."
                ) from None
            try:
                if stat.S_ISDIR(status.st_mode):
                    _remove_tree(src.dir_fd, src.name)
                else:
                    os.unlink(src.name, dir_fd=src.dir_fd)
            except OSError as exc:
                left = "what is left of it" if stat.S_ISDIR(status.st_mode) else "it"
                raise FsError(
                    f"{dst.shown} is a whole copy of {src.shown}, but removing the original"
                    f" failed: {explain(exc, src.shown)} Remove {left} with delete_path."
                ) from None
        return Moved(source=src.shown, destination=dst.shown, overwritten=existed)


def copy(
    sandbox: Sandbox,
    source: str,
    destination: str,
    *,
    recursive: bool = False,
    overwrite: bool = False,
) -> Copied:
    """Copy a file (or, with `recursive`, a directory tree) to a new path.

    FIFOs, sockets and devices in a tree cannot be copied: they are left out and counted.

    Raises:
        FsError: the source is missing or a directory without `recursive`, or the
            destination exists and `overwrite` is off (or is a directory).
    """
    with (
        sandbox.place(source) as src,
        sandbox.place(destination, follow=False) as dst,
        changing(dst),
        _nested_too_deeply(src.shown, "copied", "nothing was copied"),
    ):
        status = src.lstat()
        if status is None:
            raise FsError(f"{src.shown} does not exist.")
        if stat.S_ISDIR(status.st_mode):
            if not recursive:
                raise FsError(f"{src.shown} is a directory: pass recursive=true to copy it all.")
            if _inside(dst.real, src.real):
                raise FsError(f"{dst.shown} is inside {src.shown}: a tree cannot copy into itself.")
        existed = _prepare_destination(dst, overwrite, status)
        _refuse_denied_landing(sandbox, src, dst, status, "copied")
        left_out = _copy_entry(sandbox, src, dst, status, replace=overwrite)
        return Copied(
            source=src.shown, destination=dst.shown, overwritten=existed, left_out=left_out
        )


def delete(sandbox: Sandbox, path: str, *, recursive: bool = False) -> Deleted:
    """Delete a file, a link, an empty directory, or (with `recursive`) a whole tree.

    Raises:
        FsError: the path is missing, protected, or a non-empty directory without
            `recursive`.
    """
    with (
        sandbox.place(path, follow=False) as place,
        changing(place),
        _nested_too_deeply(place.shown, "deleted", "some of it may be deleted already"),
    ):
        status = _removable(sandbox, place, "deleted")
        assert place.name is not None
        try:
            if not stat.S_ISDIR(status.st_mode):
                os.unlink(place.name, dir_fd=place.dir_fd)
                removed = 1
            elif recursive:
                removed = _remove_tree(place.dir_fd, place.name)
            else:
                os.rmdir(place.name, dir_fd=place.dir_fd)
                removed = 1
        except OSError as exc:
            raise explain(exc, place.shown) from None
        return Deleted(path=place.shown, type=entry_type(status.st_mode), entries_removed=removed)


def _rename(src: Place, dst: Place, *, replace: bool) -> None:
    """Give the entry at `src` the name at `dst`, all at once.

    Unless `replace`, only if that name is still free, where the filesystem has hard links:
    a file made there since it was checked stays. A directory is always renamed (onto
    nothing but an empty directory).

    Raises:
        OSError: the rename failed (EEXIST: the name was taken meanwhile).
    """
    assert src.name is not None
    assert dst.name is not None
    if not replace:
        try:  # link() fails if the name exists; the entry itself, a link not followed
            os.link(
                src.name,
                dst.name,
                src_dir_fd=src.dir_fd,
                dst_dir_fd=dst.dir_fd,
                follow_symlinks=False,
            )
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINK:
                raise
        else:
            try:
                os.unlink(src.name, dir_fd=src.dir_fd)
            except OSError:  # another move took the source meanwhile: this one did not happen
                os.unlink(dst.name, dir_fd=dst.dir_fd)
                raise
            return
    os.rename(src.name, dst.name, src_dir_fd=src.dir_fd, dst_dir_fd=dst.dir_fd)


@contextmanager
def _nested_too_deeply(shown: str, what: str, outcome: str) -> Generator[None]:
    """Turn Python's recursion limit, met in a tree some 900 levels deep, into an FsError.

    Raises:
        FsError: the work went that deep.
    """
    try:
        yield
    except RecursionError:
        raise FsError(
            f"{shown} is nested too deeply (hundreds of levels) to be {what} here: {outcome}."
        ) from None


def _removable(sandbox: Sandbox, place: Place, what: str) -> os.stat_result:
    """Return the status of an entry that may be moved or deleted.

    Raises:
        FsError: it is missing, read-only, an allowed directory or holds one, or holds
            denied entries.
    """
    if place.name is None or any(_inside(d.path, place.real) for d in sandbox.directories):
        raise AccessDenied(f"{place.shown} is or holds an allowed directory: it cannot be {what}.")
    require_writable(place)
    status = place.lstat()
    if status is None:
        raise FsError(f"{place.shown} does not exist.")
    if stat.S_ISDIR(status.st_mode) and sandbox.deny:
        with _naming(place.root, place.relative):
            fd = os.open(place.name, _DIR_FLAGS, dir_fd=place.dir_fd)
        try:
            if _holds_denied(sandbox, place, fd, place.relative):
                raise AccessDenied(
                    f"{place.shown} holds entries the operator denied: it cannot be {what}."
                )
        finally:
            os.close(fd)
    return status


def _inside(path: str, directory: str) -> bool:
    """Return whether `path` is strictly inside `directory`."""
    return path != directory and is_below(path, directory)


def _holds_denied(sandbox: Sandbox, place: Place, fd: int, relative: str) -> bool:
    """Return whether the tree open at `fd` (at `relative` below the root) has a denied entry.

    Raises:
        FsError: a directory in it cannot be read, so this cannot be told.
    """
    for name in os.listdir(fd):
        child = join_relative(relative, name)
        if sandbox.is_denied(place.root, child):
            return True
        with _naming(place.root, child):
            if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                continue
            sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
        try:
            if _holds_denied(sandbox, place, sub, child):
                return True
        finally:
            os.close(sub)
    return False


def _refuse_denied_landing(
    sandbox: Sandbox, src: Place, dst: Place, status: os.stat_result, what: str
) -> None:
    """Refuse to move or copy the tree at `src` to `dst` if an entry would land on a denied path.

    A link to a directory counts as that directory: other programs see its entries below
    the link's new name.

    Raises:
        AccessDenied: one would; nothing has been moved or copied.
    """
    if not sandbox.deny:
        return
    tree = src
    if stat.S_ISLNK(status.st_mode):
        try:
            with sandbox.place(src.shown) as tree:
                fd = open_directory(tree)
        except FsError:  # a link to a file, or to nothing the sandbox reaches
            return
    elif stat.S_ISDIR(status.st_mode):
        fd = open_directory(src)
    else:
        return
    try:
        landing = _denied_landing(sandbox, tree, dst, fd, "")
    finally:
        os.close(fd)
    if landing is not None:
        shown = f"{dst.shown.rstrip('/')}/{landing}"
        raise AccessDenied(
            f"{src.shown} cannot be {what} to {dst.shown}: its entry {shown} would land where"
            " the operator denies access."
        )


def _denied_landing(sandbox: Sandbox, src: Place, dst: Place, fd: int, below: str) -> str | None:
    """Return the first entry that would land on a denied path, or None.

    The entries are those of the tree open at `fd`, which is `below` the source (and lands
    as far below the destination); what is denied at the source is never taken.

    Raises:
        FsError: a directory in it cannot be read, so this cannot be told.
    """
    for name in sorted(os.listdir(fd)):
        entry = join_relative(below, name)
        if sandbox.is_denied(src.root, join_relative(src.relative, entry)):
            continue
        if sandbox.is_denied(dst.root, join_relative(dst.relative, entry)):
            return entry
        with _naming(src.root, join_relative(src.relative, entry)):
            if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                continue
            sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
        try:
            landing = _denied_landing(sandbox, src, dst, sub, entry)
        finally:
            os.close(sub)
        if landing is not None:
            return landing
    return None


def _prepare_destination(dst: Place, overwrite: bool, source: os.stat_result) -> bool:
    """Check that `dst` may receive the entry of status `source`; return if one is there.

    Raises:
        FsError: it is read-only or an allowed directory, or exists and may not be
            overwritten (or is the source itself, by another name).
    """
    require_writable(dst)
    if dst.name is None:
        raise AccessDenied(f"{dst.shown} is an allowed directory: give a path inside it.")
    status = dst.lstat()
    if status is None:
        return False
    if (status.st_dev, status.st_ino) == (source.st_dev, source.st_ino):
        raise FsError(f"{dst.shown} is the source itself (a hard link to it): nothing to do.")
    # What overwrite cannot do is said first: asking for it would only meet another error.
    if stat.S_ISDIR(status.st_mode):
        raise FsError(
            f"{dst.shown} is a directory, which is never replaced: to put the source inside"
            f" it, give the destination as {dst.shown.rstrip('/')}/NAME."
        )
    if stat.S_ISDIR(source.st_mode):
        kind = "symbolic link" if stat.S_ISLNK(status.st_mode) else "file"
        raise FsError(f"{dst.shown} is a {kind}: a directory never replaces it; delete it first.")
    if not overwrite:
        raise FsError(f"{dst.shown} already exists: pass overwrite=true to replace it.")
    return True


def _copy_entry(
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
                return _copy_tree(sandbox, src, fd, src.relative, dst.dir_fd, dst.name, status)
            finally:
                os.close(fd)
        if stat.S_ISLNK(status.st_mode) and src.name is not None:
            # Made under another name, then given the name: all at once, as a file is.
            temporary = f".mcp-fs-{secrets.token_hex(8)}.tmp"
            target = os.readlink(src.name, dir_fd=src.dir_fd)
            os.symlink(target, temporary, dir_fd=dst.dir_fd)
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


def _copy_tree(
    sandbox: Sandbox,
    src: Place,
    src_fd: int,
    relative: str,
    dst_dir_fd: int,
    name: str,
    status: os.stat_result,
) -> int:
    """Copy the tree open at `src_fd` (of status `status`) to directory `name` of `dst_dir_fd`.

    Permissions and times are copied too. Denied entries are left out, and so are FIFOs,
    sockets and devices, which cannot be copied: return how many of those there were.
    """
    os.mkdir(name, 0o700, dir_fd=dst_dir_fd)  # no one else may look in until it is whole
    try:
        return _fill_tree(sandbox, src, src_fd, relative, dst_dir_fd, name, status)
    except BaseException:  # a failed copy leaves nothing behind
        with suppress(OSError):
            _remove_tree(dst_dir_fd, name, copied=True)
        raise


def _fill_tree(
    sandbox: Sandbox,
    src: Place,
    src_fd: int,
    relative: str,
    dst_dir_fd: int,
    name: str,
    status: os.stat_result,
) -> int:
    """Copy into the new directory `name` of `dst_dir_fd` what `_copy_tree` copies."""
    dst_fd = os.open(name, _DIR_FLAGS, dir_fd=dst_dir_fd)
    left_out = 0
    try:
        for child in sorted(os.listdir(src_fd)):
            child_relative = join_relative(relative, child)
            if sandbox.is_denied(src.root, child_relative):
                continue
            with _naming(src.root, child_relative):
                child_status = os.stat(child, dir_fd=src_fd, follow_symlinks=False)
            mode = child_status.st_mode
            if stat.S_ISDIR(mode):
                with _naming(src.root, child_relative):
                    sub = os.open(child, _DIR_FLAGS, dir_fd=src_fd)
                try:
                    left_out += _copy_tree(
                        sandbox, src, sub, child_relative, dst_fd, child, child_status
                    )
                finally:
                    os.close(sub)
                continue
            if stat.S_ISLNK(mode):
                with _naming(src.root, child_relative):
                    target = os.readlink(child, dir_fd=src_fd)
                os.symlink(target, child, dir_fd=dst_fd)
            elif not stat.S_ISREG(mode):
                left_out += 1
                continue
            else:
                with _naming(src.root, child_relative):
                    source = os.fdopen(os.open(child, _FILE_FLAGS, dir_fd=src_fd), "rb")
                if not _copy_file(source, child, dst_fd, mode):
                    left_out += 1
                    continue
            _keep_times(child, dst_fd, child_status)
        os.fchmod(dst_fd, stat.S_IMODE(status.st_mode) & PERMISSIONS)
        os.utime(dst_fd, ns=(status.st_atime_ns, status.st_mtime_ns))
    finally:
        os.close(dst_fd)
    return left_out


@contextmanager
def _naming(root: AllowedDir, relative: str) -> Generator[None]:
    """Turn an OSError on the entry at `relative` below `root` into an FsError naming it.

    Raises:
        FsError: the entry could not be read (no permission, say).
    """
    try:
        yield
    except OSError as exc:
        raise explain(exc, shown_below(root, relative)) from None


def _copy_file(source: BinaryIO, name: str, dst_fd: int, mode: int) -> bool:
    """Copy the open file `source` into `dst_fd` as `name`, with the permissions of `mode`.

    Return False if it is no longer a regular file (and close it either way).
    """
    with source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):  # swapped since the listing
            return False
        with os.fdopen(os.open(name, _NEW_FLAGS, 0o600, dir_fd=dst_fd), "wb") as target:
            shutil.copyfileobj(source, target)
            os.fchmod(target.fileno(), stat.S_IMODE(mode) & PERMISSIONS)
    return True


def _keep_times(name: str, dir_fd: int, status: os.stat_result) -> None:
    """Give entry `name` of `dir_fd` (a link itself, not its target) the times of `status`."""
    os.utime(
        name, ns=(status.st_atime_ns, status.st_mtime_ns), dir_fd=dir_fd, follow_symlinks=False
    )


def _remove_tree(dir_fd: int, name: str, *, copied: bool = False) -> int:
    """Remove directory `name` of `dir_fd` and everything in it; return the entries removed.

    A tree this server has just `copied` is its own: each directory is made writable
    first, as a read-only one copied whole would keep its entries.
    """
    fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    removed = 0
    try:
        if copied:
            os.fchmod(fd, 0o700)
        for child in os.listdir(fd):
            status = os.stat(child, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(status.st_mode):
                removed += _remove_tree(fd, child, copied=copied)
            else:
                os.unlink(child, dir_fd=fd)
                removed += 1
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)
    return removed + 1
