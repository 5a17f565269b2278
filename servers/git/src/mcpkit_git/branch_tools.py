"""git_delete_branch and git_rename_branch: the default tier's branch changes past creation."""

from typing import Annotated

from mcpkit import Context, Param, Server, ToolError

from . import changing, render
from .access import Repositories, Tiers, confirm
from .change_tools import annotations, writable
from .read_tools import RepoPath


def register_branch_tools(app: Server, tiers: Tiers) -> None:
    """Register git_delete_branch and git_rename_branch (the default tier)."""

    @app.tool(
        title="Delete a branch",
        annotations=annotations(destructive=True, idempotent=False),
        text=render.done,
    )
    async def git_delete_branch(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        branch_name: str,
        force: Annotated[
            bool,
            Param(description="Even if its commits are merged nowhere (--allow-history-rewrite)"),
        ] = False,
    ) -> changing.Done:
        """Delete a local branch: unless `force`, one whose commits its upstream or HEAD has."""
        git = await writable(repos, ctx, repo_path)
        if force and not tiers.history_rewrite:
            raise ToolError(
                "force loses the commits no other branch has: the operator did not allow"
                " history rewrite. Merge the branch first, or delete it without force."
            )
        name, at = await changing.branch_at(git, branch_name)  # named by commit, as tags
        await confirm(ctx, f"Delete branch {name!r} (at {at[:12]}) in {git.repo.path}?")
        return await changing.delete_branch(git, name, force=force, deleting=at)

    @app.tool(
        title="Rename a branch",
        annotations=annotations(destructive=False, idempotent=False),
        text=render.done,
    )
    async def git_rename_branch(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        branch_name: Annotated[str, Param(description="The local branch to rename")],
        new_name: Annotated[str, Param(description="Its new name: no branch may have it yet")],
    ) -> changing.Done:
        """Rename a local branch (the current one too); its upstream and reflog go with it."""
        git = await writable(repos, ctx, repo_path)
        return await changing.rename_branch(git, branch_name, new_name)
