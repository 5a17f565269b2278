"""What git_clean does: delete untracked files, exactly those the user was shown.

A deleted untracked file is gone for good: no commit holds it. So the files are listed
first (`git ls-files`, names exact), the user is asked about that list, and `git clean`
is then given those names alone, as literal paths: a file made while the user reads is
not among them and stays. Folders go whole only when asked (`directories`), ignored
files (build output, but also `.env`) only when asked (`ignored`), and a repository nested
in the work tree never (git's own rule without a second `-f`).
"""

import os
from collections.abc import Sequence

from typing_extensions import TypedDict

from .errors import GitError
from .repo import Git

MAX_CLEANED = 1000
"""Names one clean deletes at most (each an argument of git's): more, and the call is
refused, asking for narrower paths or whole folders."""
SHOWN = 20
"""Names a question shows; it counts the rest."""


class Cleaned(TypedDict):
    """The untracked files and folders (ending in `/`) deleted, or that would be.

    `kept`: those still there after the clean: a folder holding a repository deeper
    down (git keeps that repository, and so the folders above it).
    """

    removed: list[str]
    kept: list[str]
    dry_run: bool


async def untracked(
    git: Git, paths: Sequence[str] | None, *, directories: bool, ignored: bool
) -> list[str]:
    """Return what a clean would delete: untracked files (and folders, ignored files).

    Raises:
        GitError: a path is refused, or there are more than `MAX_CLEANED`.
    """
    base = ["ls-files", "--others", "--exclude-standard", "--directory", "-z"]
    found = (await git.run([*base, *git.paths(paths)])).fields
    if ignored:
        found += (await git.run([*base, "--ignored", *git.paths(paths)])).fields
    # Without `directories`, git clean leaves untracked folders (and what is in them).
    kept = [name for name in found if directories or not name.endswith("/")]
    names = sorted(name for name in kept if not _nested_repository(git, name))
    if len(names) > MAX_CLEANED:
        raise GitError(
            f"{len(names)} untracked names: more than {MAX_CLEANED} in one clean. Narrow it"
            " with paths, or remove whole folders with directories."
        )
    return names


def question(git: Git, names: list[str]) -> str:
    """Return what to ask before `names` are deleted."""
    shown = ", ".join(names[:SHOWN])
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return f"Delete for good {len(names)} untracked in {git.repo.path}: {shown}{more}?"


async def clean(git: Git, names: list[str], *, ignored: bool) -> Cleaned:
    """Delete `names` (from `untracked`), and those alone; return them.

    Raises:
        GitError: git failed.
    """
    if names:
        options = ["-f", "-d", *(["-x"] if ignored else [])]  # -d: a name that is a folder
        await git.run(["clean", *options, *git.paths(names)])
    kept = _still_there(git, names)
    return Cleaned(removed=[n for n in names if n not in kept], kept=kept, dry_run=False)


def _still_there(git: Git, names: list[str]) -> list[str]:
    return [name for name in names if os.path.lexists(os.path.join(git.repo.path, name))]


def _nested_repository(git: Git, name: str) -> bool:
    """Whether untracked folder `name` holds a repository of its own (git clean keeps it)."""
    return name.endswith("/") and os.path.lexists(os.path.join(git.repo.path, name, ".git"))
