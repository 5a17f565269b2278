"""What the tools that read long text do: diffs and shows, a page at a time.

Diffs never run an external diff nor a textconv (`--no-ext-diff --no-textconv`). `offset`
and `max_bytes` choose the page, `next_offset` says where the next one starts; a page cut
by bytes ends at a whole character.
"""

import codecs
from collections.abc import Sequence

from typing_extensions import TypedDict

from .errors import GitError
from .repo import Git

DIFF_OPTIONS = ("--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all")
"""Nothing the repository configures runs, nor does git in a submodule (whose configuration
is its own, and whose `submodule.<name>.ignore` beats `diff.ignoreSubmodules`)."""


class Page(TypedDict):
    """A page of git's text output."""

    text: str
    truncated: bool
    next_offset: int | None


async def page(git: Git, args: Sequence[str], offset: int, max_bytes: int) -> Page:
    """Return the page of `git args`'s output from byte `offset`, at most `max_bytes` long."""
    result = await git.run(args, max_bytes=max_bytes, skip=offset)
    return whole(result.stdout, offset, truncated=result.truncated)


async def names(git: Git, args: Sequence[str], offset: int, max_bytes: int) -> Page:
    """Return a page of the names of the files `git diff --numstat` lists, one to a line.

    Not `--name-only`, which lists a file whose stat alone changed, now that a diff never
    refreshes the index to learn that it did not (`runner.INERT_CONFIG`): numstat counts
    the lines that changed, and lists none of those files.
    """
    result = await git.run(args)
    lines = result.text.split("\n")[:-1]  # not splitlines: a name may hold U+2028
    listed = "".join(line.split("\t", 2)[-1] + "\n" for line in lines).encode()
    chunk = listed[offset : offset + max_bytes]
    return whole(chunk, offset, truncated=offset + len(chunk) < len(listed))


def whole(data: bytes, offset: int, *, truncated: bool) -> Page:
    """Return `data`, read from byte `offset`, as a page cut at a whole character."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(data, final=not truncated)
    kept = len(data) - len(decoder.getstate()[0])  # the next starts a split character
    return Page(text=text, truncated=truncated, next_offset=offset + kept if truncated else None)


async def diff(
    git: Git,
    *,
    target: str | None = None,
    source: str | None = None,
    staged: bool = False,
    context_lines: int = 3,
    paths: Sequence[str] | None = None,
    name_only: bool = False,
    stat: bool = False,
    offset: int = 0,
    max_bytes: int = 100_000,
) -> Page:
    """Return a diff: the work tree (or the index, `staged`) against `target`, or two revisions."""
    args = ["diff", *DIFF_OPTIONS]
    if staged:
        args.append("--cached")
    if name_only:  # numstat alone: a number of context lines would add the patch
        args += ["--numstat", "--no-renames"]  # see names
    else:
        args += [f"--unified={context_lines}", *(["--stat"] if stat else [])]
    revisions: list[str] = []
    if source is not None:
        revisions.append(await git.revision(source, what="source"))
    if target is not None:
        revisions.append(await git.revision(target, what="target"))
    if source is not None and target is None:
        raise GitError("source needs a target to compare with")
    args += ["--end-of-options", *revisions, "--", *git.paths(paths)[1:]]
    if name_only:
        return await names(git, args, offset, max_bytes)
    return await page(git, args, offset, max_bytes)


async def show(
    git: Git,
    revision: str,
    *,
    path: str | None = None,
    stat_only: bool = False,
    offset: int = 0,
    max_bytes: int = 100_000,
) -> Page:
    """Return a commit (header and patch), or a file's content at `revision` if `path` is given."""
    commit = await git.revision(revision)
    if path is not None:
        spec = f"{commit}:{git.tree_path(path)}"
        blob = await git.revision(spec, what="file at revision", peel="")
        return await page(git, ["cat-file", "blob", blob], offset, max_bytes)
    args = ["show", *DIFF_OPTIONS, "--no-show-signature", "--format=fuller"]
    if stat_only:
        args.append("--stat")
    return await page(git, [*args, "--end-of-options", commit], offset, max_bytes)


async def conflicted(git: Git) -> list[str]:
    """Return the files whose conflicts stopped a merge or a rebase (unmerged in the index)."""
    return (await git.run(["diff", *DIFF_OPTIONS, "--name-only", "--diff-filter=U", "-z"])).fields
