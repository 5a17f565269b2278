"""Paths as the client writes them: which ones no walk should see, and how a place is shown.

A place is shown as the client named its allowed directory, then the resolved rest: never
a real path the client did not give.
"""

import re
from collections.abc import Generator, Sequence
from contextlib import contextmanager

from .errors import FsError, explain
from .policy import AllowedDir

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
_CONTROL = re.compile("[\x00-\x1f\x7f]")


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


def shown_below(root: AllowedDir, relative: str) -> str:
    """Return the path to show the client for `relative` (resolved) below `root`."""
    return show_names(root, relative.split("/") if relative else [])


def show_names(root: AllowedDir, names: Sequence[str]) -> str:
    """Return the path to show the client for the resolved `names` below `root`."""
    base = root.given.rstrip("/")
    return f"{base}/{'/'.join(names)}" if names else root.given


@contextmanager
def naming(root: AllowedDir, relative: str) -> Generator[None]:
    """Turn an OSError on the entry at `relative` below `root` into an FsError naming it.

    Raises:
        FsError: the entry could not be read (no permission, say).
    """
    try:
        yield
    except OSError as exc:
        raise explain(exc, shown_below(root, relative)) from None
