"""Repositories for mcp-git's tests, made with git in tmp_path, and a client to serve them.

`Repos.folder` is the operator's place; `repo` inside it has two commits on `main`;
`outside` (beside the folder) holds a canary no tool may read or change.
"""

import os
import subprocess
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from checked import connect
from mcpkit.places import RootsMode
from mcpkit.testing import Client, ServerRequestHandler
from mcpkit_git.access import Tiers
from mcpkit_git.runner import Settings
from mcpkit_git.server import build_server

CANARY = "CANARY-outside-the-jail"
ENV = {
    "PATH": os.environ["PATH"],
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "LC_ALL": "C",
}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """mcp-git runs on either (git is a subprocess, waited for through anyio)."""
    return request.param


def git(cwd: Path, *args: str) -> str:
    """Run git as a test's own tool (not through mcp-git); return its output."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(path: Path) -> Path:
    """Make a repository at `path` with two commits on main (a.txt, then b.txt)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("alpha\nbeta\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "first")
    (path / "b.txt").write_text("bravo\n")
    git(path, "add", "b.txt")
    git(path, "commit", "-q", "-m", "second", "-m", "with a body")
    return path


def branch_with(repo: Path, branch: str, start: str, name: str, text: str) -> None:
    """Make `branch` at `start` in `repo`, with one commit (named as it) writing `text` to
    the tracked file `name`; `branch` stays checked out."""
    git(repo, "checkout", "-q", "-b", branch, start)
    (repo / name).write_text(text)
    git(repo, "commit", "-q", "-am", branch)


def make_secret_repo(path: Path, secret: str) -> Path:
    """Make a repository at `path` whose last commit adds secret.txt holding `secret`."""
    repo = make_repo(path)
    (repo / "secret.txt").write_text(secret)
    git(repo, "add", "secret.txt")
    git(repo, "commit", "-q", "-m", "secret")
    return repo


def accepting(asked: list[str]) -> dict[str, ServerRequestHandler]:
    """Handlers that accept every question, noting it in `asked`."""

    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"confirm": True}}

    return {"elicitation/create": accept}


def text_of(result: dict[str, Any]) -> str:
    """The text block of a tool result."""
    return result["content"][0]["text"]


@dataclass
class Repos:
    """The test's folders: `folder` (served), `repo` in it, `outside` beside it."""

    folder: Path
    repo: Path
    outside: Path

    @property
    def marker(self) -> Path:
        """A file a hostile command would create: it must never appear."""
        return self.outside / "MARKER"

    def outside_listing(self) -> list[str]:
        """Everything under `outside`: an attack must change nothing there."""
        return sorted(str(p.relative_to(self.outside)) for p in self.outside.rglob("*"))

    @asynccontextmanager
    async def serve(
        self,
        *places: Path,
        tiers: Tiers | None = None,
        settings: Settings | None = None,
        roots: RootsMode = "narrow",
        client_roots: Sequence[Path] | None = None,
        handlers: dict[str, ServerRequestHandler] | None = None,
        **options: Any,
    ) -> AsyncGenerator[Client]:
        """Connect a client to mcp-git serving `places` (default: the folder)."""
        chosen = dict(handlers or {})
        if client_roots is not None:
            listed = {"roots": [{"uri": f"file://{root}"} for root in client_roots]}

            async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
                return listed

            chosen["roots/list"] = list_roots
        app = build_server(
            [str(place) for place in places or (self.folder,)],
            settings=settings,
            tiers=tiers,
            roots=roots,
        )
        async with connect(app, handlers=chosen, **options) as client:
            yield client


@pytest.fixture
def repos(tmp_path: Path) -> Repos:
    folder = tmp_path / "jail"
    repo = make_repo(folder / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(CANARY)
    return Repos(folder, repo, outside)
