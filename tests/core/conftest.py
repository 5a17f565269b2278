"""The core's tests run on both anyio backends: proof that it is anyio-clean."""

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param
