"""Fixtures of mcp-fs's end-to-end tests: a small project beside a canary it must never leak."""

from pathlib import Path

import pytest

from e2e.fs_helpers import FsTree, make_tree


@pytest.fixture
def transport() -> str:
    """mcp-fs runs as a subprocess over stdio here; `test_http` starts it over HTTP itself."""
    return "stdio"


@pytest.fixture
def fs(tmp_path: Path) -> FsTree:
    """ROOT (the allowed project) and OUT (the canary) under the test's directory."""
    return make_tree(tmp_path)
