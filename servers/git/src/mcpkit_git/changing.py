"""What the tools that change a repository do: stage, commit, branch, restore, stash, tag, sync.

Each takes a `Git` and checked arguments and returns a short typed result. Commits go
through porcelain `git commit` (never an index API), so the repository's hooks run only
when the operator allowed them. Pushing never forces except with a lease.
"""

from collections.abc import Sequence

from typing_extensions import TypedDict

from . import remotes
from .errors import GitError
from .process import Tick
from .repo import Git, plain


class Done(TypedDict):
    """What a change did, in git's words, and the commit HEAD points at afterwards."""

    message: str
    head: str | None


async def head(git: Git) -> str | None:
    """Return the commit HEAD points at, or None before the first commit."""
    result = await git.run(["rev-parse", "--verify", "--quiet", "HEAD"], check=False)
    return result.text.strip() or None


async def done(git: Git, message: str) -> Done:
    """Return a `Done` with `message` and the current HEAD."""
    return Done(message=message.strip(), head=await head(git))


async def add(git: Git, files: Sequence[str], *, update: bool = False) -> Done:
    """Stage `files` (`["."]`: everything; `update`: only tracked files)."""
    if list(files) == ["."]:
        args = ["add", "--all" if not update else "--update", "--", "."]
    else:
        if not files:
            raise GitError("files must name at least one path (or ['.'] for everything)")
        args = ["add", *(["--update"] if update else []), *git.paths(files)]
    await git.run(args)
    return await done(git, f"Staged {', '.join(files)}")


async def commit(git: Git, message: str, *, amend: bool = False, allow_empty: bool = False) -> Done:
    """Commit the index with `message` (`amend`: replace the last commit)."""
    if not message.strip():
        raise GitError("message must not be empty")
    args = ["commit", "--no-edit", "--cleanup=verbatim", f"--message={message}"]
    if amend:
        args.append("--amend")
    if allow_empty:
        args.append("--allow-empty")
    result = await git.run(args)
    return await done(git, result.text.split("\n")[0] if result.text else "Committed")


async def reset(
    git: Git,
    *,
    mode: str = "mixed",
    target: str = "HEAD",
    paths: Sequence[str] | None = None,
) -> Done:
    """Reset: unstage (`mixed`, the default), move HEAD (`soft`), or discard changes (`hard`)."""
    if paths:
        if mode != "mixed":
            raise GitError("paths can only be unstaged (mode 'mixed')")
        commit_name = await git.revision(target, what="target")
        await git.run(["reset", "--quiet", commit_name, *git.paths(paths)])
        return await done(git, f"Unstaged {', '.join(paths)}")
    if await head(git) is None:
        await git.run(["rm", "--cached", "-r", "--quiet", "--ignore-unmatch", "--", "."])
        return await done(git, "Unstaged everything")
    commit_name = await git.revision(target, what="target")
    await git.run(["reset", "--quiet", f"--{mode}", commit_name])  # an object name
    return await done(git, f"Reset ({mode}) to {commit_name[:12]}")


async def create_branch(git: Git, branch_name: str, base_branch: str | None = None) -> Done:
    """Create `branch_name` at `base_branch` (default: HEAD) without checking it out."""
    name = await git.ref_name(branch_name)
    base = await git.revision(base_branch or "HEAD", what="base_branch")
    await git.run(["branch", "--no-track", "--end-of-options", name, base])
    return await done(git, f"Created branch '{name}' at {base[:12]}")


SWITCH = ("switch", "--quiet", "--no-guess")
"""Quiet: its report of local changes would run git in each submodule, which
`submodule.<name>.ignore` can ask for whatever `diff.ignoreSubmodules` says."""


async def checkout(
    git: Git, branch_name: str, *, create: bool = False, start_point: str | None = None
) -> Done:
    """Switch to `branch_name` (`create`: a new branch at `start_point`, default HEAD)."""
    if create:
        name = await git.ref_name(branch_name)
        base = await git.revision(start_point or "HEAD", what="start_point")
        await git.run([*SWITCH, "--create", name, base])
        return await done(git, f"Switched to a new branch '{name}'")
    plain(branch_name, "branch_name")
    exists = await git.run(
        ["show-ref", "--verify", "--quiet", f"refs/heads/{branch_name}"], check=False
    )
    if exists.status == 0:
        await git.run([*SWITCH, branch_name])
        return await done(git, f"Switched to branch '{branch_name}'")
    commit_name = await git.revision(branch_name, what="branch_name")
    await git.run([*SWITCH, "--detach", commit_name])
    return await done(git, f"HEAD is now detached at {commit_name[:12]}")


async def restore(
    git: Git, paths: Sequence[str], *, staged: bool = False, source: str | None = None
) -> Done:
    """Restore `paths` in the work tree (or the index, `staged`) from the index or `source`."""
    if not paths:
        raise GitError("paths must name at least one path")
    args = ["restore"]
    args.append("--staged" if staged else "--worktree")
    if source is not None:
        args.append(f"--source={await git.revision(source, what='source')}")
    await git.run([*args, *git.paths(paths)])
    return await done(git, f"Restored {', '.join(paths)}")


async def stash(
    git: Git,
    action: str,
    *,
    message: str | None = None,
    include_untracked: bool = False,
    ref: str | None = None,
) -> Done:
    """Stash changes (`push`), bring them back (`pop`, `apply`), `drop`, `list` or `show`."""
    entry = [stash_entry(ref)] if ref is not None else []
    if action == "push":
        args = ["stash", "push"]
        if include_untracked:
            args.append("--include-untracked")
        if message is not None:
            args.append(f"--message={plain(message, 'message')}")
    elif action == "list":
        args = ["stash", "list"]
    elif action == "show":
        args = ["stash", "show", "--stat", "--no-ext-diff", "--no-textconv", *entry]
    else:
        args = ["stash", action, *entry]
    # No literal pathspecs: stash cleans with a pathspec of its own (and takes none of ours).
    result = await git.run(args, literal=False)
    return await done(git, result.text or f"stash {action}: done")


def stash_entry(ref: str | None) -> str:
    """Return the stash entry `ref` names (default: the latest), as git is given it.

    Raises:
        GitError: it is not a stash entry such as stash@{0}.
    """
    number = (ref or "stash@{0}").removeprefix("stash@{").removesuffix("}")
    if not (number.isascii() and number.isdecimal() and len(number) < 10):
        raise GitError("ref must be a stash entry such as stash@{0}")
    return f"stash@{{{int(number)}}}"


async def stash_named(git: Git, ref: str | None) -> str:
    """Return a stash entry as a question names it: its ref, commit and message.

    Raises:
        GitError: there is no such entry.
    """
    entry = stash_entry(ref)
    args = ["log", "-1", "--no-walk", "--format=%h: %s", "--end-of-options", entry]
    shown = await git.run(args, check=False)
    if shown.status != 0:
        raise GitError(f"There is no stash entry {entry}")
    return f"{entry} ({shown.text.strip()})"


async def tag(
    git: Git,
    action: str,
    *,
    name: str | None = None,
    message: str | None = None,
    target: str | None = None,
) -> Done:
    """List tags, create one (annotated when `message` is given) at `target`, or delete one."""
    if action == "list":
        result = await git.run(["tag", "--list"])
        return await done(git, result.text)
    if name is None:
        raise GitError(f"tag {action} needs a name")
    checked = await git.ref_name(name, what="tag name")
    if action == "delete":
        await git.revision(f"refs/tags/{checked}", what="tag", peel="")
        await git.run(["tag", "--delete", checked])
        return await done(git, f"Deleted tag '{checked}'")
    commit_name = await git.revision(target or "HEAD", what="target")
    args = ["tag"]
    if message is not None:
        args += ["--annotate", f"--message={message}"]
    await git.run([*args, "--end-of-options", checked, commit_name])
    return await done(git, f"Created tag '{checked}' at {commit_name[:12]}")


async def sync(
    git: Git,
    action: str,
    remote: str = "origin",
    branch: str | None = None,
    *,
    force_with_lease: bool = False,
    set_upstream: bool = False,
    tick: Tick | None = None,
) -> Done:
    """Fetch, pull (fast-forward only) or push; a push forces only with a lease.

    Raises:
        GitError: the remote or branch is refused (see `remotes`), or git failed.
    """
    local = await remotes.checked_remote(git, remote)
    if action == "push":
        refs = [await remotes.push_refspec(git, branch)]
    else:
        await remotes.check_fetch_settings(git, remote)
        refs = await remotes.checked_branch(git, branch)
    program = remotes.pack_program(git, action, local)
    args = [action]
    if action == "push":
        args.append(f"--receive-pack={program}")
    else:
        # Never prunes: a repository's pruneTags would delete the local tags the remote lacks.
        args += [f"--upload-pack={program}", "--no-recurse-submodules", "--no-prune"]
    if action == "pull":
        args.append("--ff-only")
    if action == "push":
        if force_with_lease:
            args.append("--force-with-lease")
        if set_upstream:
            args.append("--set-upstream")
    result = await git.run([*args, "--end-of-options", remote, *refs], on_output=tick)
    return await done(git, result.error or result.text or f"{action} {remote}: done")
