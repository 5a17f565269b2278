"""git_merge, git_cherry_pick, git_revert: the default tier's merges, and the way out of one."""

from typing import Annotated, Literal

from mcpkit import Context, Param, Server

from . import changing, merging, render
from .access import Repositories, confirm
from .change_tools import annotations, writable
from .errors import GitError
from .read_tools import RepoPath
from .repo import Git

Action = Annotated[
    Literal["start", "abort"], Param(description="abort gives up one stopped by conflicts")
]
Mainline = Annotated[
    int | None,
    Param(ge=1, le=64, description="For a merge commit: the parent (1, 2, ...) kept as mainline"),
]
ABORTS = annotations(destructive=True, idempotent=False)
"""Destructive: abort discards what was merged so far (and the resolutions)."""


def register_merge_tools(app: Server) -> None:
    """Register git_merge, git_cherry_pick and git_revert (the default tier)."""

    @app.tool(title="Merge", annotations=ABORTS, text=render.done)
    async def git_merge(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        revision: Annotated[
            str | None, Param(description="The branch or commit to merge into the current one")
        ] = None,
        message: Annotated[str | None, Param(description="The merge commit's message")] = None,
        fast_forward: Annotated[
            merging.FastForward,
            Param(description="allow (default), only (else refuse), never (always a commit)"),
        ] = "allow",
        action: Action = "start",
    ) -> changing.Done:
        """Merge a branch or commit into the current branch, or abort a merge stopped.

        A merge stopped by conflicts is concluded by resolving them, git_add, git_commit.
        """
        git = await writable(repos, ctx, repo_path)
        if action == "abort":
            return await _abort(ctx, git, merging.MERGE)
        if revision is None:
            raise GitError("Name the revision to merge (a branch or a commit).")
        return await merging.merge(git, revision, message=message, fast_forward=fast_forward)

    @app.tool(title="Cherry-pick", annotations=ABORTS, text=render.done)
    async def git_cherry_pick(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        revision: Annotated[
            str | None, Param(description="The commit whose changes to apply here")
        ] = None,
        record_origin: Annotated[
            bool, Param(description="Add '(cherry picked from commit ...)' to the message")
        ] = False,
        mainline: Mainline = None,
        action: Action = "start",
    ) -> changing.Done:
        """Apply one commit's changes to the current branch as a new commit, or abort one stopped.

        A cherry-pick stopped by conflicts is concluded by resolving them, git_add, git_commit.
        """
        options = ["-x"] if record_origin else []
        return await _pick(
            ctx, repos, repo_path, merging.CHERRY_PICK, revision, mainline, action, options
        )

    @app.tool(title="Revert", annotations=ABORTS, text=render.done)
    async def git_revert(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        revision: Annotated[str | None, Param(description="The commit to undo")] = None,
        mainline: Mainline = None,
        action: Action = "start",
    ) -> changing.Done:
        """Undo one commit with a new commit that applies its opposite, or abort one stopped.

        History is kept: nothing is rewritten. A revert stopped by conflicts is concluded
        by resolving them, git_add, git_commit.
        """
        return await _pick(ctx, repos, repo_path, merging.REVERT, revision, mainline, action, [])


async def _pick(
    ctx: Context,
    repos: Repositories,
    repo_path: str,
    operation: merging.Operation,
    revision: str | None,
    mainline: int | None,
    action: str,
    options: list[str],
) -> changing.Done:
    """Start a cherry-pick or revert (`operation`) of `revision`, or abort one under way."""
    git = await writable(repos, ctx, repo_path)
    if action == "abort":
        return await _abort(ctx, git, operation)
    if revision is None:
        raise GitError(f"Name the commit to {operation.command}.")
    return await merging.pick(git, operation, revision, mainline=mainline, options=options)


async def _abort(ctx: Context, git: Git, operation: merging.Operation) -> changing.Done:
    """Give up `operation` under way, once the user agrees (nothing to ask: abort says why)."""
    question = await merging.abort_question(git, operation)
    if question is not None:
        await confirm(ctx, question)
    return await merging.abort(git, operation)
