"""What the search tools do: the lines of tracked files that match (git grep), and the files.

Paths are literal pathspecs, as everywhere; a glob is matched here, on whole names
(`fnmatch`: `*` crosses folders), never by git: a grep's glob chooses files by name first,
and git is given those names.
"""

from collections.abc import Sequence
from fnmatch import fnmatchcase

from typing_extensions import TypedDict

from . import parse, reach
from .errors import GitError
from .process import Tick
from .repo import Git


class Match(TypedDict):
    """A line that matched a grep."""

    path: str
    line: int
    text: str


class Matches(TypedDict):
    """Lines that matched, and whether there were more than asked for."""

    matches: list[Match]
    truncated: bool


FILE_NAME_BYTES = 1024
"""Output read for each file name asked for (most are far shorter)."""
GREP_BYTES_AT_FIRST = 64 * 1024
GREP_BYTES_PER_RESULT = 2048
"""Output read for each result asked: git grep goes on to the last match, and the 8 MiB
that a million short matches fill took 270 MiB to read as matches, for max_results 1."""
GLOB_FILES = 10_000
"""Files a grep's glob may choose: git is given each by name, on its command line."""
GLOB_NAME_BYTES = 1024 * 1024
"""Bytes their names may take together: a command line holds some 2 MiB on Linux."""


async def grep(
    git: Git,
    pattern: str,
    *,
    revision: str | None = None,
    paths: Sequence[str] | None = None,
    glob: str | None = None,
    is_regex: bool = False,
    ignore_case: bool = False,
    max_results: int = 200,
    tick: Tick | None = None,
) -> Matches:
    """Return lines matching `pattern` in the work tree's tracked files or at `revision`.

    `paths` and `glob` narrow the files searched: those under the paths, whose whole names
    the glob matches.

    Raises:
        GitError: the pattern, a path or the revision is refused, more files match the
            glob than one search takes, or (in the work tree) a directory of the index is
            a symbolic link, which git grep would read through.
    """
    if revision is None:
        await reach.check_linked_directories(git)
    args = ["grep", "--no-color", "--no-textconv", "-n", "-z", "-I", "--full-name"]
    args.append("--extended-regexp" if is_regex else "--fixed-strings")
    if ignore_case:
        args.append("--ignore-case")
    args += ["-e", pattern]
    rev = [await git.revision(revision)] if revision is not None else []
    if glob is None:
        chosen = git.paths(paths)[1:]
    elif not (chosen := await _globbed(git, glob, revision, paths)):
        return Matches(matches=[], truncated=False)
    result = await git.run(  # the pattern follows -e; a revision is an object name
        [*args, *rev, "--", *chosen],
        on_output=tick,
        check=False,
        max_bytes=GREP_BYTES_AT_FIRST + GREP_BYTES_PER_RESULT * max_results,
    )
    if result.status < 0:  # killed: a pattern over the memory limit (process.MAX_DATA)
        raise GitError(
            f"git grep ended on signal {-result.status}, most likely at the memory limit of"
            " a git process: try a simpler pattern (fewer nested repetitions)."
        )
    if result.status not in (0, 1):
        raise GitError(result.error or "git grep failed")
    prefix = f"{rev[0]}:" if rev else ""
    matches = [
        Match(path=path.removeprefix(prefix), line=line, text=text)
        for path, line, text in parse.grep_rows(result.whole("\n"))
    ]
    truncated = len(matches) > max_results or result.truncated
    return Matches(matches=matches[:max_results], truncated=truncated)


async def _globbed(
    git: Git, glob: str, revision: str | None, paths: Sequence[str] | None
) -> list[str]:
    """Return the tracked files (at `revision`) under `paths` whose whole names `glob` matches.

    Raises:
        GitError: more match than one git command line takes.
    """
    names, more = await ls_files(
        git, revision=revision, paths=paths, pattern=glob, max_files=GLOB_FILES
    )
    if more or sum(len(name.encode()) + 1 for name in names) > GLOB_NAME_BYTES:
        raise GitError(
            f"More files match {glob!r} than one search takes ({GLOB_FILES:,} at most):"
            " narrow the glob, or give paths."
        )
    return names


async def ls_files(
    git: Git,
    *,
    revision: str | None = None,
    paths: Sequence[str] | None = None,
    pattern: str | None = None,
    max_files: int = 10_000,
) -> tuple[list[str], bool]:
    """Return tracked files (in the index, or at `revision`) and whether more were left out.

    `pattern` keeps the names it matches as a whole (`fnmatch`: `*` crosses folders); the
    paths stay literal, as everywhere. At most `max_files` are returned, and without a
    pattern no more are read: a million names would fill the output cap and memory.
    """
    checked = git.paths(paths)[1:]
    if revision is not None:  # ls-tree takes no `--`: its paths follow --end-of-options
        tree = await git.revision(revision)
        args = ["ls-tree", "-r", "-z", "--name-only", "--end-of-options", tree, *checked]
    else:
        args = ["ls-files", "-z", "--cached", "--", *checked]
    result = await git.run(args, max_bytes=None if pattern else max_files * FILE_NAME_BYTES)
    names = [name for name in result.whole("\x00").split("\x00") if name]
    if pattern is not None:
        names = [name for name in names if fnmatchcase(name, pattern)]
    return names[:max_files], result.truncated or len(names) > max_files
