"""Denied entries in a tree: whether it holds any, and whether any would land on a denied path.

A tree that holds denied entries is neither moved nor deleted, and one is not moved or
copied where an entry of it would land on a denied path: a tree made elsewhere must not
plant `.ssh/authorized_keys` under `**/.ssh/**`. Trees are read by descriptor, never
through a link.
"""

import os
import stat

from .errors import AccessDenied, FsError
from .files import open_directory
from .lookup import DIR_FLAGS, Place
from .paths import naming
from .policy import join_relative
from .sandbox import Sandbox


def holds_denied(sandbox: Sandbox, place: Place, fd: int, relative: str) -> bool:
    """Return whether the tree open at `fd` (at `relative` below the root) has a denied entry.

    Raises:
        FsError: a directory in it cannot be read, so this cannot be told.
    """
    for name in os.listdir(fd):
        child = join_relative(relative, name)
        if sandbox.is_denied(place.root, child):
            return True
        with naming(place.root, child):
            if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                continue
            sub = os.open(name, DIR_FLAGS, dir_fd=fd)
        try:
            if holds_denied(sandbox, place, sub, child):
                return True
        finally:
            os.close(sub)
    return False


def refuse_denied_landing(
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
        with naming(src.root, join_relative(src.relative, entry)):
            if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                continue
            sub = os.open(name, DIR_FLAGS, dir_fd=fd)
        try:
            landing = _denied_landing(sandbox, src, dst, sub, entry)
        finally:
            os.close(sub)
        if landing is not None:
            return landing
    return None
