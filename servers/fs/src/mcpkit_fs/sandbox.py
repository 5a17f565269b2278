"""Where the server may go, and how it gets there without being led astray.

A sandbox holds the directories a request may use (see `policy.py`) minus the deny globs.
Violations and failures are `FsError`s, tool errors whose message says what to do next and
never reveals what lies outside the allowed directories.

The containment: a path starts in the allowed directory its name begins with, and is
walked from there one component at a time through directory file descriptors opened with
`O_NOFOLLOW` (and `O_PATH`, which needs search permission alone, as the kernel's own walk
does). A symbolic link met on the way is resolved by the walk itself and must stay inside
the allowed directories; a link swapped in after a component was checked makes the next
open fail instead of being followed. `..` is never collapsed by name: it goes to the
parent of where the walk is, as the kernel's does (with `a -> b/c`, `a/../x` is `b/x`).
An allowed directory inside another is a root of its own: a walk that enters it, by
whatever link, takes on its rules (read-only). A `..` above a root is followed by name
alone, to a sibling allowed directory or to an error, and only where no name outside the
allowed directories, which might be a link, comes before it. Files are opened
`O_NOFOLLOW | O_NONBLOCK` and checked with `fstat`, so a FIFO or device is refused instead
of blocking; writes go to a temporary file in the same directory, then `os.replace`, which
replaces a name and never writes through a link.
"""

import errno
import os
import posixpath
import re
import secrets
import shutil
import stat
from collections import deque
from collections.abc import Generator, Iterable, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from itertools import takewhile
from typing import BinaryIO

from mcpkit import ToolError, well_formed

from .globs import GlobSet
from .policy import AllowedDir, is_below
from .text import composed

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
MAX_SYMLINKS = 40  # hops in one walk, as Linux allows
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# The directories a walk goes through are only passed through: on Linux, O_PATH opens them
# with search permission alone, as the kernel walks a path (a 711 home directory, say).
_THROUGH_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LIST_HINT = "Call list_allowed_directories to see where access is allowed."
_CONTROL = re.compile("[\x00-\x1f\x7f]")
PERMISSIONS = 0o1777  # what writes and copies keep of a mode: not setuid, not setgid


class FsError(ToolError):
    """A filesystem operation failed; the message says why and what to do next."""


class AccessDenied(FsError):
    """The policy forbids the access (outside the allowed directories, denied, read-only)."""


@dataclass
class Place:
    """Where a path led: an entry `name` in the open directory `dir_fd` (valid in the walk).

    `name` is None when the path is an allowed directory itself (then `dir_fd` is it).
    """

    dir_fd: int
    name: str | None
    root: AllowedDir
    relative: str  # the resolved path below the root, "" for the root itself

    @property
    def shown(self) -> str:
        """The path to show the client: the root as named, then the resolved rest."""
        return shown_below(self.root, self.relative)

    @property
    def real(self) -> str:
        """The real path: the root's real path, then the resolved rest."""
        return f"{self.root.path.rstrip('/')}/{self.relative}".rstrip("/") or "/"

    def lstat(self) -> os.stat_result | None:
        """Return the entry's status without following a link, or None if it is missing."""
        try:
            if self.name is None:
                return os.fstat(self.dir_fd)
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None


class Sandbox:
    """Resolves and opens paths inside a set of allowed directories."""

    def __init__(self, directories: Sequence[AllowedDir], deny: GlobSet) -> None:
        self.directories = tuple(directories)
        # The longest first: a path in nested directories belongs to the inner one.
        self._by_length = sorted(directories, key=lambda d: -len(d.path))
        # Allowed directories inside others, by identity (device, inode), not by name: a walk
        # that enters one, by any name (a link, a bind mount, other letter case), takes it
        # as its root.
        self.nested = _identities(
            d
            for d in self._by_length
            if any(o.path != d.path and o.contains(d.path) for o in directories)
        )
        self.deny = deny

    # Walking -------------------------------------------------------------------------------

    @contextmanager
    def place(
        self, path: str, *, follow: bool = True, make_parents: bool = False
    ) -> Generator[Place]:
        """Walk to `path` and yield where it leads; its directory stays open until exit.

        `follow=False` leaves a symbolic link in the last component unresolved.
        `make_parents` creates missing directories on the way (a write).

        Raises:
            FsError: the path is malformed, outside the allowed directories, denied, or
                leads through something missing or not a directory.
        """
        check_path(path)
        root, parts = self.locate(path)
        walk = _Walk(self, root, path)
        try:
            yield walk.run(parts, follow=follow, make_parents=make_parents)
        finally:
            walk.close()

    def locate(self, path: str) -> tuple[AllowedDir, list[str]]:
        """Return the allowed directory where the walk to `path` starts, and the parts to walk.

        `~/` is the home directory; a relative path is relative to the first allowed
        directory, as the reference server has it. The parts may hold `..`, which the walk
        resolves as the kernel does: after a link, from where the link led.

        Raises:
            AccessDenied: `path` does not lead into an allowed directory.
        """
        if not self.directories:
            raise AccessDenied(
                "No directory is allowed: the operator configured none and the client shared"
                " no roots, or none of the client's roots is an allowed local directory."
            )
        if path == "~" or path.startswith("~/"):
            path = os.path.expanduser("~") + path[1:]
        elif path.startswith("~"):
            raise AccessDenied(f"{path}: '~user' paths are not supported. {_LIST_HINT}")
        if not os.path.isabs(path):
            path = os.path.join(self.directories[0].given, path)  # as the reference does
        return self.enter("/", path.split("/"), path)

    def enter(self, at: str, parts: Iterable[str], asked: str) -> tuple[AllowedDir, list[str]]:
        """Follow `parts` by name from `at` into an allowed directory; return it and the rest.

        `at` is a real path outside the allowed directories (or `/`). Nothing outside is
        looked at, so a `..` there is followed only where its answer is known without
        looking: from a directory on the real path of an allowed directory, which holds no
        link. After any other name it is refused: were that name a link, `..` would lead
        from its target, as `cat` would go, and not back to `at`.

        Raises:
            AccessDenied: the parts do not lead into an allowed directory, or go through
                `..` where its answer is not known (the message names `asked`).
        """
        pending = deque(part for part in parts if part not in ("", "."))
        while True:
            names = list(takewhile(lambda part: part != "..", pending))
            here = posixpath.join(at, *names)
            found = self._holding(here)
            if found is not None:
                root, below = found
                return root, below + list(pending)[len(names) :]
            if len(names) == len(pending):
                raise AccessDenied(
                    f"Access denied: {asked} leads outside the allowed directories. {_LIST_HINT}"
                )
            for _ in range(len(names) + 1):  # the names, then the `..` after them
                pending.popleft()
            if here != "/" and not any(is_below(d.path, here) for d in self.directories):
                raise AccessDenied(
                    f"Access denied: {asked} goes through '..' outside the allowed directories,"
                    " where mcp-fs does not look, so it cannot tell where '..' leads (were the"
                    " name before it a symbolic link, from the link's target): give the path"
                    f" without it. {_LIST_HINT}"
                )
            at = posixpath.dirname(here)

    def _holding(self, path: str) -> tuple[AllowedDir, list[str]] | None:
        """Return the allowed directory that holds the normal path `path`, and the rest."""
        for directory in self._by_length:  # the innermost first
            for form in (directory.path, directory.given):
                if is_below(path, form):
                    return directory, [part for part in path[len(form) :].split("/") if part]
        return None

    def check_denied(self, root: AllowedDir, names: list[str]) -> None:
        """Raise AccessDenied if the resolved path matches a deny glob."""
        if self.is_denied(root, "/".join(names)):
            shown = _show(root, names)
            raise AccessDenied(f"Access denied: {shown} matches a deny rule of the operator.")

    def is_denied(self, root: AllowedDir, relative: str) -> bool:
        """Return whether the path `relative` below `root` matches a deny glob.

        Both names of the root count: the operator may write either in a glob.
        """
        if not self.deny:
            return False
        return any(
            self.deny.match(f"{form.rstrip('/')}/{relative}") for form in (root.path, root.given)
        )

    def resolve(self, path: str) -> str:
        """Return the real path of `path` (which must exist), checked like any access.

        Raises:
            FsError: as `place`, or the path does not exist.
        """
        with self.place(path) as place:
            if place.lstat() is None:
                raise FsError(f"{place.shown} does not exist.")
            return place.real


class _Walk:
    """One walk from an allowed directory, by file descriptor (see the module docstring)."""

    def __init__(self, sandbox: Sandbox, root: AllowedDir, asked: str) -> None:
        self.sandbox = sandbox
        self.root = root
        self.asked = asked  # the path as the client gave it, for messages
        self.fds = [_open_root(root)]  # the open directories, from the root down
        self.names: list[str] = []  # their names below the root
        self.hops = 0

    def close(self) -> None:
        """Close every directory the walk holds open."""
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()

    def shown(self, *more: str) -> str:
        """The path to show for the current directory, followed by `more`."""
        return _show(self.root, [*self.names, *more])

    def run(self, parts: list[str], *, follow: bool, make_parents: bool) -> Place:
        """Resolve `parts` below the root and return where they lead.

        Raises:
            FsError: see `Sandbox.place`.
        """
        pending = deque(parts)
        while pending:
            part = pending.popleft()
            if part in ("", "."):
                continue
            if part == "..":  # from where the walk is, as the kernel goes: after a link too
                self.ascend(pending)
                continue
            part = self.entry_named(part)
            self.sandbox.check_denied(self.root, [*self.names, part])
            last = not pending
            status = self.status(part, create=make_parents and not last, then=pending)
            if status is None and not last:
                raise FsError(f"{self.shown(part)} does not exist.")
            if status is None:  # a missing last component: a place to create
                return Place(self.fds[-1], part, self.root, "/".join([*self.names, part]))
            if stat.S_ISLNK(status.st_mode) and (follow or not last):
                pending.extendleft(reversed(self.link_target(part)))
            elif last and self._nested(status) is None:
                return Place(self.fds[-1], part, self.root, "/".join([*self.names, part]))
            else:
                self.descend(part)
        # The walk ended on a directory it opened (or on the root): its entry in the parent.
        if not self.names:
            return Place(self.fds[-1], None, self.root, "")
        os.close(self.fds.pop())
        return Place(self.fds[-1], self.names[-1], self.root, "/".join(self.names))

    def entry_named(self, part: str) -> str:
        """Return the name of the entry of the current directory that `part` stands for.

        That is `part` itself, unless it is missing and one entry looks the same: its name
        goes out as `part`, with U+FFFD for bytes that are not UTF-8 (`mcpkit.well_formed`),
        or it is `part` in another Unicode form (NFD, as macOS writes names, where a model
        types NFC). The name a client was shown, or typed, leads to its file.

        Raises:
            FsError: several entries look the same as `part`.
        """
        if part.isascii():
            return part
        try:
            os.stat(part, dir_fd=self.fds[-1], follow_symlinks=False)
        except FileNotFoundError:
            key = composed(part)
            names = [
                name
                for name in _names_in(self.fds[-1])
                if composed(well_formed(name)) == key
                and not self.sandbox.is_denied(self.root, "/".join([*self.names, name]))
            ]
            if len(names) > 1:
                raise FsError(
                    f"{self.shown(part)} matches {len(names)} entries that look the same here"
                    " (they differ in bytes that are not UTF-8, or in Unicode form): rename"
                    " them to tell them apart."
                ) from None
            return names[0] if names else part
        except OSError:
            pass  # the walk's own stat says what is wrong
        return part

    def status(self, part: str, *, create: bool, then: Sequence[str] = ()) -> os.stat_result | None:
        """Return the status of `part` (not following a link); None if it is missing.

        With `create`, a missing `part` is made, as a directory on the way to the parts
        `then`, unless the path they end in would be refused anyway.

        Raises:
            FsError: it is not accessible, or may not be made.
        """
        try:
            return os.stat(part, dir_fd=self.fds[-1], follow_symlinks=False)
        except FileNotFoundError:
            if not create:
                return None
        except OSError as exc:
            raise explain(exc, self.shown(part)) from None
        if self.root.read_only:
            raise AccessDenied(f"{self.shown(part)} is in a read-only directory: not created.")
        rest = [name for name in then if name not in ("", ".")]
        if ".." not in rest:  # all below is made now, with no link: this is where it ends
            self.sandbox.check_denied(self.root, [*self.names, part, *rest])
        _mkdir(self.fds[-1], part, self.shown(part))
        return os.stat(part, dir_fd=self.fds[-1], follow_symlinks=False)

    def descend(self, part: str) -> None:
        """Open directory `part` of the current one without following a link.

        Raises:
            FsError: it is missing, not a directory, or was swapped for a link.
        """
        try:
            self.fds.append(os.open(part, _THROUGH_FLAGS, dir_fd=self.fds[-1]))
        except FileNotFoundError:
            raise FsError(f"{self.shown(part)} does not exist.") from None
        except OSError as exc:
            raise explain(exc, self.shown(part)) from None
        self.names.append(part)
        nested = self._nested(os.fstat(self.fds[-1])) if self.sandbox.nested else None
        if nested is not None:  # its own rules (read-only) hold inside, whatever the way in
            self._restart(nested, self.fds.pop())

    def ascend(self, pending: deque[str]) -> None:
        """Go to the parent directory.

        Above the root, the components still `pending` are followed by name alone (see
        `Sandbox.enter`) until they lead back into an allowed directory (a link from one
        allowed directory to a sibling, `../other`); the walk goes on from there.

        Raises:
            AccessDenied: they never lead back into an allowed directory.
        """
        if self.names:
            os.close(self.fds.pop())
            self.names.pop()
            return
        outside = os.path.dirname(self.root.path)
        root, parts = self.sandbox.enter(outside, list(pending), self.asked)
        pending.clear()
        self._restart(root, _open_root(root))
        pending.extend(parts)

    def _nested(self, status: os.stat_result) -> AllowedDir | None:
        """Return the nested allowed directory whose status is `status`, if it is one."""
        return self.sandbox.nested.get((status.st_dev, status.st_ino))

    def link_target(self, part: str) -> list[str]:
        """Return the components to walk instead of the link `part`.

        An absolute target restarts the walk from the allowed directory that holds it.

        Raises:
            FsError: too many links, or the target is outside the allowed directories.
        """
        self.hops += 1
        if self.hops > MAX_SYMLINKS:
            raise FsError(f"{self.shown(part)}: too many levels of symbolic links.")
        try:
            target = os.readlink(part, dir_fd=self.fds[-1])
        except OSError:  # no longer a link: replaced since the stat
            raise FsError(f"{self.shown(part)} changed during the operation: try again.") from None
        if not os.path.isabs(target):
            return target.split("/")
        try:
            root, parts = self.sandbox.enter("/", target.split("/"), self.shown(part))
        except AccessDenied:
            raise AccessDenied(
                f"{self.shown(part)} is a symbolic link that leads outside the allowed"
                f" directories. {_LIST_HINT}"
            ) from None
        self._restart(root, _open_root(root))
        return parts

    def _restart(self, root: AllowedDir, fd: int) -> None:
        """Go on from `root`, open at `fd`, closing the directories held so far."""
        self.close()
        self.root = root
        self.fds.append(fd)
        self.names = []


def _identities(directories: Iterable[AllowedDir]) -> dict[tuple[int, int], AllowedDir]:
    """Return the directories by (device, inode); one that is gone is left out."""
    found: dict[tuple[int, int], AllowedDir] = {}
    for directory in directories:
        with suppress(OSError):
            status = os.stat(directory.path)
            found.setdefault((status.st_dev, status.st_ino), directory)
    return found


def check_path(path: str) -> None:
    """Reject a path that no walk should see: empty, control characters, too long.

    Raises:
        FsError: the path is malformed.
    """
    if not path:
        raise FsError("The path is empty: give a file or directory path.")
    if _CONTROL.search(path):
        raise FsError(
            "The path contains a NUL or another control character (a newline or tab, say)."
            " mcp-fs never opens such a path, to keep paths from being forged in text: if a"
            " file really has such a name, it has to be renamed by other means first."
        )
    try:
        size = len(path.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        raise FsError("The path holds a lone surrogate, which no file name has: fix it.") from None
    if size > MAX_PATH_BYTES:
        raise FsError(f"The path is longer than {MAX_PATH_BYTES} bytes.")
    names = path.split("/")
    if any(len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for name in names):
        raise FsError(f"A name in the path is longer than {MAX_NAME_BYTES} bytes.")


def _names_in(dir_fd: int) -> list[str]:
    """Return the names in the directory the walk holds at `dir_fd` (none if unreadable)."""
    try:
        fd = os.open(".", _DIR_FLAGS, dir_fd=dir_fd)  # an O_PATH descriptor cannot list
    except OSError:
        return []
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def _open_root(root: AllowedDir) -> int:
    """Open an allowed directory.

    Raises:
        FsError: it no longer exists or is not accessible.
    """
    try:
        return os.open(root.path, _THROUGH_FLAGS)
    except OSError as exc:
        problem = f"The allowed directory {root.given} is not accessible now ({exc.strerror})."
        raise FsError(problem) from None


def shown_below(root: AllowedDir, relative: str) -> str:
    """Return the path to show the client for `relative` (resolved) below `root`."""
    return _show(root, relative.split("/") if relative else [])


def _show(root: AllowedDir, names: Sequence[str]) -> str:
    base = root.given.rstrip("/")
    return f"{base}/{'/'.join(names)}" if names else root.given


def _mkdir(dir_fd: int, name: str, shown: str) -> None:
    """Create directory `name` in `dir_fd`, tolerating a concurrent creation."""
    try:
        os.mkdir(name, dir_fd=dir_fd)
    except FileExistsError:
        pass
    except OSError as exc:
        raise explain(exc, shown) from None


_MESSAGES = {
    errno.ENOENT: "does not exist",
    errno.EEXIST: "already exists",
    errno.ENOTDIR: "is not a directory (or a component of it is not)",
    errno.EISDIR: "is a directory",
    errno.ELOOP: "is a symbolic link, or was replaced by one during the operation",
    errno.EACCES: "is not accessible: permission denied",
    errno.EPERM: "is not accessible: operation not permitted",
    errno.ENAMETOOLONG: "has a name that is too long",
    errno.ENOTEMPTY: "is a directory that is not empty (pass recursive=true to delete it all)",
    errno.ENOSPC: "cannot be written: no space left on the device",
    errno.EROFS: "is on a read-only filesystem",
    errno.EBUSY: "is busy",
    errno.EINVAL: "cannot go there (a directory cannot move into itself)",
}


def explain(exc: OSError, shown: str) -> FsError:
    """Return an FsError for an OSError on the path the client sees as `shown`."""
    what = _MESSAGES.get(exc.errno or 0, exc.strerror or "failed")
    return FsError(f"{shown} {what}.")


# Opening and writing ------------------------------------------------------------------------


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
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(place.name, flags, dir_fd=place.dir_fd)
    except OSError as exc:
        raise explain(exc, place.shown) from None
    try:
        require_regular(place, os.fstat(fd).st_mode)  # it may have been swapped meanwhile
    except FsError:
        os.close(fd)
        raise
    os.set_blocking(fd, True)
    return fd


def require_regular(place: Place, mode: int) -> None:
    """Raise FsError unless `mode`, of the entry at `place`, is a regular file's.

    A link is let through: opening it with `O_NOFOLLOW` fails (ELOOP).
    """
    if stat.S_ISDIR(mode):
        raise FsError(f"{place.shown} is a directory: use list_directory.")
    if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
        raise FsError(f"{place.shown} is not a regular file (a FIFO, socket or device): refused.")


def open_directory(place: Place) -> int:
    """Open the directory at `place` and return its descriptor.

    Raises:
        FsError: it is missing or not a directory.
    """
    try:
        return os.open(place.name or ".", _DIR_FLAGS, dir_fd=place.dir_fd)
    except OSError as exc:
        raise explain(exc, place.shown) from None


def write_atomic(
    place: Place, data: bytes | BinaryIO, *, create_only: bool = False, mode: int | None = None
) -> None:
    """Replace (or create) the file at `place` with `data`, all at once.

    The data goes to a temporary file in the same directory, which then takes the name:
    a reader sees the old or the new content, never a mix, and a link at the name is
    replaced, not followed. `data` is bytes or a binary file to copy. `create_only` fails
    if the name exists. The file gets the permissions `mode`, else those of the file it
    replaces, else the default; never setuid or setgid, which the kernel drops on a write.

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
    if current is not None and not os.access(
        place.name, os.W_OK, dir_fd=place.dir_fd, effective_ids=True
    ):
        # A replace needs no permission on the file, but its owner made it read-only (a
        # file not checked out, say): the server keeps to what writing it in place allows.
        raise AccessDenied(
            f"{place.shown} is read-only (mode {stat.S_IMODE(current.st_mode):03o}): it is"
            " not changed. Ask the user to make it writable if it should change."
        )
    if mode is None and current is not None:
        mode = stat.S_IMODE(current.st_mode)
    temporary = f".mcp-fs-{secrets.token_hex(8)}.tmp"  # short: any name may be 255 bytes
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temporary, flags, 0o666 if mode is None else 0o600, dir_fd=place.dir_fd)
    except PermissionError:
        raise AccessDenied(
            f"{place.shown} cannot be written: its directory does not allow new files"
            " (permission denied), and a write goes to a new file first. An existing file"
            " can still be changed in place with mode 'append'."
        ) from None
    except OSError as exc:
        raise explain(exc, place.shown) from None
    try:
        with os.fdopen(fd, "wb") as file:
            if isinstance(data, bytes):
                file.write(data)
            else:
                shutil.copyfileobj(data, file)
            if mode is not None:
                os.fchmod(file.fileno(), mode & PERMISSIONS)
            file.flush()
            os.fsync(file.fileno())
        if create_only:
            # link() fails if the name exists: an exclusive create that is still all-at-once.
            os.link(temporary, place.name, src_dir_fd=place.dir_fd, dst_dir_fd=place.dir_fd)
            os.unlink(temporary, dir_fd=place.dir_fd)
        else:
            os.replace(temporary, place.name, src_dir_fd=place.dir_fd, dst_dir_fd=place.dir_fd)
    except OSError as exc:
        with suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=place.dir_fd)
        raise explain(exc, place.shown) from None
