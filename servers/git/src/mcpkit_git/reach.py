"""What git would read outside the place through a repository's own state: refused first.

Two ways that no `-c` setting switches off, each checked before the command it would lead:
- `blame.ignoreRevsFile`: each value adds a file to a list git blame reads whole, and
  a line it cannot read as a commit comes back in its error (the first line of any file);
- a directory of the index that is a symbolic link in the work tree: git grep opens a
  tracked file through its parent directories as they are, so `dir -> /etc` made the
  tracked `dir/passwd` searchable (status and diff see such files as deleted).
The usual cases pass: an ignore-revs file inside the place, and directories.
"""

import os
import stat

from .errors import GitError
from .pages import DIFF_OPTIONS
from .repo import Git
from .stores import is_below

REWRITTEN_STARTS = ("~", "%(", ":(")
"""How a path value starts that git rewrites before it reads the file: the home directory,
its install prefix (`%(prefix)/../etc/passwd` left /usr), an optional path."""


async def check_ignore_revs(git: Git) -> None:
    """Refuse a `blame.ignoreRevsFile` outside the place.

    Raises:
        GitError: one is outside (or in a home directory, `~`).
    """
    for name in await git.config_values("blame.ignoreRevsFile"):
        if _outside(git, name):
            raise GitError(
                f"This repository's blame.ignoreRevsFile is {name!r}, outside"
                f" {git.repo.place}: git blame would read it. Remove it from .git/config"
                " to use git_blame."
            )


async def check_linked_directories(git: Git) -> None:
    """Refuse a work tree where a directory of the index is a symbolic link.

    Only tracked files that git sees as deleted can lie below one (git itself does not
    look through a link to find them), so only their directories are looked at, once each.

    Raises:
        GitError: there is such a link, or too many missing files to look at them all.
    """
    missing = await git.run(["diff", *DIFF_OPTIONS, "--name-only", "--diff-filter=D", "-z"])
    if missing.truncated:
        raise GitError(
            "Too many tracked files are missing from the work tree to check where they"
            " lead: grep a revision (revision: HEAD) instead."
        )
    top = os.fsencode(git.repo.path)
    looked: set[bytes] = set()
    for name in missing.stdout.split(b"\0"):
        parts = name.split(b"/")[:-1]
        for depth in range(1, len(parts) + 1):
            directory = b"/".join(parts[:depth])
            if directory in looked:
                continue
            looked.add(directory)
            if _is_link(os.path.join(top, directory)):
                shown = directory.decode("utf-8", "replace")
                raise GitError(
                    f"{shown} is a symbolic link in the work tree where the index has a"
                    " directory: git grep would read the tracked files below it through the"
                    " link. Grep a revision (revision: HEAD), or restore the directory."
                )


def _outside(git: Git, name: str) -> bool:
    """Whether the file `name` (as git reads it, from the work tree's top) is outside.

    A name git rewrites first is taken as outside: where it leads is git's to decide.
    """
    real = os.path.realpath(os.path.join(git.repo.path, name))
    return name.startswith(REWRITTEN_STARTS) or not is_below(real, git.repo.place)


def _is_link(path: bytes) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False
