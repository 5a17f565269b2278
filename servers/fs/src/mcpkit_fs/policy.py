"""What the operator allows: directories, read-only ones, deny globs, and how roots count.

The operator's directories are resolved once, at start, each read-write or read-only
(`DIR:ro`); a client's roots may narrow them, by the core's places policy
(`mcpkit.places`: the modes narrow, intersect, replace and ignore). Which paths a request
may then reach, and how, is the sandbox's work (`sandbox.py`).
"""

import os
from collections.abc import Sequence
from typing import NamedTuple

from mcpkit.places import Place, RootsMode, Source, allowed, is_below, real_place, root_path

from .globs import GlobSet

AllowedDir = Place
"""A directory the server may use: its real path, how it was named, its mode and source."""

__all__ = (
    "AllowedDir",
    "Policy",
    "RootsMode",
    "is_below",
    "join_relative",
    "parse_directory",
    "resolve_directory",
    "root_path",
)


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
    try:
        place = real_place(path, read_only=read_only, source=source)
    except ValueError:
        place = None
    if place is None or not os.path.isdir(place.path):
        raise ValueError(f"{path} is not an existing directory")
    return place


class Policy(NamedTuple):
    """The operator's configuration: directories, deny globs, and how client roots count."""

    directories: tuple[AllowedDir, ...]
    deny: GlobSet
    roots_mode: RootsMode = "narrow"

    def allowed(self, roots: Sequence[AllowedDir] | None) -> tuple[AllowedDir, ...]:
        """Return the directories allowed for a client whose roots are `roots`.

        `roots` is None when the client has no roots (or the mode ignores them), and an
        empty list when it has some but none is a local directory (see `mcpkit.places`).
        """
        return allowed(self.directories, roots, self.roots_mode)
