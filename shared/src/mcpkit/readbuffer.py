"""Reads copied out at their exact size from a buffer each thread keeps: `read`.

`os.read(fd, 64 KiB)` allocates 64 KiB for every read and shrinks the block to what came.
glibc takes such blocks from the heaps (below the mmap threshold, see `mcpkit.allocator`),
and the shrunk ones, alive while what was read is used, leave holes that no later block
fits in: under hours of load the heaps grew while live objects did not (issue 23: the
stdio transport, uvicorn's socket reads, mcp-fs's searches). Reading into one buffer that
lasts and copying out just what came allocates only that.

A thread's buffer serves one read at a time: a read fills it and the copy is made before
anything else runs on that thread.
"""

import os
import threading

BLOCK = 64 * 1024
"""Bytes read at once: a larger input comes in several reads."""

_buffers = threading.local()


def thread_buffer() -> memoryview:
    """Return this thread's `BLOCK`-byte buffer, made on first use."""
    buffer: memoryview | None = getattr(_buffers, "view", None)
    if buffer is None:
        buffer = _buffers.view = memoryview(bytearray(BLOCK))
    return buffer


def read(fd: int, size: int = BLOCK) -> bytes:
    """Read up to `size` bytes (at most `BLOCK`) from `fd` (POSIX); return what came.

    Raises:
        OSError: the read failed (BlockingIOError: nothing to read yet).
    """
    buffer = thread_buffer()[:size]
    return buffer[: os.readv(fd, [buffer])].tobytes()
