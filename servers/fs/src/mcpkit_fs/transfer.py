"""Moving, copying and deleting: operations that take whole trees along.

Trees are handled through directory descriptors, never by path and never through a link
(`trees.py`), so a link planted inside a tree cannot send a copy or a delete outside it.
Nothing here overwrites unless asked, an allowed directory (or one holding another) is
never moved or deleted, and a tree that holds denied entries is neither moved nor deleted
(nor are those entries copied), nor moved or copied where an entry of it would land on a
denied path (`denied_trees.py`).
"""

import errno
import os
import stat
from collections.abc import Generator
from contextlib import contextmanager

from .denied_trees import holds_denied, refuse_denied_landing
from .errors import AccessDenied, FsError, explain
from .files import open_directory, require_writable, require_writable_file
from .listing import entry_type
from .locks import changing
from .lookup import DIR_FLAGS, Place
from .models import Copied, Deleted, Moved
from .paths import naming
from .policy import is_below
from .sandbox import Sandbox
from .trees import copy_entry, leads_inside, link_led_out_by_move, remove_tree

# Why link() may fail where rename() works: a filesystem without hard links, another
# owner's file under fs.protected_hardlinks, a file with the most links it may have.
_NO_HARD_LINK = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK)


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
        refuse_denied_landing(sandbox, src, dst, status, "moved")
        assert src.name is not None
        assert dst.name is not None
        _refuse_links_led_out(src, dst, status)
        try:
            _rename(src, dst, replace=overwrite or stat.S_ISDIR(status.st_mode))
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise explain(exc, dst.shown if exc.errno == errno.EEXIST else src.shown) from None
            # Another filesystem: copy, then remove the original.
            left_out = copy_entry(sandbox, src, dst, status, replace=overwrite)
            if left_out:  # only a tree leaves entries out: the copy is a directory of ours
                remove_tree(dst.dir_fd, dst.name, copied=True)
                raise FsError(
                    f"{src.shown} holds {left_out} FIFOs, sockets, devices or links that would"
                    " lead outside, which cannot be moved to another filesystem: nothing was"
                    " moved."
                ) from None
            try:
                if stat.S_ISDIR(status.st_mode):
                    remove_tree(src.dir_fd, src.name)
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
        refuse_denied_landing(sandbox, src, dst, status, "copied")
        left_out = copy_entry(sandbox, src, dst, status, replace=overwrite)
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
                removed = remove_tree(place.dir_fd, place.name)
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
    if place.name is None or any(is_below(d.path, place.real) for d in sandbox.directories):
        raise AccessDenied(f"{place.shown} is or holds an allowed directory: it cannot be {what}.")
    require_writable(place)
    status = place.lstat()
    if status is None:
        raise FsError(f"{place.shown} does not exist.")
    if stat.S_ISDIR(status.st_mode) and sandbox.deny:
        with naming(place.root, place.relative):
            fd = os.open(place.name, DIR_FLAGS, dir_fd=place.dir_fd)
        try:
            if holds_denied(sandbox, place, fd, place.relative):
                raise AccessDenied(
                    f"{place.shown} holds entries the operator denied: it cannot be {what}."
                )
        finally:
            os.close(fd)
    return status


def _refuse_links_led_out(src: Place, dst: Place, status: os.stat_result) -> None:
    """Refuse to move the link or tree at `src` to `dst` if a link would then lead outside.

    Raises:
        FsError: one would (or a directory of the tree cannot be read); nothing was moved.
    """
    assert src.name is not None
    if stat.S_ISLNK(status.st_mode):
        target = os.readlink(src.name, dir_fd=src.dir_fd)
        if not leads_inside(dst.root, dst.relative, target):
            raise FsError(f"{src.shown} is a link that would lead outside from {dst.shown}.")
    if not stat.S_ISDIR(status.st_mode):
        return
    fd = open_directory(src)
    try:
        link = link_led_out_by_move(src, fd, dst)
    finally:
        os.close(fd)
    if link is not None:
        raise FsError(
            f"{src.shown} holds the link {link}, which would lead outside from"
            f" {dst.shown.rstrip('/')}/{link}: nothing was moved."
        )


def _inside(path: str, directory: str) -> bool:
    """Return whether `path` is strictly inside `directory`."""
    return path != directory and is_below(path, directory)


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
    if stat.S_ISREG(status.st_mode):  # as write_file and copy_file keep a read-only one
        require_writable_file(dst, status)
    return True
