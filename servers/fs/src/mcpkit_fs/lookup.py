"""The walk of one path from an allowed directory, as the kernel would walk it, by descriptor.

Each component is opened with `O_NOFOLLOW` (and `O_PATH`, which needs search permission
alone, as the kernel's own walk does) from the directory before it. A symbolic link is
resolved by the walk itself: its target's components are walked in its place, and must
stay inside the allowed directories. `..` goes to the parent of where the walk is, after a
link too, so `a/../x` with `a -> b/c` is `b/x`, as `cat` reads it; above an allowed
directory, the sandbox says where it leads (`Scope.enter`). A walk that enters an allowed
directory nested in its root, by whatever name, goes on from that one, under its rules.
"""

import itertools
import os
import stat
import unicodedata
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Protocol

from mcpkit import well_formed

from .errors import LIST_HINT, AccessDenied, FsError, explain
from .paths import show_names, shown_below
from .policy import AllowedDir
from .text import composed

MAX_SYMLINKS = 40  # hops in one walk, as Linux allows
MAX_MADE_DEPTH = 100
"""Levels below an allowed directory down to which directories (and what they are made
for) are made: a tree made deeper (2,040 levels fit in a path) could not be deleted,
moved or copied whole, as the functions that do so recurse."""
MAX_LOOKED_AT = 10_000
"""Entries one walk may list, in all, to look for missing names in another form
(`Lookup.entry_named`): a directory of 200,000 took 0.2 s a lookup, on the event loop,
and a path of 677 look-alike names in and out of a directory of 10,000 took 4.7 s."""
# The directories a walk goes through are only passed through: on Linux, O_PATH opens them
# with search permission alone, as the kernel walks a path (a 711 home directory, say).
_THROUGH_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # to list it


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


class Scope(Protocol):
    """What a walk asks of the sandbox it walks in (`Sandbox`, in `sandbox.py`)."""

    def nested(self) -> Mapping[tuple[int, int], AllowedDir]:
        """Return the allowed directories inside others, by (device, inode), as they are now."""
        ...

    def enter(self, at: str, parts: Iterable[str], asked: str) -> tuple[AllowedDir, list[str]]:
        """Follow `parts` by name from `at`, outside, into an allowed directory."""
        ...

    def check_denied(self, root: AllowedDir, names: list[str]) -> None:
        """Raise AccessDenied if the resolved path matches a deny glob."""
        ...

    def is_denied(self, root: AllowedDir, relative: str) -> bool:
        """Return whether the path `relative` below `root` matches a deny glob."""
        ...


class Lookup:
    """One walk from an allowed directory, by file descriptor (see the module docstring)."""

    def __init__(self, sandbox: Scope, root: AllowedDir, asked: str) -> None:
        self.sandbox = sandbox
        self.root = root
        self.asked = asked  # the path as the client gave it, for messages
        self.fds = [open_root(root)]  # the open directories, from the root down
        self.names: list[str] = []  # their names below the root
        self.hops = 0
        self.made: list[tuple[int, str]] = []  # directories made: (their parent, name)
        self.nested = sandbox.nested()
        self.may_look_at = MAX_LOOKED_AT  # entries this walk may still list (entry_named)

    def close(self) -> None:
        """Close every directory the walk holds open."""
        for fd in [*self.fds, *(parent for parent, _ in self.made)]:
            os.close(fd)
        self.fds.clear()
        self.made.clear()

    def shown(self, *more: str) -> str:
        """The path to show for the current directory, followed by `more`."""
        return show_names(self.root, [*self.names, *more])

    def run(self, parts: list[str], *, follow: bool, make_parents: bool) -> Place:
        """Resolve `parts` below the root and return where they lead.

        A walk refused after it made directories (`made/../link-out/x`: directories are
        made as the walk goes, as `mkdir -p` makes them) removes them again.

        Raises:
            FsError: see `Sandbox.place` (`sandbox.py`).
        """
        try:
            return self._walk(parts, follow=follow, make_parents=make_parents)
        except FsError:
            for parent, name in reversed(self.made):
                with suppress(OSError):  # no longer empty: another program wrote in it
                    os.rmdir(name, dir_fd=parent)
            raise

    def _walk(self, parts: list[str], *, follow: bool, make_parents: bool) -> Place:
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
        types NFC). The name a client was shown, or typed, leads to its file. Its NFD form
        is looked for by name; other look-alikes among the entries of the directory, while
        the walk has listed `MAX_LOOKED_AT` entries at most.

        Raises:
            FsError: several entries look the same as `part`.
        """
        if part.isascii():
            return part
        try:
            os.stat(part, dir_fd=self.fds[-1], follow_symlinks=False)
        except FileNotFoundError:
            decomposed = unicodedata.normalize("NFD", part)
            if decomposed != part and _exists(decomposed, self.fds[-1]):
                return decomposed  # as macOS writes names, in a directory of any size
            key = composed(part)
            listed = _names_in(self.fds[-1], self.may_look_at)
            self.may_look_at = 0 if listed is None else self.may_look_at - len(listed)
            names = [
                name
                for name in listed or ()
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
        if ".." in rest:
            check_made_depth(len(self.names) + 1, self.shown(part))
        else:  # all below is made now, with no link: this is where it ends
            self.sandbox.check_denied(self.root, [*self.names, part, *rest])
            check_made_depth(len(self.names) + 1 + len(rest), self.shown(part, *rest))
        if _mkdir(self.fds[-1], part, self.shown(part)):
            self.made.append((os.dup(self.fds[-1]), part))
        try:
            return os.stat(part, dir_fd=self.fds[-1], follow_symlinks=False)
        except OSError as exc:  # removed again at once, by another program
            raise explain(exc, self.shown(part)) from None

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
        nested = self._nested(os.fstat(self.fds[-1])) if self.nested else None
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
        self._restart(root, open_root(root))
        pending.extend(parts)

    def _nested(self, status: os.stat_result) -> AllowedDir | None:
        """Return the nested allowed directory whose status is `status`, if it is one."""
        return self.nested.get((status.st_dev, status.st_ino))

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
                f" directories. {LIST_HINT}"
            ) from None
        self._restart(root, open_root(root))
        return parts

    def _restart(self, root: AllowedDir, fd: int) -> None:
        """Go on from `root`, open at `fd`, closing the directories held so far."""
        self.close()
        self.root = root
        self.fds.append(fd)
        self.names = []


def _exists(name: str, dir_fd: int) -> bool:
    """Return whether the directory the walk holds at `dir_fd` has an entry `name`."""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def _names_in(dir_fd: int, most: int) -> list[str] | None:
    """Return the names in the directory the walk holds at `dir_fd`, if it has `most` at most.

    None if it has more, or cannot be read.
    """
    try:
        fd = os.open(".", DIR_FLAGS, dir_fd=dir_fd)  # an O_PATH descriptor cannot list
    except OSError:
        return None
    try:
        with os.scandir(fd) as entries:
            names = [entry.name for entry in itertools.islice(entries, most + 1)]
    except OSError:
        return None
    finally:
        os.close(fd)
    return names if len(names) <= most else None


def check_made_depth(depth: int, shown: str) -> None:
    """Raise FsError if a directory `depth` levels below its allowed directory is too deep.

    Raises:
        FsError: it is over `MAX_MADE_DEPTH` levels down.
    """
    if depth > MAX_MADE_DEPTH:
        raise FsError(
            f"{shown} would be {depth} levels down: mcp-fs makes no directories that deep"
            f" (over {MAX_MADE_DEPTH} levels below an allowed directory)."
        )


def open_root(root: AllowedDir) -> int:
    """Open an allowed directory, to walk from it.

    Raises:
        FsError: it no longer exists or is not accessible.
    """
    try:
        return os.open(root.path, _THROUGH_FLAGS)
    except OSError as exc:
        problem = f"The allowed directory {root.given} is not accessible now ({exc.strerror})."
        raise FsError(problem) from None


def _mkdir(dir_fd: int, name: str, shown: str) -> bool:
    """Create directory `name` in `dir_fd`; return False if another program just did."""
    try:
        os.mkdir(name, dir_fd=dir_fd)
    except FileExistsError:
        return False
    except OSError as exc:
        raise explain(exc, shown) from None
    return True
