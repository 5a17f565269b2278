"""What the read-only tools do: status, log, branches, blame.

Each takes a `Git` (one jailed repository) and checked arguments, and returns a typed
value. Logs never show signatures. Diffs are read in pages.py, searches in searching.py.
"""

import secrets
from collections.abc import Sequence

from typing_extensions import TypedDict

from . import merging, parse, reach, rebasing
from .errors import GitError
from .process import Tick
from .repo import Git, plain


class Log(TypedDict):
    """Commits, newest first, and where the next page starts."""

    commits: list[parse.Commit]
    next_skip: int | None


class Reflog(TypedDict):
    """Where a ref has been, newest first, and where the next page starts."""

    ref: str
    entries: list[parse.ReflogEntry]
    next_skip: int | None


class Branches(TypedDict):
    """Branch names, and the one checked out (None: detached, none, or not among them)."""

    branches: list[str]
    current: str | None
    truncated: bool  # more than MAX_BRANCHES, or past the output cap: the first ones only


class BlameLine(TypedDict):
    """One line of a file and the commit that last changed it."""

    line: int
    commit: str
    author: str
    author_time: int
    summary: str
    text: str


class Blame(TypedDict):
    """The lines of a file with their commits (`truncated`: the output cap cut them short)."""

    path: str
    lines: list[BlameLine]
    truncated: bool


async def status(git: Git) -> parse.Status:
    """Return the work tree's status (branch, upstream, staged, unstaged, ...)."""
    args = ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all"]
    result = await git.run([*args, "--ignore-submodules=all"])  # see pages.DIFF_OPTIONS
    found = parse.status(result.stdout, truncated=result.truncated)
    found["rebasing"] = rebasing.under_way(git.repo.git_dir)
    found["in_progress"] = merging.in_progress(git)
    return found


async def log(
    git: Git,
    *,
    max_count: int = 10,
    skip: int = 0,
    start_timestamp: str | None = None,
    end_timestamp: str | None = None,
    author: str | None = None,
    grep: str | None = None,
    revision_range: str | None = None,
    all_branches: bool = False,
    first_parent: bool = False,
    paths: Sequence[str] | None = None,
    follow: bool = False,
    stat: bool = False,
    tick: Tick | None = None,
) -> Log:
    """Return commits, newest first (one more is read to know whether a next page exists).

    `follow`: the history of one file (`paths` names it) across moves; `stat`: the files
    each commit changed, with lines added and deleted; `all_branches`: the commits of
    every branch and tag (local and remote), not HEAD's alone; `first_parent`: a merge's
    first parent only (the mainline).

    Raises:
        GitError: `follow` without exactly one path, a bad revision range or one given
            with `all_branches`, or git failed.
    """
    args = [
        "log",
        "--no-show-signature",
        "--no-color",
        f"--format={parse.log_format(token := secrets.token_hex(8))}",
        f"--max-count={max_count + 1}",
        f"--skip={skip}",
    ]
    if follow:
        if len(paths or ()) != 1:
            raise GitError("follow follows one file: give exactly one path in paths.")
        args.append("--follow")
    if stat:
        args += ["--numstat", "-z"]
    if start_timestamp is not None:
        args.append(f"--since={plain(start_timestamp, 'start_timestamp')}")
    if end_timestamp is not None:
        args.append(f"--until={plain(end_timestamp, 'end_timestamp')}")
    if author is not None:
        args.append(f"--author={plain(author, 'author')}")
    if grep is not None:
        args += ["--fixed-strings", f"--grep={plain(grep, 'grep')}"]
    if first_parent:
        args.append("--first-parent")
    args += await _revisions(git, revision_range, all_branches=all_branches)
    args += ["--", *git.paths(paths)[1:]]
    result = await git.run(args, on_output=tick)
    read = parse.commits(result.stdout, token, stat=stat)  # a record cut by the cap is left out
    if stat and result.truncated:
        read = read[:-1]  # its files may be cut short
    if result.truncated and not read:  # paging on would ask for the same commit again
        raise GitError(
            f"The commit after the first {skip} is larger than the output cap: skip past it"
            f" (skip={skip + 1}) or narrow the log (paths, a revision range)."
        )
    found = read[:max_count]
    more = result.truncated or len(read) > max_count
    return Log(commits=found, next_skip=skip + len(found) if more else None)


async def _revisions(git: Git, revision_range: str | None, *, all_branches: bool) -> list[str]:
    """Return the arguments that choose a log's commits (after its options).

    Raises:
        GitError: a bad revision range, or one given with `all_branches`.
    """
    if not all_branches:
        return ["--end-of-options", *await _range(git, revision_range)]
    if revision_range is not None:
        raise GitError("all_branches takes every branch: give no revision_range with it.")
    return ["--branches", "--tags", "--remotes", "--end-of-options"]


async def _range(git: Git, revision_range: str | None) -> list[str]:
    """Return the revisions of `A..B`, `A...B` or `A`, each checked (default: HEAD)."""
    if revision_range is None:
        return []
    for dots in ("...", ".."):
        if dots in revision_range:
            left, right = revision_range.split(dots, 1)
            checked = [
                await git.revision(side or "HEAD", what="revision") for side in (left, right)
            ]
            return [f"{checked[0]}{dots}{checked[1]}"]
    return [await git.revision(revision_range)]


async def reflog(git: Git, ref: str = "HEAD", *, max_count: int = 20, skip: int = 0) -> Reflog:
    """Return the commits `ref` pointed at, newest first, as its reflog records them.

    Raises:
        GitError: `ref` is not a plain value or names no ref git knows.
    """
    token = secrets.token_hex(8)
    format_ = parse.log_format(token, parse.REFLOG_FIELDS)
    args = ["log", "--walk-reflogs", "--no-show-signature", "--no-color", f"--format={format_}"]
    args += [f"--max-count={max_count + 1}", f"--skip={skip}"]
    result = await git.run([*args, "--end-of-options", plain(ref, "ref"), "--"])
    read = parse.reflog(result.stdout, token)
    found = read[:max_count]
    more = result.truncated or len(read) > max_count
    return Reflog(ref=ref, entries=found, next_skip=skip + len(found) if more else None)


async def branches(
    git: Git,
    branch_type: str = "local",
    contains: str | None = None,
    not_contains: str | None = None,
) -> Branches:
    """Return branch names (local, remote or all), filtered by the commits they contain."""
    args = ["for-each-ref", f"--count={MAX_BRANCHES + 1}", "--format=%(refname:short)%00%(HEAD)"]
    if contains is not None:
        args.append(f"--contains={await git.revision(contains, what='contains')}")
    if not_contains is not None:
        args.append(f"--no-contains={await git.revision(not_contains, what='not_contains')}")
    prefixes = {"local": ["refs/heads"], "remote": ["refs/remotes"]}
    args += prefixes.get(branch_type, ["refs/heads", "refs/remotes"])
    result = await git.run(args)
    lines = result.text.split("\n")  # not splitlines: a name may hold U+2028
    if result.truncated:
        lines.pop()  # the line the cap cut
    found = [line.partition("\x00") for line in lines if line]
    current = next((name for name, _, head in found if head == "*"), None)
    return Branches(
        branches=[name for name, _, _ in found[:MAX_BRANCHES]],
        current=current,
        truncated=result.truncated or len(found) > MAX_BRANCHES,
    )


async def blame(
    git: Git,
    path: str,
    *,
    revision: str | None = None,
    start_line: int | None = None,
    end_line: int | None = None,
    tick: Tick | None = None,
) -> Blame:
    """Return each line of `path` with the commit that last changed it.

    Raises:
        GitError: the path or revision is refused, or `blame.ignoreRevsFile` names a file
            outside the place (git would read it, and show its first line in an error).
    """
    relative = git.path(path)
    await reach.check_ignore_revs(git)
    args = ["blame", "--porcelain", "--no-textconv"]
    if start_line is not None or end_line is not None:
        args.append(f"-L{start_line or 1},{end_line or ''}")
    if revision is not None:  # an object name: git blame 2.39 mistakes --end-of-options
        args.append(await git.revision(revision))
    result = await git.run([*args, "--", relative], on_output=tick, max_bytes=BLAME_BYTES)
    lines = _blame_lines(result.whole("\n"))
    if result.truncated and lines:
        lines.pop()  # its rows may have been cut
    return Blame(path=relative, lines=lines, truncated=result.truncated)


def _blame_lines(text: str) -> list[BlameLine]:
    lines: list[BlameLine] = []
    seen: dict[str, tuple[str, int, str]] = {}
    current: dict[str, str] = {}
    commit, number = "", 0
    for row in text.split("\n"):
        if row.startswith("\t"):
            author, when, summary = seen.setdefault(
                commit,
                (
                    current.get("author", ""),
                    int(current.get("author-time", "0")),
                    current.get("summary", ""),
                ),
            )
            lines.append(
                BlameLine(
                    line=number,
                    commit=commit,
                    author=author,
                    author_time=when,
                    summary=summary,
                    text=row[1:],
                )
            )
            current = {}
        elif len(row) >= 40 and " " in row and all(c in "0123456789abcdef" for c in row[:40]):
            parts = row.split(" ")
            commit, number = parts[0], int(parts[2])
        elif row:
            key, _, value = row.partition(" ")
            current[key] = value
    return lines


MAX_BRANCHES = 10_000
"""Branches listed at most (200,000 made a 17 MB answer); the first ones, by name."""
BLAME_BYTES = 1024 * 1024
"""Blame output read at once (some 15,000 lines): a 1.5-million-line file made a 23 MB
answer; the rest is a start_line away."""


async def merge_base(git: Git, a: str, b: str) -> str | None:
    """Return the best common ancestor of `a` and `b`, or None if they have none."""
    left = await git.revision(a, what="a")
    right = await git.revision(b, what="b")
    result = await git.run(["merge-base", "--end-of-options", left, right], check=False)
    return result.text.strip() or None
