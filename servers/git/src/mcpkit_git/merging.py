"""What git_merge, git_cherry_pick and git_revert do: bring another commit's changes in, or give up.

All three are merges to git: a merge joins another commit's history into the current
branch; a cherry-pick applies one commit's changes as a new commit; a revert applies their
opposite. Each starts with options that beat the repository's settings (no local change is
stashed unasked, no signature checked: its program would run). Stopped by conflicts, it
waits for the model to resolve the files, stage them with git_add and conclude with
git_commit; or to abort, which puts the branch and the files back as they were. The
repository's merge drivers are neutralised with its other programs
(`jail.driver_overrides`).

mcp-git picks or reverts one commit at a time, which git does without its sequencer (the
to-do list in `.git/sequencer`). A sequence under way is someone else's, or a hostile
repository's: its abort would move the branch to the commit its state names, so it is
left to git run by hand.
"""

import os
from typing import Literal, NamedTuple

from .changing import Done, done, head
from .errors import GitError
from .pages import conflicted
from .repo import Git

FastForward = Literal["allow", "only", "never"]
FAST_FORWARD: dict[FastForward, str] = {"allow": "--ff", "only": "--ff-only", "never": "--no-ff"}
SEQUENCER = "sequencer"
"""The folder of a cherry-pick or revert of several commits, in the git directory."""


class Operation(NamedTuple):
    """A merge, a cherry-pick or a revert: how it starts, what shows it under way, its tool."""

    command: str
    start: tuple[str, ...]
    """The command and the options that beat settings the repository may have."""
    state: str
    """The file in the git directory that holds it under way."""
    tool: str
    files: str
    """What its files are called in the question before an abort."""


MERGE = Operation(
    "merge",
    ("merge", "--no-edit", "--no-stat", "--no-autostash", "--no-verify-signatures"),
    "MERGE_HEAD",
    "git_merge",
    "merged files",
)
CHERRY_PICK = Operation(
    "cherry-pick", ("cherry-pick",), "CHERRY_PICK_HEAD", "git_cherry_pick", "picked files"
)
REVERT = Operation("revert", ("revert", "--no-edit"), "REVERT_HEAD", "git_revert", "reverted files")
BY_COMMAND = {operation.command: operation for operation in (MERGE, CHERRY_PICK, REVERT)}


async def merge(git: Git, revision: str, *, message: str | None, fast_forward: FastForward) -> Done:
    """Merge `revision` into the current branch; say so if conflicts stopped it.

    Raises:
        GitError: `revision` names no commit, git refused (local changes it would
            overwrite, no fast-forward possible with `only`, ...), or it ran out of time.
    """
    await git.revision(revision)  # names a commit, and is no option
    options = [FAST_FORWARD[fast_forward]]
    if message is not None:
        options.append(f"--message={message}")
    return await _start(git, MERGE, options, revision, "Merged")


async def pick(
    git: Git, operation: Operation, revision: str, *, mainline: int | None, options: list[str]
) -> Done:
    """Cherry-pick or revert (`operation`) the one commit `revision` names, as a new commit.

    `mainline`: for a merge commit, the parent (1, 2, ...) whose side is the mainline.

    Raises:
        GitError: `revision` names no commit, git refused (a merge commit without
            `mainline`, local changes it would overwrite, ...), or it ran out of time.
    """
    commit = await git.revision(revision)  # one commit: git picks it without a sequencer
    if mainline is not None:
        options = [*options, f"--mainline={mainline}"]
    return await _start(git, operation, options, commit, "Done")


async def _start(
    git: Git, operation: Operation, options: list[str], revision: str, success: str
) -> Done:
    """Run `operation` on `revision` (checked already); say so if conflicts stopped it."""
    args = [*operation.start, *options, "--end-of-options", revision]
    try:
        result = await git.run(args, check=False, finish=True)
    except GitError as exc:  # out of time: git was killed part way
        if under_way(git, operation):
            raise GitError(f"{exc}. {_stopped(git, operation)}") from None
        raise
    said = "\n".join(part for part in (result.text, result.error) if part).strip()
    if under_way(git, operation):
        conflicts = ", ".join(await conflicted(git))
        return await done(git, f"{said}\n{_stopped(git, operation)} Conflicts: {conflicts}")
    if result.status != 0:
        raise GitError(said or f"git {operation.command} failed")
    return await done(git, said or success)


async def abort_question(git: Git, operation: Operation) -> str | None:
    """Return what to ask before `operation` under way is given up (None: none is under way).

    Raises:
        GitError: it is a sequence of several commits, which mcp-git does not abort.
    """
    if not under_way(git, operation):
        return None  # nothing to ask about: abort says so
    _refuse_a_sequence(git, operation)
    at = await head(git) or ""
    return (
        f"Give up the {operation.command} under way in {git.repo.path}, putting the branch and"
        f" the {operation.files} back as they were at {at[:12]}?"
    )


async def abort(git: Git, operation: Operation) -> Done:
    """Give up `operation` under way: the branch and its files go back as they were.

    Raises:
        GitError: none is under way, it is a sequence of several commits (not mcp-git's),
            or git could not undo it.
    """
    if not under_way(git, operation):
        raise GitError(f"No {operation.command} is under way in {git.repo.path}")
    _refuse_a_sequence(git, operation)
    await git.run([operation.command, "--abort"], finish=True)
    return await done(
        git, f"The {operation.command} was given up: the branch and its files are as before it"
    )


def in_progress(git: Git) -> str | None:
    """Return the merge, cherry-pick or revert under way (its git command), if one is."""
    return next((op.command for op in BY_COMMAND.values() if under_way(git, op)), None)


def under_way(git: Git, operation: Operation) -> bool:
    """Return whether `operation` is under way (its state file is in the git directory)."""
    return os.path.lexists(os.path.join(git.repo.git_dir, operation.state))


def _refuse_a_sequence(git: Git, operation: Operation) -> None:
    """Refuse a cherry-pick or revert of several commits: mcp-git never starts one.

    Raises:
        GitError: the git directory holds the state of one.
    """
    if operation is not MERGE and os.path.lexists(os.path.join(git.repo.git_dir, SEQUENCER)):
        raise GitError(
            f"The {operation.command} under way in {git.repo.path} takes several commits, which"
            " mcp-git never starts: finish it with git yourself."
        )


def _stopped(git: Git, operation: Operation) -> str:
    return (
        f"The {operation.command} in {git.repo.path} stopped part way. Resolve the conflicts,"
        " stage the files with git_add, then conclude with git_commit; or give the"
        f" {operation.command} up with {operation.tool} action 'abort'."
    )
