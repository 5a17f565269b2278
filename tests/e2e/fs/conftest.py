"""Fixtures of mcp-fs's end-to-end tests: a small project beside a canary it must never leak."""

import os
import shutil
import tempfile
from collections.abc import Generator, Iterator
from contextlib import contextmanager
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


@contextmanager
def _open_to_all(parent: str | None) -> Generator[Path]:
    """A new directory in `parent` (default: the temporary directory) that anyone may use."""
    made = Path(tempfile.mkdtemp(prefix="mcp-fs-", dir=parent))
    made.chmod(0o777)
    try:
        yield made
    finally:
        for directory, _, _ in os.walk(made):
            Path(directory).chmod(0o755)  # for the clean-up, whatever a test left
        shutil.rmtree(made)


@pytest.fixture
def open_base() -> Iterator[Path]:
    """A directory that any user may use, for a server run as nobody (see as_nobody).

    It is not below tmp_path, which is private to the user running the tests.
    """
    with _open_to_all(None) as base:
        yield base


@pytest.fixture
def open_shm() -> Iterator[Path]:
    """As open_base, on another filesystem: /dev/shm, a tmpfs on Linux."""
    with _open_to_all("/dev/shm") as shm:
        yield shm
