"""Fixtures of the conformance tests: Node >= 22 and the pinned suite, installed on first use."""

import pytest

from conformance.toolchain import Toolchain, ToolchainError, ensure


@pytest.fixture(scope="session")
def toolchain() -> Toolchain:
    """Node and the suite; a failure to install them fails every test that needs them."""
    try:
        return ensure()
    except ToolchainError as exc:
        pytest.fail(f"conformance toolchain: {exc}", pytrace=False)
