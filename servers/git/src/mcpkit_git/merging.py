"""What git_merge does: join another commit's history into the current branch, or give up.

A merge starts with options that beat the repository's settings: no local change is
stashed unasked (`merge.autoStash`), no signature checked (its program would run), and how
to fast-forward is the caller's. Stopped by conflicts, it waits for the model to resolve
the files, stage them with git_add and conclude with git_commit; or to abort, which puts
the branch and the merged files back as they were. The repository's merge drivers are
neutralised with its other programs (`jail.driver_overrides`).
"""

import os
from typing import Literal

from .changing import Done, done
from .errors import GitError
from .pages import conflicted
from .repo import Git

FastForward = Literal["allow", "only", "never"]
FAST_FORWARD: dict[FastForward, str] = {"allow": "--ff", "only": "--ff-only", "never": "--no-ff"}
START = ("merge", "--no-edit", "--no-stat", "--no-autostash", "--no-verify-signatures")
"""How a merge starts: each option beats a setting the repository may have."""
GO_ON = (
    "Resolve the conflicts, stage the files with git_add, then conclude with git_commit; or"
    " give the merge up with git_merge action 'abort'."
)


async def start(git: Git, revision: str, *, message: str | None, fast_forward: FastForward) -> Done:
    """Merge `revision` into the current branch; say so if conflicts stopped it.

    Raises:
        GitError: `revision` names no commit, git refused (local changes it would
            overwrite, no fast-forward possible with `only`, ...), or it ran out of time.
    """
    await git.revision(revision)  # names a commit, and is no option
    args = [*START, FAST_FORWARD[fast_forward]]
    if message is not None:
        args.append(f"--message={message}")
    try:
        result = await git.run([*args, "--end-of-options", revision], check=False, finish=True)
    except GitError as exc:  # out of time: git was killed part way
        raise GitError(f"{exc}. {_stopped(git)}" if under_way(git) else str(exc)) from None
    said = "\n".join(part for part in (result.text, result.error) if part).strip()
    if under_way(git):
        conflicts = ", ".join(await conflicted(git))
        return await done(git, f"{said}\n{_stopped(git)} Conflicts: {conflicts}")
    if result.status != 0:
        raise GitError(said or "git merge failed")
    return await done(git, said or "Merged")


async def abort(git: Git) -> Done:
    """Give up the merge under way: the branch and the merged files go back as they were.

    Raises:
        GitError: no merge is under way, or git could not undo it.
    """
    if not under_way(git):
        raise GitError(f"No merge is under way in {git.repo.path}")
    await git.run(["merge", "--abort"], finish=True)
    return await done(git, "The merge was given up: the branch and its files are as before it")


def under_way(git: Git) -> bool:
    """Return whether a merge is under way (the git directory holds `MERGE_HEAD`)."""
    return os.path.lexists(os.path.join(git.repo.git_dir, "MERGE_HEAD"))


def _stopped(git: Git) -> str:
    return f"The merge in {git.repo.path} stopped part way. {GO_ON}"
