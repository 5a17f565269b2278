"""Where the server may go, and how it gets there without being led astray.

A sandbox holds the directories a request may use (see `policy.py`) minus the deny globs.
Violations and failures are `FsError`s (`errors.py`), tool errors whose message says what
to do next and never reveals what lies outside the allowed directories.

The containment: a path starts in the allowed directory its name begins with, and is
walked from there one component at a time by descriptor, never led astray by a link
(`lookup.py`). `..` is never collapsed by name: it goes to the parent of where the walk
is, as the kernel's does (with `a -> b/c`, `a/../x` is `b/x`). A `..` above an allowed
directory is followed by name alone, to a sibling allowed directory or to an error, and
only where no name outside the allowed directories, which might be a link, comes before
it. What the walk finds is opened and written by `files.py`.
"""

import os
import posixpath
from collections import deque
from collections.abc import Generator, Iterable, Sequence
from contextlib import contextmanager, suppress
from itertools import takewhile

from .errors import LIST_HINT, AccessDenied, FsError
from .files import open_directory, open_file
from .globs import GlobSet
from .lookup import Lookup, Place
from .paths import check_path, show_names
from .policy import AllowedDir, is_below

# What other modules and the tests take from here, the sandbox's whole interface.
__all__ = ("AccessDenied", "FsError", "Place", "Sandbox", "open_directory", "open_file")


class Sandbox:
    """Resolves and opens paths inside a set of allowed directories."""

    def __init__(self, directories: Sequence[AllowedDir], deny: GlobSet) -> None:
        self.directories = tuple(directories)
        # The longest first: a path in nested directories belongs to the inner one.
        self._by_length = sorted(directories, key=lambda d: -len(d.path))
        self._nested = [
            d
            for d in self._by_length
            if any(o.path != d.path and o.contains(d.path) for o in directories)
        ]
        self.deny = deny

    def nested(self) -> dict[tuple[int, int], AllowedDir]:
        """Return the allowed directories inside others, by identity (device, inode).

        By identity, not by name: a walk that enters one, by any name (a link, a bind
        mount, other letter case), takes it as its root. Taken afresh for each walk: a
        directory replaced since (a checkout, a package manager) has a new identity, and
        its old one may be another entry's by now.
        """
        found: dict[tuple[int, int], AllowedDir] = {}
        for directory in self._nested:
            with suppress(OSError):  # gone: nothing can enter it
                status = os.stat(directory.path)
                found.setdefault((status.st_dev, status.st_ino), directory)
        return found

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
        walk = Lookup(self, root, path)
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
            raise AccessDenied(f"{path}: '~user' paths are not supported. {LIST_HINT}")
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
                    f"Access denied: {asked} leads outside the allowed directories. {LIST_HINT}"
                )
            for _ in range(len(names) + 1):  # the names, then the `..` after them
                pending.popleft()
            if here != "/" and not any(is_below(d.path, here) for d in self.directories):
                raise AccessDenied(
                    f"Access denied: {asked} goes through '..' outside the allowed directories,"
                    " where mcp-fs does not look, so it cannot tell where '..' leads (were the"
                    " name before it a symbolic link, from the link's target): give the path"
                    f" without it. {LIST_HINT}"
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
            shown = show_names(root, names)
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
