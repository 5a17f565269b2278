"""What git_worktree does: list the repository's work trees, add one, remove one.

A linked work tree is a folder of its own with a branch checked out, sharing the
repository's commits: a second task in progress beside the first. The folder is the
model's to name, and it fills the folder with files of its choosing (a branch it
committed), so a new one lies inside the repository's own work tree, where checkouts
already write (`.worktrees/task`): not elsewhere in the place, where a folder such as
`~/.bashrc.d` would be read by other programs. No part of its path may be named `.git`: a
work tree there would be a git directory of the model's making (its `config` a command
the user's own git runs). It is reached through no link that leads out, and must not
exist yet. One removed (its folder deleted) must lie in the place, whatever the
repository's records of its work trees say (a hostile repository's may name any folder).
Git checks the branch out under the inert settings of every command (no hook, no filter
of the repository's runs). Each new work tree is a repository the other tools take
(`repo_path`); until it is ignored, the main work tree's status lists it as untracked.
"""

import os

from typing_extensions import TypedDict

from .errors import GitError
from .repo import Git, plain
from .stores import is_below

MAX_WORKTREES = 1000
"""Work trees listed at most."""


class Worktree(TypedDict):
    """A work tree: its folder, commit and branch (None: detached), and its state."""

    path: str
    commit: str | None
    branch: str | None
    main: bool
    locked: bool
    prunable: bool  # its folder is gone: `git worktree prune` forgets it


class Worktrees(TypedDict):
    """What was done (if anything), and the repository's work trees, the main one first."""

    message: str
    worktrees: list[Worktree]
    truncated: bool


async def listed(git: Git, message: str = "") -> Worktrees:
    """Return the repository's work trees (`git worktree list --porcelain -z`)."""
    result = await git.run(["worktree", "list", "--porcelain", "-z"])
    records = result.stdout.split(b"\0\0")
    if result.truncated:
        records.pop()  # the record the output cap cut
    found: list[Worktree] = []
    for record in records:
        fields = [os.fsdecode(field) for field in record.split(b"\0") if field]
        if fields and fields[0].startswith("worktree "):
            found.append(_worktree(fields, main=not found))
    more = result.truncated or len(found) > MAX_WORKTREES
    return Worktrees(message=message, worktrees=found[:MAX_WORKTREES], truncated=more)


def _worktree(fields: list[str], *, main: bool) -> Worktree:
    """Read one record of `git worktree list --porcelain`: `key value` fields."""
    values: dict[str, str] = {}
    for field in fields:
        key, _, value = field.partition(" ")
        values[key] = value
    branch = values.get("branch")
    return Worktree(
        path=values["worktree"],
        commit=values.get("HEAD"),
        branch=branch.removeprefix("refs/heads/") if branch else None,
        main=main,
        locked="locked" in values,
        prunable="prunable" in values,
    )


async def add(
    git: Git, path: str, branch: str, *, create: bool, start_point: str | None
) -> Worktrees:
    """Make a work tree at `path` with `branch` checked out (`create`: a new branch).

    `start_point`: where a new branch starts (default HEAD).

    Raises:
        GitError: the folder is refused (see `new_folder`), the branch is not a valid
            name or does not exist (or exists, with `create`), or git failed (a branch
            checked out in another work tree, ...).
    """
    folder = new_folder(git, path)
    if create:
        name = await git.ref_name(branch)
        base = await git.revision(start_point or "HEAD", what="start_point")
        args = ["worktree", "add", "--quiet", "--no-track", "-b", name, "--", folder, base]
    else:
        if start_point is not None:
            raise GitError("start_point is where a new branch starts: give it with create only")
        name = plain(branch, "branch")
        await git.revision(f"refs/heads/{name}", what="branch")  # a local branch, no DWIM
        args = ["worktree", "add", "--quiet", "--", folder, name]
    await git.run(args)
    return await listed(
        git,
        f"Added the work tree {folder} on branch '{name}'. Ignore its folder (.gitignore or"
        " .git/info/exclude): else git_add of '.' stages it as an embedded repository.",
    )


async def remove(git: Git, path: str, *, force: bool) -> Worktrees:
    """Remove the work tree at `path`: its folder is deleted (`force`: with local changes).

    Raises:
        GitError: the folder is outside the place, or git refused (not a work tree of
            this repository, the main one, locked, or with changes and no `force`).
    """
    folder = await removable(git, path)
    await git.run(["worktree", "remove", *(["--force"] if force else []), "--", folder])
    return await listed(git, f"Removed the work tree {folder}")


async def removable(git: Git, path: str) -> str:
    """Return the absolute folder of the work tree `path` names, once known removable here.

    Raises:
        GitError: the folder is outside the place, or is not a work tree of this
            repository as git would find it (see `_names_itself`).
    """
    folder = existing_folder(git, path)
    if not _names_itself(await listed(git), folder):
        raise GitError(f"{folder} is not a work tree of this repository")
    return folder


def _names_itself(found: Worktrees, folder: str) -> bool:
    """Return whether the work tree git takes `folder` to name is the one in `folder`.

    Git first looks for the one record whose path ends with `folder` (at a separator),
    and only then compares real paths: a record of `/elsewhere//place/x` (a hostile
    repository's) is what `/place/x` names, when no other ends so, and git would delete
    the folder that record names.
    """
    ending = [w for w in found["worktrees"] if _ends_with(w["path"], folder)]
    real = os.path.realpath(folder)
    candidates = ending if len(ending) == 1 else found["worktrees"]
    return any(os.path.realpath(w["path"]) == real for w in candidates)


def _ends_with(path: str, suffix: str) -> bool:
    start = len(path) - len(suffix)
    at_separator = start == 0 or (start > 0 and path[start - 1] == "/")
    return at_separator and path[start:] == suffix


def new_folder(git: Git, path: str) -> str:
    """Return the absolute folder `path` names (relative: to the work tree) for a new work tree.

    Raises:
        GitError: it holds a NUL or a line break, exists, lies outside the repository's
            work tree (by `..` or a link among the folders that exist), or has a part
            named `.git`.
    """
    folder = _absolute(git, path)
    top = git.repo.path
    inside = os.path.relpath(folder, top)
    if any(part.lower() == ".git" for part in inside.split(os.sep)):
        raise GitError(f"{folder} has a part named .git: a work tree there is refused")
    if os.path.lexists(folder):
        raise GitError(f"{folder} exists: a new work tree needs a folder that does not")
    existing = folder
    while not os.path.lexists(existing):  # git makes the folders that are missing
        existing = os.path.dirname(existing)
    real = os.path.join(os.path.realpath(existing), os.path.relpath(folder, existing))
    if not (is_below(folder, top) and is_below(real, top)):
        raise GitError(
            f"{folder} is not inside the repository {top}: a new work tree goes in a folder"
            " of its own there, such as .worktrees/NAME"
        )
    return folder


def existing_folder(git: Git, path: str) -> str:
    """Return the absolute folder `path` names, once it is known to lie in the place.

    Raises:
        GitError: it lies outside the place (by `..` or a link), or in a git directory.
    """
    folder = _absolute(git, path)
    _check_in_place(git, folder, os.path.realpath(folder))
    return folder


def _absolute(git: Git, path: str) -> str:
    if not path or any(c in path for c in "\x00\n\r"):
        raise GitError(f"path {path!r} is not allowed")
    return os.path.normpath(os.path.join(git.repo.path, path))


def _check_in_place(git: Git, folder: str, real: str) -> None:
    """Refuse a folder that lies outside the repository's place or inside a git directory."""
    place = git.repo.place
    if not (is_below(folder, place) and is_below(real, place)):
        raise GitError(f"{folder} is outside {place}, where this server may work")
    for stores in (git.repo.git_dir, git.repo.common_dir):
        if is_below(real, os.path.realpath(stores)):
            raise GitError(f"{folder} is inside the git directory {stores}")
