"""git_merge: the default tier's merge, and the way out of one stopped by conflicts."""

from typing import Annotated, Literal

from mcpkit import Context, Param, Server

from . import changing, merging, render
from .access import Repositories, confirm
from .change_tools import annotations, writable
from .errors import GitError
from .read_tools import RepoPath


def register_merge_tool(app: Server) -> None:
    """Register git_merge (the default tier)."""

    @app.tool(
        title="Merge",
        annotations=annotations(destructive=True, idempotent=False),  # abort discards
        text=render.done,
    )
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
        action: Annotated[
            Literal["start", "abort"],
            Param(description="abort gives up a merge stopped by conflicts"),
        ] = "start",
    ) -> changing.Done:
        """Merge a branch or commit into the current branch, or abort a merge stopped.

        A merge stopped by conflicts is concluded by resolving them, git_add, git_commit.
        """
        git = await writable(repos, ctx, repo_path)
        if action == "abort":
            if merging.under_way(git):  # else there is nothing to ask about: abort says so
                at = await changing.head(git) or ""
                await confirm(
                    ctx,
                    f"Give up the merge under way in {git.repo.path}, putting the branch and"
                    f" the merged files back as they were at {at[:12]}?",
                )
            return await merging.abort(git)
        if revision is None:
            raise GitError("Name the revision to merge (a branch or a commit).")
        return await merging.start(git, revision, message=message, fast_forward=fast_forward)
