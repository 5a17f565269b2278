"""mcp-git's tools that change a repository, by tier (branches and merges: their own modules).

The default tier changes the local repository (stage, commit, branch, switch, restore,
stash, tag); `history_rewrite` adds hard resets, amending, rebasing and deleting an
unmerged branch; `remote` adds fetch, pull and push. None is listed with `--read-only`.
A destructive change asks the user first when the client can show a form (ask, then
change: a retry never does the work twice).
"""

from collections.abc import Sequence
from typing import Annotated, Literal

from mcpkit import Context, Param, Server, ToolAnnotations, ToolError

from . import changing, cleaning, rebasing, remotes, render
from .access import Repositories, Tiers, confirm, progress
from .read_tools import Paths, RepoPath
from .repo import Git

Remote = Annotated[str, Param(description="Remote name")]


def annotations(*, destructive: bool, idempotent: bool, remote: bool = False) -> ToolAnnotations:
    """Return the hints of a changing tool."""
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=remote,
    )


async def writable(repos: Repositories, ctx: Context, repo_path: str) -> Git:
    """Open the repository for a change (refused in a read-only place)."""
    git = await repos.open(ctx, repo_path)
    if git.repo.read_only:
        raise ToolError(f"{git.repo.path} is read-only for this server")
    return git


def register_change_tools(app: Server, tiers: Tiers) -> None:
    """Register the changing tools the tiers allow."""
    text = render.done

    @app.tool(
        title="Commit", annotations=annotations(destructive=False, idempotent=False), text=text
    )
    async def git_commit(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        message: Annotated[str, Param(min_length=1)],
        amend: Annotated[
            bool, Param(description="Replace the last commit (needs --allow-history-rewrite)")
        ] = False,
        allow_empty: bool = False,
        files: Annotated[
            list[str] | None,
            Param(description="Commit only these tracked files; the rest stays staged"),
        ] = None,
    ) -> changing.Done:
        """Record the staged changes (or only `files`) as a new commit with the message."""
        git = await writable(repos, ctx, repo_path)
        replacing = None
        if amend:
            if not tiers.history_rewrite:
                raise ToolError("amend rewrites history: the operator did not allow it")
            replacing = await changing.head(git)
            if replacing is None:
                raise ToolError("There is no commit to amend yet")
            # Named by commit: a commit made since is asked about again, never amended away.
            await confirm(ctx, f"Replace the last commit ({replacing[:12]}) of {git.repo.path}?")
        return await changing.commit(
            git, message, replacing=replacing, allow_empty=allow_empty, files=files
        )

    @app.tool(
        title="Stage files", annotations=annotations(destructive=False, idempotent=True), text=text
    )
    async def git_add(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        files: Annotated[list[str], Param(description="Paths to stage; ['.'] for everything")],
        update: Annotated[bool, Param(description="Only files git already tracks")] = False,
    ) -> changing.Done:
        """Add file contents to the staging area."""
        return await changing.add(await writable(repos, ctx, repo_path), files, update=update)

    @app.tool(
        title="Unstage or reset",
        # Not idempotent: a target such as HEAD~1 moves the branch further at each call.
        annotations=annotations(destructive=True, idempotent=False),
        text=text,
    )
    async def git_reset(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        mode: Annotated[
            Literal["mixed", "soft", "hard"],
            Param(description="mixed (default): unstage; soft/hard move HEAD (history rewrite)"),
        ] = "mixed",
        target: str = "HEAD",
        paths: Paths = None,
    ) -> changing.Done:
        """Unstage all staged changes (or `paths`); with --allow-history-rewrite, soft or hard."""
        git = await writable(repos, ctx, repo_path)
        rewrites = mode != "mixed" or target != "HEAD"
        if rewrites and not tiers.history_rewrite:
            raise ToolError("Only unstaging is allowed; the operator did not allow history rewrite")
        target, at = await confirm_reset(ctx, git, mode, target, paths)
        return await changing.reset(git, mode=mode, target=target, paths=paths, confirmed_at=at)

    @app.tool(
        title="Create a branch",
        annotations=annotations(destructive=False, idempotent=False),
        text=text,
    )
    async def git_create_branch(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        branch_name: str,
        base_branch: Annotated[str | None, Param(description="Start point (default: HEAD)")] = None,
    ) -> changing.Done:
        """Create a new branch from an optional base branch."""
        git = await writable(repos, ctx, repo_path)
        return await changing.create_branch(git, branch_name, base_branch)

    @app.tool(
        title="Switch branches",
        annotations=annotations(destructive=False, idempotent=False),
        text=text,
    )
    async def git_checkout(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        branch_name: str,
        create: bool = False,
        start_point: str | None = None,
    ) -> changing.Done:
        """Switch to a branch (or a commit, detached); `create` makes the branch first."""
        git = await writable(repos, ctx, repo_path)
        return await changing.checkout(git, branch_name, create=create, start_point=start_point)

    register_more_tools(app, tiers)
    if tiers.history_rewrite:
        register_rebase_tool(app)
    if tiers.remote:
        register_remote_tools(app)


def register_more_tools(app: Server, tiers: Tiers) -> None:
    """Register git_restore, git_clean, git_stash and git_tag (the default tier)."""
    text = render.done

    @app.tool(
        title="Restore files", annotations=annotations(destructive=True, idempotent=True), text=text
    )
    async def git_restore(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        paths: list[str],
        staged: Annotated[bool, Param(description="Unstage, keeping the work tree")] = False,
        source: Annotated[str | None, Param(description="Restore from this revision")] = None,
    ) -> changing.Done:
        """Discard changes to files in the work tree (or unstage them, `staged`)."""
        git = await writable(repos, ctx, repo_path)
        checked = git.paths(paths)  # refuse bad paths before asking anyone
        origin = ""
        if source is not None:  # named by commit: a retry that finds it moved asks again
            commit_name = await git.revision(source, what="source")
            origin = f", for their content at {source} ({commit_name[:12]})"
            source = commit_name
        if not staged:
            files = f"{', '.join(checked[1:])} in {git.repo.path}"
            await confirm(ctx, f"Discard changes to {files}{origin}?")
        return await changing.restore(git, paths, staged=staged, source=source)

    @app.tool(
        title="Delete untracked files",
        annotations=annotations(destructive=True, idempotent=True),
        text=render.cleaned,
    )
    async def git_clean(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        paths: Paths = None,
        directories: Annotated[bool, Param(description="Untracked folders too, whole")] = False,
        ignored: Annotated[
            bool, Param(description="Ignored files too (build output, but also .env)")
        ] = False,
        dry_run: Annotated[bool, Param(description="Only list what would go")] = False,
    ) -> cleaning.Cleaned:
        """Delete untracked files for good (asking the user first, naming them)."""
        git = await writable(repos, ctx, repo_path)
        names = await cleaning.untracked(git, paths, directories=directories, ignored=ignored)
        if dry_run or not names:
            return cleaning.Cleaned(removed=names, kept=[], dry_run=dry_run)
        await confirm(ctx, cleaning.question(git, names))
        return await cleaning.clean(git, names, ignored=ignored)

    @app.tool(
        title="Stash changes",
        annotations=annotations(destructive=True, idempotent=False),
        text=text,
    )
    async def git_stash(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        action: Literal["push", "pop", "apply", "list", "show", "drop"] = "push",
        message: str | None = None,
        include_untracked: bool = False,
        ref: Annotated[str | None, Param(description="A stash entry, e.g. stash@{0}")] = None,
    ) -> changing.Done:
        """Set changes aside (push), bring them back (pop, apply), drop, list or show them."""
        git = await writable(repos, ctx, repo_path)
        dropping = None
        if action == "drop":  # named by commit: a stash made since is asked about again
            named, dropping = await changing.stash_named(git, ref)
            await confirm(ctx, f"Drop {named} in {git.repo.path}?")
        return await changing.stash(
            git,
            action,
            message=message,
            include_untracked=include_untracked,
            ref=ref,
            dropping=dropping,
        )

    @app.tool(title="Tags", annotations=annotations(destructive=True, idempotent=False), text=text)
    async def git_tag(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        action: Literal["list", "create", "delete"] = "list",
        name: str | None = None,
        message: Annotated[str | None, Param(description="Makes an annotated tag")] = None,
        target: str | None = None,
    ) -> changing.Done:
        """List tags, create one at a commit, or delete one."""
        git = await writable(repos, ctx, repo_path)
        at = None
        if action == "delete" and name is not None:  # named by what it points at
            at = await git.revision(f"refs/tags/{name}", what="tag", peel="")
            await confirm(ctx, f"Delete tag {name!r} (at {at[:12]}) in {git.repo.path}?")
        return await changing.tag(
            git, action, name=name, message=message, target=target, deleting=at
        )


def register_rebase_tool(app: Server) -> None:
    """Register git_rebase (--allow-history-rewrite)."""

    @app.tool(
        title="Rebase",
        annotations=annotations(destructive=True, idempotent=False),
        text=render.done,
    )
    async def git_rebase(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        upstream: Annotated[
            str | None, Param(description="The commit to replay the branch after, e.g. main")
        ] = None,
        onto: Annotated[str | None, Param(description="Replay onto this instead")] = None,
        action: Annotated[
            Literal["start", "continue", "skip", "abort"],
            Param(description="continue, skip or abort a rebase stopped by conflicts"),
        ] = "start",
    ) -> rebasing.Rebased:
        """Replay the current branch's commits onto `upstream`; go on with one that stopped."""
        git = await writable(repos, ctx, repo_path)
        if action == "start":  # asked by commit: a retry that finds them moved asks again
            planned = await rebasing.plan(git, upstream, onto)
            after = f"after {upstream} ({planned.upstream[:12]})"
            where = "" if onto is None else f" onto {onto} ({planned.onto[:12]})"
            await confirm(
                ctx,
                f"Rewrite {planned.branch} (now at {planned.head[:12]}) in {git.repo.path}:"
                f" replay its {planned.commits} commits {after}{where}?",
            )
            return await rebasing.start(git, planned)
        rebasing.check_under_way(git)  # before anyone is asked
        if action != "continue":
            lost = "the commit it stopped at" if action == "skip" else "what it has done"
            await confirm(ctx, f"{action.title()} the rebase in {git.repo.path}, dropping {lost}?")
        return await rebasing.step(git, action)


async def confirm_reset(
    ctx: Context, git: Git, mode: str, target: str, paths: Sequence[str] | None
) -> tuple[str, str | None]:
    """Ask before a reset that discards changes or moves the branch.

    Return what to reset to, and the commit HEAD was at when the question was asked (None
    when none was asked). The question names both: a branch is moved to the commit named,
    and only from the commit named (a commit made while the user reads stops the reset;
    a retry that finds either elsewhere asks again).

    Raises:
        ToolError: the user did not confirm.
        GitError: the target names no commit.
    """
    moves = target != "HEAD" and not paths  # the commits after the target leave the branch
    shown = target
    if moves:
        target = await git.revision(target, what="target")
        shown = f"{shown} ({target[:12]})"
    if mode != "hard" and not moves:
        return target, None
    at = await changing.head(git)
    now = f"now at {at[:12]}" if at else "no commit yet"
    if mode == "hard":
        moved = f", and move the branch to {shown}" if moves else ""
        await confirm(ctx, f"Discard every uncommitted change in {git.repo.path} ({now}){moved}?")
    else:
        await confirm(ctx, f"Move the branch in {git.repo.path} ({now}) to {shown} ({mode} reset)?")
    return target, at


def register_remote_tools(app: Server) -> None:
    """Register git_fetch, git_pull and git_push (--allow-remote)."""
    remote_text = render.done

    @app.tool(
        title="Fetch",
        annotations=annotations(destructive=False, idempotent=True, remote=True),
        text=remote_text,
    )
    async def git_fetch(
        ctx: Context, repos: Repositories, repo_path: RepoPath, remote: Remote = "origin"
    ) -> changing.Done:
        """Download objects and refs from a remote (no credential prompt ever waits)."""
        git = await writable(repos, ctx, repo_path)
        return await changing.sync(git, "fetch", remote, tick=progress(ctx))

    @app.tool(
        title="Pull",
        annotations=annotations(destructive=False, idempotent=False, remote=True),
        text=remote_text,
    )
    async def git_pull(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        remote: Remote = "origin",
        branch: str | None = None,
    ) -> changing.Done:
        """Fetch and fast-forward the current branch (never a merge commit)."""
        git = await writable(repos, ctx, repo_path)
        return await changing.sync(git, "pull", remote, branch, tick=progress(ctx))

    @app.tool(
        title="Push",
        annotations=annotations(destructive=True, idempotent=False, remote=True),
        text=remote_text,
    )
    async def git_push(
        ctx: Context,
        repos: Repositories,
        repo_path: RepoPath,
        remote: Remote = "origin",
        branch: str | None = None,
        force_with_lease: Annotated[
            bool, Param(description="Overwrite the remote only if it is as last fetched")
        ] = False,
        set_upstream: bool = False,
    ) -> changing.Done:
        """Send commits to a remote; a forced push only with a lease, never a plain force."""
        git = await writable(repos, ctx, repo_path)
        lease = None
        if force_with_lease:  # named by commit: a fetch made since is asked about again
            branch = await remotes.pushed_branch(git, branch)
            lease = await remotes.last_fetched(git, remote, branch)
            replaced = f"its {lease[:12]}" if lease else "nothing (it has no such branch)"
            await confirm(ctx, f"Force-push {branch} to {remote}, replacing {replaced}?")
        return await changing.sync(
            git,
            "push",
            remote,
            branch,
            lease=lease,
            set_upstream=set_upstream,
            tick=progress(ctx),
        )
