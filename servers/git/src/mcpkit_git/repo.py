"""Git bound to one jailed repository, and the checks every model-given value passes.

A revision is resolved by `rev-parse --verify --end-of-options` before use; a path must
stay inside the work tree (links resolved) and is passed after `--` as a literal
pathspec (`GIT_LITERAL_PATHSPECS=1`: no `:(top)` or glob magic); a branch or tag name
must pass `check-ref-format`. Nothing that starts with `-` reaches git where an option
could be read.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import GitError
from .jail import Repository
from .process import Result, Tick
from .runner import GitFailed, Log, Runner, TimedOut
from .stores import is_below


def plain(value: str, what: str) -> str:
    """Return `value` if it cannot be read as an option nor break a line.

    Raises:
        GitError: it is empty, starts with `-`, or holds a NUL or a line break.
    """
    if not value or value.startswith("-") or any(c in value for c in "\x00\n\r"):
        raise GitError(f"{what} {value!r} is not allowed (empty, starting with '-', or a control)")
    return value


@dataclass
class Git:
    """Runs git in one repository that passed the jail."""

    runner: Runner
    repo: Repository
    log: Log | None = None

    async def run(
        self,
        args: Sequence[str],
        *,
        check: bool = True,
        max_bytes: int | None = None,
        on_output: Tick | None = None,
        literal: bool = True,
        skip: int = 0,
        finish: bool = False,
    ) -> Result:
        """Run `git args` in the repository (`literal`: pathspecs have no magic).

        `finish`: a change, run to its end however long its output (see
        `process.communicate`), never stopped at the cap.

        Raises:
            GitError: git failed (its message), or ran out of time.
        """
        env = {
            "GIT_CEILING_DIRECTORIES": os.path.dirname(self.repo.place) or "/",
            "GIT_OPTIONAL_LOCKS": "0",  # a read writes nothing (status refreshes no index)
        }
        if literal:
            env["GIT_LITERAL_PATHSPECS"] = "1"
        try:
            return await self.runner.run(
                self.repo.path,
                args,
                overrides=self.repo.overrides,
                env=env,
                check=check,
                max_bytes=max_bytes,
                log=self.log,
                on_output=on_output,
                skip=skip,
                finish=finish,
            )
        except (GitFailed, TimedOut) as exc:
            raise GitError(str(exc)) from None
        except (OSError, ValueError) as exc:  # too long, a NUL, a lone surrogate
            raise GitError(f"git cannot be given these arguments: {exc}") from None

    async def config_values(self, key: str) -> list[str]:
        """Return every value of configuration `key`, each whole, as the bytes git uses.

        Read NUL-separated: a value may hold a line break, which splits nothing for git.
        """
        return (await self.run(["config", "-z", "--get-all", key], check=False)).fields

    async def revision(self, rev: str, *, what: str = "revision", peel: str = "commit") -> str:
        """Return the object name `rev` resolves to (peeled to a `peel`, if given).

        Raises:
            GitError: it is not a plain value or names no such object.
        """
        plain(rev, what)
        found = await self.object_at(f"{rev}^{{{peel}}}" if peel else rev)
        if found is None:
            raise GitError(f"{what} {rev!r} names no {peel or 'object'} in this repository")
        return found

    async def object_at(self, rev: str) -> str | None:
        """Return the object name `rev` (checked already) resolves to, or None if none."""
        result = await self.run(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", rev], check=False
        )
        return result.text.strip() if result.status == 0 else None

    async def ref_name(self, name: str, *, what: str = "branch name") -> str:
        """Return `name` if it is a valid new branch or tag name.

        Raises:
            GitError: it is not (`git check-ref-format --branch` refuses it).
        """
        plain(name, what)
        result = await self.run(["check-ref-format", "--branch", name], check=False)
        if result.status != 0:
            raise GitError(f"{what} {name!r} is not a valid name")
        return name

    def path(self, path: str) -> str:
        """Return `path` relative to the work tree, if it stays inside it.

        Raises:
            GitError: it leaves the work tree (by `..`, a link, or absolutely) or is in `.git`.
        """
        if not path or "\x00" in path:
            raise GitError(f"path {path!r} is not allowed")
        top = self.repo.path
        joined = os.path.normpath(os.path.join(top, path))
        real = os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))
        if not is_below(joined, top) or not is_below(real, top):
            raise GitError(f"path {path!r} is outside the repository {top}")
        relative = os.path.relpath(real, top)
        if relative == ".git" or relative.startswith(".git/") or is_below(real, self.repo.git_dir):
            raise GitError(f"path {path!r} is inside the git directory")
        return relative

    def paths(self, paths: Sequence[str] | None) -> list[str]:
        """Return `--` and the checked paths, or nothing when there are none."""
        if not paths:
            return []
        return ["--", *(self.path(path) for path in paths)]

    def tree_path(self, path: str) -> str:
        """Return `path` as a path inside a tree (for `rev:path`), without `..` or links.

        Raises:
            GitError: it climbs out with `..`, is absolute outside the work tree, or is empty.
        """
        if os.path.isabs(path):
            path = os.path.relpath(os.path.normpath(path), self.repo.path)
        parts = [part for part in path.split("/") if part not in ("", ".")]
        if not parts or ".." in parts or "\x00" in path or "\n" in path:
            raise GitError(f"path {path!r} is not a path inside the repository")
        return "/".join(parts)
