"""What git_rebase does: replay the current branch onto another commit, and go on once stopped.

A rebase is started plain (the merge backend, one `pick` per commit) with options that beat
the repository's settings. Stopped by a conflict, it waits for the model to resolve it,
stage the files and continue, skip the commit or abort. Its state in the git directory
is instructions git follows: a to-do list's `exec` line runs a command, a merge strategy
names a program, a state folder that is a link has git read and write outside. A hostile
repository may ship such a state, so only the state of a plain rebase is gone on with.
"""

import os
import re
import stat
from typing import NamedTuple

import anyio
from typing_extensions import TypedDict

from .changing import head, still
from .errors import GitError
from .pages import conflicted
from .process import Result
from .repo import Git

START = (
    "rebase",
    "--merge",  # the sequencer, not `git am` (rebase.backend)
    "--no-autostash",  # local changes refuse a rebase; none is stashed unasked
    "--no-autosquash",  # no commit reordered by its message
    "--no-fork-point",  # the upstream as given, not a point read from the reflog
    "--no-rebase-merges",  # one pick per commit, no merge lines (rebase.rebaseMerges)
)
"""How a rebase starts: each option beats a setting the repository may have."""
STATES = ("rebase-merge", "rebase-apply")
"""The folders of a rebase under way, in the git directory: mcp-git starts the first only."""
PICKS = frozenset({b"pick", b"p"})
MAX_TODO = 64 * 1024 * 1024
"""Bytes of to-do list read: 64 MiB is a million commits."""
OVERWRITTEN = re.compile(r"[^\n]*\r|\x1b\[K")
"""What a terminal would show no more: progress ("Rebasing (1/2)") ended by a carriage
return, and the code that erases the rest of a line."""
FORBIDDEN_STATE = ("strategy", "strategy_opts")
"""State files that name a merge strategy (a program git runs), which a plain rebase lacks."""


class Rebased(TypedDict):
    """Where a rebase stands: git's words, HEAD, and the files whose conflicts stopped it."""

    message: str
    head: str | None
    stopped: bool
    conflicts: list[str]


class Plan(NamedTuple):
    """A rebase as the user is asked about it: branch, commits to replay, and where to."""

    branch: str
    head: str  # object names, resolved once: the rebase replays what the question said
    upstream: str
    onto: str
    commits: int


async def plan(git: Git, upstream: str | None, onto: str | None) -> Plan:
    """Return the rebase of the current branch onto `upstream` (or `onto`), checked.

    Raises:
        GitError: no upstream, no commit yet, a revision that names no commit, or a
            rebase under way.
    """
    if upstream is None:
        raise GitError("upstream must name the commit to replay the branch onto, e.g. main")
    if under_way(git.repo.git_dir):
        raise GitError("A rebase is under way: continue, skip or abort it first")
    at = await head(git)
    if at is None:
        raise GitError("There is nothing to rebase: the branch has no commit yet")
    base = await git.revision(upstream, what="upstream")
    target = base if onto is None else await git.revision(onto, what="onto")
    counted = await git.run(["rev-list", "--count", f"{base}..{at}"])
    return Plan(await branch_name(git), at, base, target, int(counted.text))


async def branch_name(git: Git) -> str:
    """Return the name of the branch HEAD is on, or "the detached HEAD"."""
    branch = await git.run(["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
    return branch.text.strip() or "the detached HEAD"


async def start(git: Git, planned: Plan) -> Rebased:
    """Replay the branch's commits as `planned`; return where the rebase stands.

    A rebase stopped part way, out of time or cancelled, is undone.

    Raises:
        GitError: HEAD is no longer the branch and commit the question named, or git
            ran out of time.
    """
    await still(git, "HEAD", planned.head)  # a commit made while the user read: asked again
    if await branch_name(git) != planned.branch:
        raise GitError(
            f"HEAD is no longer on {planned.branch}, which the question named: nothing"
            " changed. Ask again."
        )
    return await _rebase(git, [*START, f"--onto={planned.onto}", planned.upstream], undo=True)


async def step(git: Git, action: str) -> Rebased:
    """`continue`, `skip` or `abort` the rebase under way; return where it stands.

    Raises:
        GitError: none is under way, its state is not one mcp-git would have made, or
            git ran out of time (the rebase stays under way).
    """
    check_under_way(git)
    return await _rebase(git, ["rebase", f"--{action}"], undo=False)


async def _rebase(git: Git, args: list[str], *, undo: bool) -> Rebased:
    """Run `git args` and return where the rebase stands; one stopped part way is undone if `undo`.

    Raises:
        GitError: git failed and no rebase is under way, or git ran out of time.
    """
    try:
        result = await git.run(args, check=False, finish=True)
    except GitError as exc:  # out of time: git was killed part way
        said = await _after_a_kill(git, undo=undo)
        raise GitError(f"{exc}. {said}" if said else str(exc)) from None
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await _after_a_kill(git, undo=undo)
        raise
    return await outcome(git, result)


async def _after_a_kill(git: Git, *, undo: bool) -> str | None:
    """Undo the rebase git was killed in (if `undo`); say where it stands (None: no rebase)."""
    if not under_way(git.repo.git_dir):
        return None
    if undo:
        await git.run(["rebase", "--abort"], check=False)
        if not under_way(git.repo.git_dir):
            return "The rebase was undone: the branch is as it was"
    return "The rebase is still under way: git_rebase with action 'continue' or 'abort' goes on"


async def outcome(git: Git, result: Result) -> Rebased:
    """Return where the rebase stands after `result`: done, or stopped (and how to go on).

    Raises:
        GitError: it failed and no rebase is under way (git's message).
    """
    said = "\n".join(part for part in (result.text, result.error) if part)
    said = OVERWRITTEN.sub("", said).strip()
    now = await head(git)
    if not under_way(git.repo.git_dir):
        if result.status != 0:
            raise GitError(said or "git rebase failed")
        return Rebased(message=said or "Rebased", head=now, stopped=False, conflicts=[])
    advice = (
        "The rebase stopped. Resolve the conflicts, stage the files with git_add, then call"
        " git_rebase with action 'continue'; or 'skip' this commit, or 'abort' to go back."
    )
    return Rebased(
        message=f"{said}\n{advice}".strip(), head=now, stopped=True, conflicts=await conflicted(git)
    )


def under_way(git_dir: str) -> bool:
    """Return whether the git directory holds a rebase's state (a link there counts too)."""
    return any(os.path.lexists(os.path.join(git_dir, name)) for name in STATES)


def check_under_way(git: Git) -> None:
    """Refuse to go on with a rebase unless one mcp-git could have started is under way.

    Raises:
        GitError: none is under way, or its state is not one mcp-git would have made.
    """
    if not under_way(git.repo.git_dir):
        raise GitError(f"No rebase is under way in {git.repo.path}")
    check_state(git.repo.git_dir)


def check_state(git_dir: str) -> None:
    """Refuse to go on with a rebase whose state mcp-git would not have made.

    Raises:
        GitError: the state is `git am`'s, a link, holds a link or a merge strategy, or
            its to-do list holds anything but `pick` lines.
    """
    refused = GitError(
        "The rebase under way was not started as mcp-git starts one (a plain pick of each"
        " commit): finish it with git yourself."
    )
    if os.path.lexists(os.path.join(git_dir, STATES[1])):
        raise refused  # git am's, or the apply backend's: mcp-git starts neither
    state = os.path.join(git_dir, STATES[0])
    try:
        if not stat.S_ISDIR(os.lstat(state).st_mode):
            raise refused
        entries = list(os.scandir(state))
    except OSError:
        raise refused from None
    if any(entry.is_symlink() or entry.name in FORBIDDEN_STATE for entry in entries):
        raise refused
    try:
        with open(os.path.join(state, "git-rebase-todo"), "rb") as todo:
            listed = todo.read(MAX_TODO + 1)
    except FileNotFoundError:
        listed = b""  # the last commit stopped: nothing is left to do
    except OSError:
        raise refused from None
    commands = {line.split()[0] for line in listed.splitlines() if line.strip()}
    if len(listed) > MAX_TODO or not commands <= PICKS:
        raise refused
