"""mcp-git's resources, their subscriptions, and completion of repositories, refs and paths.

A repository is named in a URI by its path, percent-encoded into one segment
(`git://%2Fsrc%2Fapp/status`). Subscriptions notify only when what git reports differs:
a commit, checkout, stage or branch made by another process, or (status) an edit to a
tracked or untracked file; an edit to an ignored file changes no status, so it tells
nobody. The work tree is followed by file events, except the directories git ignores;
the git directory (HEAD, the index, refs, packed-refs) by a cheap poll of its files'
stat (`gitfiles`); git is asked again only when those change.
"""

import hashlib
import os
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio

from mcpkit import Changed, Context, Resource, Server
from mcpkit.jsonrpc import encode
from mcpkit.work import run

from . import pages, reading, searching
from .access import Repositories
from .errors import GitError
from .gitfiles import GitFiles
from .repo import Git

STATUS = "git://{repo}/status"
LOG = "git://{repo}/log"
BRANCHES = "git://{repo}/branches"
DIFF = "git://{repo}/diff/{target}"
FILE = "git://{repo}/file/{ref}/{+path}"
LOG_LENGTH = 50
MAX_COMPLETIONS = 100
POLL_INTERVAL = 0.5
"""Seconds between two looks at a subscribed repository's git files."""
IGNORE_FILES = (".gitignore",)
"""Files in the work tree whose change may change what git ignores: the tree is walked again."""
CHECK_AT_ONCE = 1000
"""Directories one `git check-ignore` is asked about (its arguments stay well within limits)."""

Reader = Callable[[Git], Awaitable[str]]


def uri(template: str, repo: str) -> str:
    """Return the URI of `template` for the repository at `repo`."""
    return template.replace("{repo}", quote(repo, safe=""))


async def status_text(git: Git) -> str:
    """The status resource: the structured status as JSON."""
    return encode(dict(await reading.status(git))).decode()


async def log_text(git: Git) -> str:
    """The log resource: the last commits as JSON."""
    return encode(dict(await reading.log(git, max_count=LOG_LENGTH))).decode()


async def branches_text(git: Git) -> str:
    """The branches resource: local and remote branches, and the current one, as JSON."""
    return encode(dict(await reading.branches(git, "all"))).decode()


async def diff_text(git: Git, target: str) -> str:
    """A diff: `unstaged`, `staged`, or the work tree against a revision."""
    if target == "unstaged":
        page = await pages.diff(git)
    elif target == "staged":
        page = await pages.diff(git, staged=True)
    else:
        page = await pages.diff(git, target=target)
    if page["truncated"]:  # the diff tools page on from there
        return page["text"] + f"\n[cut: the diff tools continue with offset={page['next_offset']}]"
    return page["text"]


def register_resources(app: Server) -> None:
    """Register the templates, the per-repository listing, the watches and completions."""

    @app.resource(STATUS, name="status", title="Status", mime_type="application/json")
    async def status(ctx: Context, repos: Repositories, repo: str) -> str:
        """The work tree's status, as git_status returns it."""
        return await status_text(await repos.open(ctx, repo))

    @app.resource(LOG, name="log", title="Log", mime_type="application/json")
    async def log(ctx: Context, repos: Repositories, repo: str) -> str:
        """The last 50 commits of HEAD."""
        return await log_text(await repos.open(ctx, repo))

    @app.resource(BRANCHES, name="branches", title="Branches", mime_type="application/json")
    async def branches(ctx: Context, repos: Repositories, repo: str) -> str:
        """Local and remote branches, and the current one."""
        return await branches_text(await repos.open(ctx, repo))

    @app.resource(DIFF, name="diff", title="Diff", mime_type="text/x-diff")
    async def diff(ctx: Context, repos: Repositories, repo: str, target: str) -> str:
        """Changes: `unstaged`, `staged`, or the work tree against a revision."""
        return await diff_text(await repos.open(ctx, repo), target)

    @app.resource(FILE, name="file", title="File at a revision")
    async def file(ctx: Context, repos: Repositories, repo: str, ref: str, path: str) -> bytes:
        """A file's content at a revision (bytes as git stores them)."""
        git = await repos.open(ctx, repo)
        commit = await git.revision(ref)
        blob = await git.revision(f"{commit}:{git.tree_path(path)}", what="file", peel="")
        content = await git.run(["cat-file", "blob", blob])
        if content.truncated:  # part of a file would pass for all of it
            raise GitError(f"{path} at {ref} is over the output cap: read it with git_show")
        return content.stdout

    @app.list_resources
    async def each_repository(ctx: Context, repos: Repositories) -> list[Resource]:
        """Status, log, branches and the unstaged diff of each repository allowed."""
        listed: list[Resource] = []
        for path in (await repos.list(ctx)).repositories:
            name = Path(path).name
            for template, what in ((STATUS, "status"), (LOG, "log"), (BRANCHES, "branches")):
                listed.append(Resource(uri=uri(template, path), name=f"{name} {what}"))
            unstaged = uri(DIFF, path).replace("{target}", "unstaged")
            listed.append(Resource(uri=unstaged, name=f"{name} unstaged diff"))
        return listed

    register_watches(app)
    register_completions(app)


def register_watches(app: Server) -> None:
    """Subscriptions: each follows its repository's files while someone is subscribed."""

    async def admit(ctx: Context, repos: Repositories, repo: str) -> None:
        """Refuse a subscriber a repository outside its jail."""
        await repos.open(ctx, repo)

    app.watch(STATUS, admit=admit)(watcher(status_text, work_tree=True))
    app.watch(LOG, admit=admit)(watcher(log_text, work_tree=False))
    app.watch(BRANCHES, admit=admit)(watcher(branches_text, work_tree=False))


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def watcher(read: Reader, *, work_tree: bool) -> Callable[..., Coroutine[Any, Any, None]]:
    """The watch of what `read` returns; with `work_tree`, edits in the work tree count too."""

    async def watch(repos: Repositories, repo: str, changed: Changed) -> None:
        git = await repos.open_unbound(repo)
        # What was read is kept as its digest: a log of one 7 MB message, watched under 256
        # spellings of the URI, held 1.8 GB.
        files = GitFiles(git)
        seen: list[Any] = [await run(files.stamps), _digest(await read(git)), 0]

        async def differs() -> bool:
            nonlocal git
            try:
                # Opened again at every look (the jail remembers it until its files
                # change): a driver armed since the subscription is disarmed too.
                git = await repos.open_unbound(repo)
                now = _digest(await read(git))
            except GitError:
                return False  # a moment mid-commit (a lock), say: the next look tells
            if now == seen[1]:
                return False
            seen[1] = now
            return True

        async def left_out(directories: Sequence[Path]) -> list[Path]:
            return await ignored(git, directories)

        work, refs = changed.parts(2) if work_tree else (None, changed)

        async def changes() -> int:
            """A count of the changes seen through the git files (each told once)."""
            stamps = await run(files.stamps)
            if stamps != seen[0]:
                seen[0] = stamps
                if work is not None:
                    # The index or info/exclude may have changed what git ignores.
                    await work.walk_again()
                if await differs():
                    seen[2] += 1
            return seen[2]

        async with anyio.create_task_group() as tasks:
            if work is not None:
                follow = partial(
                    work.follow_files,
                    [Path(git.repo.path)],
                    recursive=True,
                    when=differs,
                    skip=left_out,
                    rules=IGNORE_FILES,
                )
                tasks.start_soon(follow)
            tasks.start_soon(partial(refs.poll, changes, interval=POLL_INTERVAL))

    return watch


async def ignored(git: Git, directories: Sequence[Path]) -> list[Path]:
    """Return what the work tree's watch leaves out among `directories`.

    That is the git directory, other repositories and the directories git ignores:
    nothing there changes the status (submodules are left out of it), and a `node_modules`
    alone can hold more directories than a tree may watch. A name that git quotes in its
    answer (a quote, a backslash, a control or non-ASCII character in it) matches none
    asked, so such a directory is watched: at worst, for nothing.
    """
    # Compared as text: Path's parents and relative_to took most of a walk's time.
    top, git_dir = os.path.join(git.repo.path, ""), Path(git.repo.git_dir)
    inside = [d for d in directories if str(d).startswith(top) and d != git_dir]
    # Asked about a path in a submodule, check-ignore fails the whole question.
    repositories = await run(holding_git, inside)
    left_out = [d for d in directories if d == git_dir] + repositories
    # "./" first: check-ignore reads pathspec magic, and a directory named ":(top)x" would
    # be asked as x, one named ":(glob)x" would fail the whole question.
    others = set(inside).difference(repositories)
    names = {f"./{str(d)[len(top) :]}": d for d in others}
    asked = sorted(names)
    for start in range(0, len(asked), CHECK_AT_ONCE):
        chunk = asked[start : start + CHECK_AT_ONCE]
        try:
            # Exit status 1 says none is ignored; a tracked file in a directory keeps it.
            # It refuses the literal magic that every other command here is given.
            found = await git.run(["check-ignore", "--", *chunk], check=False, literal=False)
        except GitError:
            continue  # watched, at worst for nothing
        left_out += [names[line] for line in found.text.splitlines() if line in names]
    return left_out


def holding_git(directories: Sequence[Path]) -> list[Path]:
    """Return those of `directories` that hold a `.git` (a repository of their own)."""
    return [d for d in directories if os.path.lexists(d / ".git")]


def register_completions(app: Server) -> None:
    """Complete repositories in every template, refs and paths in the file template."""
    for template in (STATUS, LOG, BRANCHES, DIFF, FILE):
        app.complete(resource=template, argument="repo")(complete_repository)
    app.complete(resource=FILE, argument="ref")(complete_ref)
    app.complete(resource=DIFF, argument="target")(complete_ref)
    app.complete(resource=FILE, argument="path")(complete_path)


async def complete_repository(ctx: Context, repos: Repositories, value: str) -> list[str]:
    """The repositories the client may use whose path starts with `value`."""
    return [path for path in (await repos.list(ctx)).repositories if path.startswith(value)]


async def complete_ref(
    ctx: Context, repos: Repositories, value: str, arguments: Mapping[str, str]
) -> list[str]:
    """Branch and tag names of the chosen repository that start with `value`."""
    git = await _chosen(ctx, repos, arguments)
    if git is None:
        return []
    listed = await git.run(["for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags"])
    names = ["HEAD", *listed.text.split()]
    return [name for name in names if name.startswith(value)][:MAX_COMPLETIONS]


async def complete_path(
    ctx: Context, repos: Repositories, value: str, arguments: Mapping[str, str]
) -> list[str]:
    """Paths tracked at the chosen ref (default HEAD) that start with `value`."""
    git = await _chosen(ctx, repos, arguments)
    if git is None:
        return []
    try:
        files, _ = await searching.ls_files(
            git, revision=arguments.get("ref") or "HEAD", max_files=100_000
        )
    except GitError:
        return []
    return [name for name in files if name.startswith(value)][:MAX_COMPLETIONS]


async def _chosen(ctx: Context, repos: Repositories, arguments: Mapping[str, str]) -> Git | None:
    """The repository chosen so far, or None if none (or one not allowed) is."""
    repo = arguments.get("repo") or arguments.get("repo_path")  # a template's, a prompt's
    if not repo:
        return None
    try:
        return await repos.open(ctx, repo)
    except GitError:
        return None
