"""mcp-git's read-only tools: the reference's (same names and arguments) and more.

Each opens the jailed repository for the request, does its work in `reading`, and
returns a typed value beside readable text. None changes anything, in any tier.
"""

from typing import Annotated, Literal

from typing_extensions import TypedDict

from mcpkit import Context, Param, Server, ToolAnnotations

from . import pages, parse, reading, remote_list, render, searching
from .access import Repositories, progress
from .remote_list import Remotes

READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

RepoPath = Annotated[str, Param(description="Path of the repository (see git_list_repositories)")]
ContextLines = Annotated[int, Param(ge=0, le=1000, description="Lines of context around changes")]
Paths = Annotated[
    list[str] | None, Param(description="Only these paths (literal, relative to the repository)")
]
Offset = Annotated[int, Param(ge=0, description="Byte to start from (next_offset)")]
MaxBytes = Annotated[int, Param(ge=1, le=4_000_000, description="Most bytes of text returned")]
GIT_INT = 2**31 - 1
"""The largest count git reads as it is: past it, `--skip` wrapped round to the newest commit."""


class RepositoryList(TypedDict):
    """The repositories this client may use; `truncated`: the search stopped before the end."""

    repositories: list[str]
    truncated: bool


class MergeBase(TypedDict):
    """The best common ancestor of two commits (None: they have none)."""

    merge_base: str | None


class Files(TypedDict):
    """Tracked file paths, and whether more were left out (ask for more, or narrow paths)."""

    files: list[str]
    truncated: bool


def register_read_tools(app: Server) -> None:
    """Register the read-only tools: the reference's, then the others."""

    @app.tool(title="Working tree status", annotations=READ, text=render.status)
    async def git_status(ctx: Context, repos: Repositories, repo_path: RepoPath) -> parse.Status:
        """Show the working tree status.

        Branch, upstream, ahead/behind, staged, unstaged, untracked and conflicted files.
        """
        return await reading.status(await repos.open(ctx, repo_path))

    for staged in (False, True):
        register_worktree_diff(app, staged=staged)

    @app.tool(title="Diff against a revision", annotations=READ, text=render.page)
    async def git_diff(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        target: Annotated[str, Param(description="Branch, tag or commit to compare with")],
        context_lines: ContextLines = 3,
        source: Annotated[
            str | None, Param(description="Compare target with this revision, not the work tree")
        ] = None,
        staged: Annotated[bool, Param(description="Compare the index, not the work tree")] = False,
        paths: Paths = None,
        name_only: bool = False,
        stat: bool = False,
        offset: Offset = 0,
        max_bytes: MaxBytes = 100_000,
    ) -> pages.Page:
        """Show differences between the working tree (or `source`) and a branch or commit."""
        git = await repos.open(ctx, repo_path)
        return await pages.diff(
            git,
            target=target,
            source=source,
            staged=staged,
            context_lines=context_lines,
            paths=paths,
            name_only=name_only,
            stat=stat,
            offset=offset,
            max_bytes=max_bytes,
        )

    @app.tool(title="Commit log", annotations=READ, text=render.log)
    async def git_log(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        max_count: Annotated[int, Param(ge=1, le=10_000)] = 10,
        start_timestamp: Annotated[
            str | None, Param(description="Commits after this: ISO 8601, or '2 weeks ago'")
        ] = None,
        end_timestamp: Annotated[str | None, Param(description="Commits before this")] = None,
        skip: Annotated[
            int, Param(ge=0, le=GIT_INT, description="Commits to skip (next_skip)")
        ] = 0,
        author: str | None = None,
        grep: Annotated[str | None, Param(description="Text the message contains")] = None,
        revision_range: Annotated[
            str | None, Param(description="A revision or range such as main..HEAD")
        ] = None,
        paths: Paths = None,
        follow: Annotated[
            bool, Param(description="Follow one file (paths names it) across renames")
        ] = False,
        stat: Annotated[
            bool, Param(description="List the files each commit changed, lines +/-")
        ] = False,
        all_branches: Annotated[
            bool, Param(description="Commits of every branch and tag, not HEAD's alone")
        ] = False,
        first_parent: Annotated[
            bool, Param(description="The mainline only: a merge's side commits left out")
        ] = False,
    ) -> reading.Log:
        """Show the commit logs, newest first, a page at a time."""
        git = await repos.open(ctx, repo_path)
        return await reading.log(
            git,
            max_count=max_count,
            skip=skip,
            start_timestamp=start_timestamp,
            end_timestamp=end_timestamp,
            author=author,
            grep=grep,
            revision_range=revision_range,
            all_branches=all_branches,
            first_parent=first_parent,
            paths=paths,
            follow=follow,
            stat=stat,
            tick=progress(ctx),
        )

    @app.tool(title="Show a commit or a file at a revision", annotations=READ, text=render.page)
    async def git_show(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        revision: Annotated[str, Param(description="Commit, branch or tag")],
        path: Annotated[str | None, Param(description="Show this file at the revision")] = None,
        stat_only: bool = False,
        offset: Offset = 0,
        max_bytes: MaxBytes = 100_000,
    ) -> pages.Page:
        """Show the contents of a commit (header and patch), or of a file at a revision."""
        git = await repos.open(ctx, repo_path)
        return await pages.show(
            git, revision, path=path, stat_only=stat_only, offset=offset, max_bytes=max_bytes
        )

    @app.tool(title="List branches", annotations=READ, text=render.branches)
    async def git_branch(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        branch_type: Literal["local", "remote", "all"] = "local",
        contains: Annotated[str | None, Param(description="Only branches holding it")] = None,
        not_contains: Annotated[str | None, Param(description="Only branches without it")] = None,
    ) -> reading.Branches:
        """List git branches (local, remote or all), optionally by the commits they contain."""
        git = await repos.open(ctx, repo_path)
        return await reading.branches(git, branch_type, contains, not_contains)

    register_more_read_tools(app)


def register_worktree_diff(app: Server, *, staged: bool) -> None:
    """Register git_diff_unstaged (the work tree against the index) or git_diff_staged."""
    name, title, what = (
        ("git_diff_staged", "Staged changes", "Show changes that are staged for commit.")
        if staged
        else (
            "git_diff_unstaged",
            "Unstaged changes",
            "Show changes in the working directory that are not yet staged.",
        )
    )

    @app.tool(name=name, title=title, description=what, annotations=READ, text=render.page)
    async def worktree_diff(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        context_lines: ContextLines = 3,
        paths: Paths = None,
        offset: Offset = 0,
        max_bytes: MaxBytes = 100_000,
    ) -> pages.Page:
        git = await repos.open(ctx, repo_path)
        return await pages.diff(
            git,
            staged=staged,
            context_lines=context_lines,
            paths=paths,
            offset=offset,
            max_bytes=max_bytes,
        )


def register_more_read_tools(app: Server) -> None:
    """Register the read-only tools the reference lacks."""

    @app.tool(title="Blame a file", annotations=READ, text=render.blame)
    async def git_blame(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        path: str,
        revision: str | None = None,
        start_line: Annotated[int | None, Param(ge=1, le=GIT_INT)] = None,
        end_line: Annotated[int | None, Param(ge=1, le=GIT_INT)] = None,
    ) -> reading.Blame:
        """Show which commit last changed each line of a file."""
        git = await repos.open(ctx, repo_path)
        return await reading.blame(
            git,
            path,
            revision=revision,
            start_line=start_line,
            end_line=end_line,
            tick=progress(ctx),
        )

    @app.tool(title="Search tracked files", annotations=READ, text=render.matches)
    async def git_grep(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        pattern: Annotated[str, Param(min_length=1)],
        revision: Annotated[str | None, Param(description="Search this revision")] = None,
        paths: Paths = None,
        glob: Annotated[
            str | None, Param(description="Only files whose whole path it matches: *.py")
        ] = None,
        is_regex: bool = False,
        ignore_case: bool = False,
        max_results: Annotated[int, Param(ge=1, le=10_000)] = 200,
    ) -> searching.Matches:
        """Find lines in tracked files (or at a revision): a literal, or an extended regex."""
        git = await repos.open(ctx, repo_path)
        return await searching.grep(
            git,
            pattern,
            revision=revision,
            paths=paths,
            glob=glob,
            is_regex=is_regex,
            ignore_case=ignore_case,
            max_results=max_results,
            tick=progress(ctx),
        )

    @app.tool(title="List tracked files", annotations=READ, text=render.files)
    async def git_ls_files(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        revision: str | None = None,
        paths: Paths = None,
        pattern: Annotated[
            str | None, Param(description="Glob on the whole path: *.py, src/*/test_*.py")
        ] = None,
        max_files: Annotated[int, Param(ge=1, le=100_000)] = 10_000,
    ) -> Files:
        """List the files git tracks (in the index, or at a revision), matching a glob."""
        git = await repos.open(ctx, repo_path)
        files, truncated = await searching.ls_files(
            git, revision=revision, paths=paths, pattern=pattern, max_files=max_files
        )
        return Files(files=files, truncated=truncated)

    @app.tool(title="Reflog", annotations=READ, text=render.reflog)
    async def git_reflog(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        ref: Annotated[str, Param(description="HEAD, or a branch such as main")] = "HEAD",
        max_count: Annotated[int, Param(ge=1, le=10_000)] = 20,
        skip: Annotated[int, Param(ge=0, le=GIT_INT, description="Entries to skip")] = 0,
    ) -> reading.Reflog:
        """Show where HEAD (or a branch) has pointed, newest first: commits, resets, checkouts.

        Each entry's selector (HEAD@{2}) is a revision other tools take: the way back to
        a commit a reset or rebase left behind.
        """
        git = await repos.open(ctx, repo_path)
        return await reading.reflog(git, ref, max_count=max_count, skip=skip)

    @app.tool(title="List remotes", annotations=READ, text=render.remotes)
    async def git_remote(ctx: Context, repos: Repositories, repo_path: RepoPath) -> Remotes:
        """List the remotes and the URLs a fetch reads and a push writes (credentials hidden)."""
        git = await repos.open(ctx, repo_path)
        return await remote_list.listed(git)

    @app.tool(title="Common ancestor", annotations=READ, text=render.merge_base)
    async def git_merge_base(
        ctx: Context, repos: Repositories, repo_path: RepoPath, a: str, b: str
    ) -> MergeBase:
        """Find the best common ancestor of two commits."""
        git = await repos.open(ctx, repo_path)
        return MergeBase(merge_base=await reading.merge_base(git, a, b))

    @app.tool(title="List repositories", annotations=READ, text=render.repositories)
    async def git_list_repositories(ctx: Context, repos: Repositories) -> RepositoryList:
        """List the repositories this server may use (the operator's, within your roots)."""
        found = await repos.list(ctx)
        return RepositoryList(repositories=found.repositories, truncated=not found.complete)
