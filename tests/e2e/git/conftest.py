"""Fixtures of mcp-git's end-to-end tests: a repository, and the server over each transport.

A test that takes `gits` runs over stdio and over Streamable HTTP (mcp-sqlite's `transport`
fixture); one that also takes `era` runs in the handshake era (2025-11-25) and in the
stateless one (2026-07-28).
"""

from collections.abc import Generator
from pathlib import Path

import pytest

from e2e.git.helpers import GitServers, make_repo
from e2e.sqlite.conftest import era, transport

__all__ = ["era", "gits", "jail", "transport"]  # pytest finds the fixtures imported here


@pytest.fixture
def gits(tmp_path: Path, transport: str) -> Generator[GitServers]:
    """Start mcp-git with `gits.open(era, ARGUMENTS)`; every message is checked at the end."""
    yield from GitServers.checked(tmp_path, transport)


@pytest.fixture
def jail(tmp_path: Path) -> Path:
    """The operator's folder, holding the repository `repo`."""
    folder = tmp_path / "jail"
    make_repo(folder / "repo")
    return folder
