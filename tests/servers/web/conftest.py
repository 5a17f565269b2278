"""mcp-web's in-memory tests: a stub site on loopback, and the server connected to it.

They run on asyncio, as mcp-web does: httpx's nested stream generators are not closed
promptly under trio when a body is abandoned at the download cap (a ResourceWarning).
"""

from collections.abc import Iterator

import pytest

from servers.web.stub import Site, serving


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def site() -> Iterator[Site]:
    with serving() as running:
        yield running
