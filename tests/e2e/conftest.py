"""Fixtures of the end-to-end tests: real mcp-everything processes, driven over stdio."""

from collections.abc import Generator
from pathlib import Path

import pytest

from e2e.harness import Everything


@pytest.fixture
def anyio_backend() -> str:
    # The SDK client and subprocess handling are exercised on asyncio; the core's own tests
    # cover trio.
    return "asyncio"


@pytest.fixture
def everything(tmp_path: Path) -> Generator[Everything]:
    """Start servers with `everything.connect(version)`; every message is validated at the end."""
    launcher = Everything(tmp_path)
    yield launcher
    problems = launcher.problems()
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
