"""The stdio transport's stdout pipe: widened so that a large answer leaves in few writes."""

import fcntl
import os
import sys
from collections.abc import Iterator

import pytest

from mcpkit.transports.stdio import StdioTransport

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pipes are resized on Linux")

PIPE_BYTES = 256 * 1024


@pytest.fixture
def pipes() -> Iterator[tuple[int, int]]:
    """Return (stdin, stdout) for a transport: the read end of one pipe, the write end of
    another; every descriptor is closed afterwards."""
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    yield stdin_read, stdout_write
    for fd in (stdin_read, stdin_write, stdout_read, stdout_write):
        os.close(fd)


async def test_stdout_pipe_is_widened(pipes: tuple[int, int]) -> None:
    stdin, stdout = pipes
    assert fcntl.fcntl(stdout, fcntl.F_GETPIPE_SZ) == 64 * 1024  # the system's default
    async with StdioTransport(stdin, stdout) as transport:
        assert fcntl.fcntl(stdout, fcntl.F_GETPIPE_SZ) == PIPE_BYTES
        # An answer of 200 KiB goes into the pipe at once, none of it left to wait.
        transport.send_nowait(b"x" * (200 * 1024))
        assert not transport._pending  # pyright: ignore[reportPrivateUsage]


async def test_a_wider_pipe_is_kept(pipes: tuple[int, int]) -> None:
    stdin, stdout = pipes
    fcntl.fcntl(stdout, fcntl.F_SETPIPE_SZ, 1024 * 1024)
    async with StdioTransport(stdin, stdout):
        assert fcntl.fcntl(stdout, fcntl.F_GETPIPE_SZ) == 1024 * 1024
