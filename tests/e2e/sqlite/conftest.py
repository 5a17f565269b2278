"""Fixtures of mcp-sqlite's end-to-end tests: its databases, and the server over each transport.

A test that takes `sqlite` runs over stdio and over Streamable HTTP; one that also takes
`era` runs in the handshake era (2025-11-25) and in the stateless one (2026-07-28).
"""

from collections.abc import Generator
from pathlib import Path

import pytest

from e2e.sqlite.helpers import ERAS, Era, SqliteServers, make_shop


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    """The transport mcp-sqlite is driven over."""
    name: str = request.param
    return name


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> Era:
    """The protocol era of the test's connections."""
    name: Era = request.param
    return name


@pytest.fixture
def sqlite(tmp_path: Path, transport: str) -> Generator[SqliteServers]:
    """Start mcp-sqlite with `sqlite.open(era, ARGUMENTS)`; every message is checked at the end."""
    yield from SqliteServers.checked(tmp_path, transport)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The shop database (`shop`): items, orders, an index, a view, BLOBs."""
    return make_shop(tmp_path / "data" / "shop.db")
