"""The HTTP transport's tests run the app under uvicorn, which runs on asyncio only."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
