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
    return await git.object_at("HEAD")


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


async def commit(
    git: Git,
    message: str,
    *,
    replacing: str | None = None,
    allow_empty: bool = False,
    files: Sequence[str] | None = None,
) -> Done:
    """Commit the index with `message`; `replacing`: amend the last commit, still that one.

    `files`: commit only these (tracked) files, as they are in the work tree; what else is
    staged stays staged (`git commit --only`).

    Raises:
        GitError: the message is empty, HEAD is no longer `replacing`, or a file is not
            one git knows.
    """
    if not message.strip():
        raise GitError("message must not be empty")
    args = ["commit", "--no-edit", "--cleanup=verbatim", f"--message={message}"]
    if replacing is not None:
        await still(git, "HEAD", replacing)
        args.append("--amend")
    if allow_empty:
        args.append("--allow-empty")
    if files:
        args += ["--only", *git.paths(files)]
    result = await git.run(args, finish=True)
    return await done(git, result.text.split("\n")[0] if result.text else "Committed")


async def reset(
    git: Git,
    *,
    mode: str = "mixed",
    target: str = "HEAD",
    paths: Sequence[str] | None = None,
    confirmed_at: str | None = None,
) -> Done:
    """Reset: unstage (`mixed`, the default), move HEAD (`soft`), or discard changes (`hard`).

    `confirmed_at`: the commit HEAD was at when the user confirmed; it must still be.

    Raises:
        GitError: HEAD moved since the user confirmed, or the target names no commit.
    """
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
    if confirmed_at is not None:
        await still(git, "HEAD", confirmed_at)
    await git.run(["reset", "--quiet", f"--{mode}", commit_name])  # an object name
    return await done(git, f"Reset ({mode}) to {commit_name[:12]}")


async def create_branch(git: Git, branch_name: str, base_branch: str | None = None) -> Done:
    """Create `branch_name` at `base_branch` (default: HEAD) without checking it out."""
    name = await git.ref_name(branch_name)
    base = await git.revision(base_branch or "HEAD", what="base_branch")
    await git.run(["branch", "--no-track", "--end-of-options", name, base])
    return await done(git, f"Created branch '{name}' at {base[:12]}")


async def branch_at(git: Git, branch_name: str) -> tuple[str, str]:
    """Return a local branch's checked name and the commit it points at.

    Raises:
        GitError: the name is not a branch name, or there is no such local branch.
    """
    name = await git.ref_name(branch_name)
    return name, await git.revision(f"refs/heads/{name}", what="branch")


async def delete_branch(git: Git, branch_name: str, *, force: bool, deleting: str) -> Done:
    """Delete a local branch that still points at `deleting`, the commit the question named.

    Unless `force`, git deletes only a branch whose commits its upstream (or, without one,
    HEAD) has: `git branch -d`, which also forgets the branch's settings.

    Raises:
        GitError: no such branch, it moved since the question, it is checked out, or
            (without `force`) its commits are merged nowhere.
    """
    name, _ = await branch_at(git, branch_name)
    await still(git, f"refs/heads/{name}", deleting)
    await git.run(["branch", "--delete", *(["--force"] if force else []), "--end-of-options", name])
    return await done(git, f"Deleted branch '{name}' (was {deleting[:12]})")


async def rename_branch(git: Git, branch_name: str, new_name: str) -> Done:
    """Rename a local branch; its settings (upstream) and reflog go with it.

    Raises:
        GitError: no such branch, or the new name is not a valid name or is a branch's.
    """
    name, at = await branch_at(git, branch_name)
    new = await git.ref_name(new_name, what="new_name")
    await git.run(["branch", "--move", "--end-of-options", name, new])  # never --force
    return await done(git, f"Renamed branch '{name}' to '{new}' (at {at[:12]})")


SWITCH = ("switch", "--quiet", "--no-guess", "--no-overwrite-ignore")
"""Quiet: its report of local changes would run git in each submodule, which
`submodule.<name>.ignore` can ask for whatever `diff.ignoreSubmodules` says. An ignored
file the other branch tracks stops the switch: it is a local file (`.env`), not litter."""


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
    dropping: str | None = None,
) -> Done:
    """Stash changes (`push`), bring them back (`pop`, `apply`), `drop`, `list` or `show`.

    `dropping`: the commit of the entry a drop was confirmed for, which it must still be.

    Raises:
        GitError: git failed, or the entry is no longer `dropping`.
    """
    if dropping is not None:
        await still(git, stash_entry(ref), dropping)
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
    result = await git.run(args, literal=False, finish=True)
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


async def stash_named(git: Git, ref: str | None) -> tuple[str, str]:
    """Return a stash entry as a question names it (its ref, commit and message), and its commit.

    Raises:
        GitError: there is no such entry.
    """
    entry = stash_entry(ref)
    args = ["log", "-1", "--no-walk", "--format=%H %h: %s", "--end-of-options", entry]
    shown = await git.run(args, check=False)
    if shown.status != 0:
        raise GitError(f"There is no stash entry {entry}")
    commit_name, _, named = shown.text.strip().partition(" ")
    return f"{entry} ({named})", commit_name


async def still(git: Git, ref: str, expected: str) -> None:
    """Raise GitError unless `ref` still names `expected`, the object a question named.

    What the user confirmed is acted on, not what the ref names once they answered: a
    commit made meanwhile was amended away, a stash pushed meanwhile dropped.
    """
    if await git.object_at(ref) != expected:
        raise GitError(
            f"{ref} is no longer {expected[:12]}, which the question named: nothing changed."
            " Ask again."
        )


async def tag(
    git: Git,
    action: str,
    *,
    name: str | None = None,
    message: str | None = None,
    target: str | None = None,
    deleting: str | None = None,
) -> Done:
    """List tags, create one (annotated when `message` is given) at `target`, or delete one.

    `deleting`: the object the tag pointed at when its deletion was confirmed: a tag that
    points elsewhere by then is kept.

    Raises:
        GitError: git failed, or the tag no longer points at `deleting`.
    """
    if action == "list":
        result = await git.run(["tag", "--list"])
        return await done(git, result.text)
    if name is None:
        raise GitError(f"tag {action} needs a name")
    checked = await git.ref_name(name, what="tag name")
    if action == "delete":
        tagged = await git.revision(f"refs/tags/{checked}", what="tag", peel="")
        if deleting is not None:
            await still(git, f"refs/tags/{checked}", deleting)
        # Only if it points there still when git takes the lock.
        await git.run(["update-ref", "-d", f"refs/tags/{checked}", tagged])
        return await done(git, f"Deleted tag '{checked}' (was {tagged[:12]})")
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
    lease: str | None = None,
    set_upstream: bool = False,
    tick: Tick | None = None,
) -> Done:
    """Fetch, pull (fast-forward only) or push; a push forces only with a lease.

    `lease`: force the push, if the remote's branch is still this commit ("": if it has
    none), as `remotes.last_fetched` found it.

    Raises:
        GitError: the remote or branch is refused (see `remotes`), or git failed.
    """
    local = await remotes.checked_remote(git, remote)
    program = remotes.pack_program(git, action, local)
    if action == "push":
        name = await remotes.pushed_branch(git, branch)
        refs = [f"refs/heads/{name}:refs/heads/{name}"]
        args = ["push", f"--receive-pack={program}"]
        if lease is not None:
            args.append(f"--force-with-lease=refs/heads/{name}:{lease}")
        if set_upstream:
            args.append("--set-upstream")
    else:
        await remotes.check_fetch_settings(git, remote)
        refs = await remotes.checked_branch(git, branch)
        if action == "pull" and not refs:
            await check_tracks(git, remote)
        # Never prunes: a repository's pruneTags would delete the local tags the remote lacks.
        args = ["fetch", f"--upload-pack={program}", "--no-recurse-submodules", "--no-prune"]
        args.append("--write-fetch-head")  # what a pull merges, whatever fetch.writeFetchHEAD
    result = await git.run([*args, "--end-of-options", remote, *refs], on_output=tick, finish=True)
    if action == "pull":
        result = await git.run([*FAST_FORWARD, "FETCH_HEAD"], finish=True)
    return await done(git, result.error or result.text or f"{action} {remote}: done")


FAST_FORWARD = ("merge", "--ff-only", "--no-overwrite-ignore", "--no-autostash", "--no-edit")
"""How a pull merges what it fetched: as `git pull --ff-only` would, except that an ignored
file in the way stops it rather than being overwritten (which `git pull` cannot ask)."""


async def check_tracks(git: Git, remote: str) -> None:
    """Raise GitError unless the current branch tracks a branch of `remote`.

    That branch is what a pull that names none merges; with none, git merges nothing
    and says the branch is up to date.
    """
    current = await git.run(["symbolic-ref", "--quiet", "HEAD"], check=False)
    ref = current.text.strip()
    if ref:
        tracked = await git.run(["for-each-ref", "--format=%(upstream:remotename)", ref])
        if tracked.text.strip() == remote:
            return
    raise GitError(f"The current branch tracks no branch of {remote}: name the branch to pull")
