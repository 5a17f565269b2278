"""What the operator allows: directories, read-only ones, deny globs, and how roots count.

The operator's directories are resolved once, at start, each read-write or read-only
(`DIR:ro`); a client's roots may narrow them (see `Policy.allowed`). Which paths a request
may then reach, and how, is the sandbox's work (`sandbox.py`).
"""

import os
from collections.abc import Sequence
from typing import Literal, NamedTuple
from urllib.parse import unquote, urlsplit

from .globs import GlobSet

RootsMode = Literal["narrow", "intersect", "replace", "ignore"]
Source = Literal["command line", "client roots"]


class AllowedDir(NamedTuple):
    """A directory the server may use: its real path, how it was named, and its mode."""

    path: str  # real path: no symbolic link in it
    given: str  # absolute and normalised, as the operator or client wrote it
    read_only: bool
    source: Source

    def contains(self, other: str) -> bool:
        """Return whether the real path `other` is this directory or below it."""
        return is_below(other, self.path)


def is_below(path: str, directory: str) -> bool:
    """Return whether `path` is `directory` or inside it, comparing whole components."""
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def join_relative(directory: str, name: str) -> str:
    """Return the path of `name` in `directory`, both relative to a root ("" is the root)."""
    return f"{directory}/{name}" if directory else name


def parse_directory(spec: str, *, read_only: bool) -> AllowedDir:
    """Resolve an operator's `DIR` or `DIR:ro` to an allowed directory.

    Raises:
        ValueError: the directory does not exist or is not a directory.
    """
    if spec.endswith(":ro"):
        spec, read_only = spec[:-3], True
    return resolve_directory(spec, read_only=read_only, source="command line")


def resolve_directory(path: str, *, read_only: bool, source: Source) -> AllowedDir:
    """Resolve `path` (`~` expanded) to an allowed directory.

    Raises:
        ValueError: the directory does not exist or is not a directory.
    """
    given = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
    real = os.path.realpath(given)
    if not os.path.isdir(real):
        raise ValueError(f"{path} is not an existing directory")
    return AllowedDir(real, given, read_only, source)


def root_path(uri: str) -> str | None:
    """Return the local path of a `file://` root URI, or None if it names none."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return unquote(parts.path) or None


class Policy(NamedTuple):
    """The operator's configuration: directories, deny globs, and how client roots count."""

    directories: tuple[AllowedDir, ...]
    deny: GlobSet
    roots_mode: RootsMode = "narrow"

    def allowed(self, roots: Sequence[AllowedDir] | None) -> tuple[AllowedDir, ...]:
        """Return the directories allowed for a client whose roots are `roots`.

        `roots` is None when the client has no roots (or the mode ignores them), and an
        empty list when it has some but none is a local directory.
        - narrow: the roots narrow the operator's directories (none usable: to nothing);
          no roots leaves them as they are; with no operator directories, the roots are
          the allowed directories.
        - intersect: strictly the intersection: a client without roots gets nothing.
        - replace: the roots replace the operator's directories when there are any.
        - ignore: the operator's directories only.
        Nothing here lets a client reach past the operator's directories, except
        `replace`, which the operator chooses to hand the decision to the client.
        """
        if self.roots_mode == "ignore":
            return self.directories
        if self.roots_mode == "intersect":
            return _intersection(self.directories, roots or ())
        if roots is None or (self.roots_mode == "replace" and not roots):
            return self.directories
        if self.roots_mode == "replace" or not self.directories:
            return tuple(roots)
        return _intersection(self.directories, roots)


def _intersection(
    directories: Sequence[AllowedDir], roots: Sequence[AllowedDir]
) -> tuple[AllowedDir, ...]:
    """Return the parts of `directories` that are also inside `roots`, each path once.

    A root inside operator directories takes the mode of the innermost of them, as any path
    does: inside a writable directory and a read-only one within it, a root must not make
    the inner one writable (nor, the other way round, a writable one read-only).
    """
    result: dict[str, AllowedDir] = {}
    for root in roots:
        holding = [d for d in directories if d.contains(root.path)]
        if holding:
            innermost = max(holding, key=lambda d: len(d.path))
            result.setdefault(
                root.path, AllowedDir(root.path, root.given, innermost.read_only, root.source)
            )
    for directory in directories:  # operator directories inside a root, as they are
        if any(r.contains(directory.path) for r in roots):
            result.setdefault(directory.path, directory)
    return tuple(result.values())
