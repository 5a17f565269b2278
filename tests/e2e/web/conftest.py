"""Fixtures of mcp-web's end-to-end tests: a stub site on loopback, and the server over each
transport (mcp-sqlite's `transport` and `era` fixtures)."""

from collections.abc import Generator
from pathlib import Path

import pytest

from e2e.sqlite.conftest import era, transport
from e2e.web.helpers import WebServers
from servers.web.stub import Site, serving

__all__ = ["era", "site", "transport", "webs"]  # pytest finds the fixtures imported here


@pytest.fixture
def webs(tmp_path: Path, transport: str) -> Generator[WebServers]:
    """Start mcp-web with `webs.open(era, ARGUMENTS)`; every message is checked at the end."""
    yield from WebServers.checked(tmp_path, transport)


@pytest.fixture
def site() -> Generator[Site]:
    """The stub site on 127.0.0.1."""
    with serving() as running:
        yield running
