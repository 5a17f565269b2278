"""Fixtures of the end-to-end tests: real mcp-everything processes, driven over each transport.

A test names its transport through the `transport` parameter (see `harness.over`); stdio
spawns a server per connection, the HTTP transports share one server per mode for the session.
"""

from collections.abc import AsyncGenerator, Generator
from pathlib import Path

import pytest

from e2e.harness import TRANSPORTS, Everything, StdioTransport, Transport
from e2e.http_wire import HttpServers
from e2e.raw_stdio import RawServer


@pytest.fixture
def anyio_backend() -> str:
    # The SDK client and subprocess handling are exercised on asyncio; the core's own tests
    # cover trio.
    return "asyncio"


@pytest.fixture(scope="session")
def http_servers(tmp_path_factory: pytest.TempPathFactory) -> Generator[HttpServers]:
    """The HTTP servers, one per mode; at the end each must exit cleanly on SIGTERM."""
    servers = HttpServers(tmp_path_factory.mktemp("http"))
    yield servers
    problems = servers.stop()
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """The transport of the test: each of `TRANSPORTS` unless the test parametrizes it."""
    name: str = request.param
    return name


@pytest.fixture
def everything(
    tmp_path: Path, transport: str, request: pytest.FixtureRequest
) -> Generator[Everything]:
    """Connect with `everything.connect(version)`; every message is validated at the end."""
    carrier: Transport = StdioTransport(tmp_path)
    if transport != "stdio":
        servers: HttpServers = request.getfixturevalue("http_servers")
        carrier = servers.transport(transport)
    launcher = Everything(carrier)
    yield launcher
    problems = launcher.problems()
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncGenerator[RawServer]:
    """mcp-everything over stdio, spoken to in raw bytes; checked as it ends."""
    async with RawServer.start(tmp_path / "stderr") as running:
        yield running
