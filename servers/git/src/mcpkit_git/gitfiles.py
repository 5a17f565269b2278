"""What a commit, checkout, stage or branch changes in a git directory, told by stats alone.

A watch polls this: HEAD, the index, packed-refs and info/exclude by their stats, and the
refs by their directories'. Git changes a ref by renaming a new file over it, or by
removing it, and either changes the directory that holds it: a stat of each directory tells
what a stat of each ref did, without listing 90,000 loose tags twice a second (half a core
for one subscription). A directory is listed again only once it changed.
"""

import os

from .repo import Git

Stamp = tuple[str, int, int]
"""A path, its modification time (ns) and its size."""


class GitFiles:
    """The stamps of one repository's git files, polled by one watch."""

    def __init__(self, git: Git) -> None:
        self.files = [os.path.join(git.repo.git_dir, name) for name in ("HEAD", "index")]
        # info/exclude changes no status, but what git ignores: the work tree is walked again.
        self.files += [
            os.path.join(git.repo.common_dir, name) for name in ("packed-refs", "info/exclude")
        ]
        self.refs = os.path.join(git.repo.common_dir, "refs")
        self._listed: dict[str, tuple[int, list[str]]] = {}
        """Each directory under refs/: its time when last listed, and its subdirectories."""

    def stamps(self) -> list[Stamp]:
        """Return the stamps of the files and of every directory under refs/ (a thread's work)."""
        found: list[Stamp] = []
        for path in self.files:
            try:
                info = os.stat(path)
            except OSError:
                continue
            found.append((path, info.st_mtime_ns, info.st_size))
        listed: dict[str, tuple[int, list[str]]] = {}
        pending = [self.refs]
        while pending:
            directory = pending.pop()
            try:
                changed = os.stat(directory).st_mtime_ns
            except OSError:
                continue
            known = self._listed.get(directory)
            subdirectories = (
                known[1] if known and known[0] == changed else _subdirectories(directory)
            )
            listed[directory] = (changed, subdirectories)
            found.append((directory, changed, 0))
            pending += subdirectories
        self._listed = listed
        return found


def _subdirectories(directory: str) -> list[str]:
    """Return the directories in `directory` (links not followed); none if it cannot be read."""
    try:
        with os.scandir(directory) as entries:
            return [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []
