"""What mcp-git's end-to-end tests share: repositories made with git, and the servers.

`GitServers` is mcp-sqlite's `SqliteServers` (the SDK client over stdio or Streamable
HTTP, both eras, every message checked against the schema) pointed at `mcp-git`.
"""

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

from e2e import http_wire
from e2e.http_wire import HttpServer
from e2e.sqlite.helpers import SqliteServers

MCP_GIT = str(Path(sys.executable).parent / "mcp-git")
"""The console script of the venv running the tests."""

GIT_ENV = {
    "PATH": os.environ["PATH"],
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "Other",
    "GIT_AUTHOR_EMAIL": "other@example.com",
    "GIT_COMMITTER_NAME": "Other",
    "GIT_COMMITTER_EMAIL": "other@example.com",
}


def git(cwd: Path, *args: str) -> str:
    """Run git as another process would (not through mcp-git); return its output."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(path: Path) -> Path:
    """A repository with two commits on main: a.txt, then b.txt."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("alpha\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "first")
    (path / "b.txt").write_text("bravo\n")
    git(path, "add", "b.txt")
    git(path, "commit", "-q", "-m", "second")
    return path


class GitServers(SqliteServers):
    """mcp-git for one test over one transport, in both eras."""

    def _start_http(self, directory: Path, arguments: Sequence[str]) -> HttpServer:
        return start_http(directory, arguments)

    def _command(self, arguments: Sequence[str]) -> list[str] | None:
        return [MCP_GIT, *arguments] if self.transport == "stdio" else None


def start_http(directory: Path, arguments: Sequence[str]) -> HttpServer:
    """Start `mcp-git ARGUMENTS --transport http --port N` and wait until it listens."""
    directory.mkdir(parents=True)
    plain_http = {"http+sse": ("--transport", "http")}
    with mock.patch.dict(http_wire.MODE_ARGUMENTS, plain_http):
        return HttpServer(directory, "http+sse", program=[MCP_GIT, *arguments])
