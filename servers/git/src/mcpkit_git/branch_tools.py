"""git_delete_branch, git_rename_branch, git_worktree: the default tier's branches and trees."""

from typing import Annotated, Literal

from mcpkit import Context, Param, Server, ToolError

from . import changing, render, worktrees
from .access import Repositories, Tiers, confirm
from .change_tools import annotations, writable
from .errors import GitError
from .read_tools import RepoPath


def register_branch_tools(app: Server, tiers: Tiers) -> None:
    """Register git_delete_branch, git_rename_branch and git_worktree (the default tier)."""

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

    @app.tool(
        title="Work trees",
        annotations=annotations(destructive=True, idempotent=False),  # remove deletes
        text=render.worktrees,
    )
    async def git_worktree(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        action: Literal["list", "add", "remove"] = "list",
        path: Annotated[
            str | None, Param(description="The work tree's folder (relative: to repo_path)")
        ] = None,
        branch: Annotated[str | None, Param(description="The branch to check out there")] = None,
        create: Annotated[bool, Param(description="Make the branch (at start_point)")] = False,
        start_point: Annotated[str | None, Param(description="Default HEAD")] = None,
        force: Annotated[bool, Param(description="Remove one with local changes")] = False,
    ) -> worktrees.Worktrees:
        """List the work trees, add one (a folder with a branch checked out), or remove one.

        Each work tree is a repository the other tools take as repo_path.
        """
        git = await writable(repos, ctx, repo_path)
        if action == "list":
            return await worktrees.listed(git)
        if path is None:
            raise GitError(f"Name the folder of the work tree to {action} (path).")
        if action == "add":
            if branch is None:
                raise GitError("Name the branch to check out in the new work tree (branch).")
            return await worktrees.add(git, path, branch, create=create, start_point=start_point)
        folder = await worktrees.removable(git, path)  # checked before anyone is asked
        lost = ", with its uncommitted changes" if force else ""
        await confirm(ctx, f"Remove the work tree {folder} and delete its folder{lost}?")
        return await worktrees.remove(git, folder, force=force)
