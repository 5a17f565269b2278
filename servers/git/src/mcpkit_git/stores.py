"""Where a repository keeps its objects and refs, checked to stay in its place and out of reach.

Its git and common directories and every object store it borrows from (alternates) must lie
inside the allowed place; no link in them may lead out or into a work tree (git follows
links in its directory); and no work tree may be able to write into them
(`check_out_of_reach`).
"""

import os
import re
import stat

from .errors import GitError

LOOSE_OBJECTS = re.compile(r"^[0-9a-f]{2}$")
MAX_ALTERNATE_DEPTH = 5
MAX_ALTERNATES_BYTES = 64 * 1024
MAX_CHECKED_ENTRIES = 100_000


def is_below(path: str, directory: str) -> bool:
    """Return whether `path` is `directory` or inside it, comparing whole components."""
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def alternates_problem(objects: str, place: str, depth: int = 0) -> str | None:
    """Return what is wrong with the object stores `objects` borrows (recursively), or None.

    Quoted entries, which git unquotes C-style (an octal escape can hide a slash), are
    refused rather than read the way git reads them.
    """
    try:
        text = read_small_file(os.path.join(objects, "info", "alternates"))
    except OSError as exc:
        return f"has an alternates file mcp-git cannot use ({exc.strerror})"
    for line in (text or "").split("\n"):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.startswith('"'):
            return f"borrows objects from a quoted path ({entry[:80]}), which mcp-git refuses"
        real = os.path.realpath(os.path.join(objects, entry))
        if not is_below(real, place) or depth >= MAX_ALTERNATE_DEPTH:
            return f"borrows objects from {real}, outside {place}"
        deeper = alternates_problem(real, place, depth + 1)
        if deeper is not None:
            return deeper
    return None


def read_small_file(path: str) -> str | None:
    """Return the text of the regular file at `path`, None if there is none.

    It is opened without waiting and looked at before it is read: a FIFO would block
    the event loop for good, and `/dev/zero` or a sparse file would fill the memory.

    Raises:
        OSError: it cannot be read, is not a regular file, or is over MAX_ALTERNATES_BYTES.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError):
        return None
    with open(descriptor, "rb") as file:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if info.st_size > MAX_ALTERNATES_BYTES:
            raise OSError(0, f"over {MAX_ALTERNATES_BYTES} bytes")
        return os.fsdecode(file.read(MAX_ALTERNATES_BYTES))


def stray_link(git_dir: str, place: str) -> str | None:
    """Return what is wrong with a symbolic link in `git_dir`, or None if nothing is.

    Git follows links in its directory (`objects`, `refs`, `logs`, `config`, ...), so each
    must lead into a git directory in the place (one with a `.git` in its path, as
    `check_out_of_reach` has it). Leading outside, it would let the model read and write
    another repository, or append to any file. Leading into a work tree, a branch's files
    would take its place: a link among them had git append its reflog to any file, and a
    `config` a stash rewrote armed a filter for git's next command. Links in `hooks` may
    lead into a work tree: git writes nothing there, and runs it only if the operator
    allows hooks. Links within the place are followed and looked into too. Loose objects
    are not looked at one by one: git checks that each is the object its name says.

    Raises:
        GitError: the directory holds more than MAX_CHECKED_ENTRIES entries.
    """
    pending, seen, count = [(git_dir, False)], {git_dir}, 0
    while pending:
        directory, in_hooks = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue  # git cannot read it either
        count += len(entries)
        if count > MAX_CHECKED_ENTRIES:
            raise GitError(
                f"{git_dir} holds over {MAX_CHECKED_ENTRIES} entries (loose objects aside);"
                " mcp-git checks every one for links that lead outside, and refuses it"
            )
        for entry in entries:
            hooks = in_hooks or (directory == git_dir and entry.name == "hooks")
            if entry.is_symlink():
                real = os.path.realpath(entry.path)
                if not is_below(real, place):
                    return f"{entry.path} is a link to {real}, outside {place}"
                if not (hooks or dot_git_in(real, place)):
                    return (
                        f"{entry.path} is a link to {real}, not in a .git directory (a work"
                        " tree's files could take its place)"
                    )
                if os.path.isdir(real) and real not in seen:
                    seen.add(real)
                    pending.append((real, hooks))
            elif entry.is_dir(follow_symlinks=False) and not (
                LOOSE_OBJECTS.match(entry.name) and os.path.basename(directory) == "objects"
            ):
                pending.append((entry.path, hooks))
    return None


def check_inside(name: str, what: str, path: str, place: str) -> None:
    """Raise GitError unless `path`, the `what` of repository `name`, is inside `place`."""
    if not is_below(path, place):
        raise GitError(
            f"{name}: its {what} is {path}, outside {place}; mcp-git refuses repositories"
            " that reach outside their place (.git file, core.worktree)."
        )


def check_stores(name: str, git_dir: str, common: str, place: str) -> None:
    """Raise GitError unless repository `name`'s stores all stay inside `place`.

    Its git and common directories, the object stores they borrow, and the links in them.
    """
    check_inside(name, "git directory", git_dir, place)
    check_inside(name, "common dir", common, place)
    problem = alternates_problem(os.path.join(common, "objects"), place)
    if problem is not None:
        raise GitError(f"{name} {problem}")
    for directory in dict.fromkeys((git_dir, common)):
        problem = stray_link(directory, place)
        if problem is not None:
            raise GitError(
                f"{name}: {problem}; mcp-git refuses repositories whose git directory links"
                " outside their place or into a work tree."
            )


def check_out_of_reach(name: str, top: str, git_dir: str, common: str, place: str) -> None:
    """Raise GitError unless no work tree in `place` can write into this repository's stores.

    Git writes a branch's files anywhere in a work tree but below a `.git` (in any case). A
    git directory elsewhere in one (a `.git` file naming `gd`), or a work tree inside a git
    directory (`core.worktree`), takes the links a branch holds, through which git then
    appends its reflog to any file. So below the place a work tree has no `.git` in its
    path, and the git and common directories have one.
    """
    if dot_git_in(top, place):
        raise GitError(
            f"{name}: its work tree {top} lies in a git directory, where its files would"
            " overwrite git's own; mcp-git refuses such repositories."
        )
    for what, directory in (("git directory", git_dir), ("common dir", common)):
        if not dot_git_in(directory, place):
            raise GitError(
                f"{name}: its {what} {directory} is not in a .git directory, so a work tree"
                " could write into it; mcp-git refuses such repositories (and separate git"
                " directories)."
            )


def dot_git_in(path: str, place: str) -> bool:
    """Return whether `path`, below `place`, passes through a `.git` (in any case) there."""
    below = os.path.relpath(path, place).split(os.sep)
    return any(part.lower() == ".git" for part in below)
