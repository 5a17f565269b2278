"""mcp-web's in-memory tests: a stub site on loopback, and the server connected to it.

They run on asyncio and on trio, as the core does.
"""

import ipaddress
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from checked import connect
from mcpkit.testing import Client
from mcpkit_web.addresses import Policy
from mcpkit_web.fetcher import Settings
from mcpkit_web.server import build_server
from mcpkit_web.web import Web
from servers.web.stub import Site, serving

STUB_ADDRESS = (ipaddress.ip_network("127.0.0.1/32"),)
"""The stub site's address, allowed as the operator allows one private address."""


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def site() -> Iterator[Site]:
    with serving() as running:
        yield running


def web_for(**options: Any) -> Web:
    """A `Web` that may reach 127.0.0.1 (the stub site), with `options` as settings."""
    return Web(Policy(private_allowed=STUB_ADDRESS), Settings(**options))


@asynccontextmanager
async def serve(web: Web | None = None) -> AsyncGenerator[Client]:
    """Connect a client to mcp-web (default: reaching the stub site), logging at info."""
    async with connect(build_server(web or web_for())) as client:
        await client.request("logging/setLevel", {"level": "info"})
        yield client


def text_of(result: dict[str, Any]) -> str:
    """The text of a tool result's first block."""
    return str(result["content"][0]["text"])


def fetch_logs(client: Client) -> list[dict[str, Any]]:
    """The data of the fetch log messages the client has received."""
    return [
        message["params"]["data"]
        for message in client.notifications
        if message.get("method") == "notifications/message"
        and message["params"]["data"].get("event") == "fetch"
    ]
