"""Fixtures of mcp-git's end-to-end tests: a repository, and the server over each transport.

A test that takes `gits` runs over stdio and over Streamable HTTP; one that also takes
`era` runs in the handshake era (2025-11-25) and in the stateless one (2026-07-28).
"""

from collections.abc import Generator
from pathlib import Path

import pytest

from e2e.git.helpers import GitServers, make_repo
from e2e.sqlite.helpers import ERAS, Era


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    """The transport mcp-git is driven over."""
    name: str = request.param
    return name


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> Era:
    """The protocol era of the test's connections."""
    name: Era = request.param
    return name


@pytest.fixture
def gits(tmp_path: Path, transport: str) -> Generator[GitServers]:
    """Start mcp-git with `gits.open(era, ARGUMENTS)`; every message is checked at the end."""
    servers = GitServers(tmp_path / "servers", transport)
    (tmp_path / "servers").mkdir()
    yield servers
    problems = servers.problems()
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
def jail(tmp_path: Path) -> Path:
    """The operator's folder, holding the repository `repo`."""
    folder = tmp_path / "jail"
    make_repo(folder / "repo")
    return folder
