"""The stdio transport: newline-delimited UTF-8 JSON on stdin and stdout.

This module is the only writer to stdout. Reads wait for the descriptor to be readable
and then take whatever is there, so a burst of pipelined requests costs one system call.
Answers given while a chunk of input is handled leave together after it; an answer that
comes later (a tool's) is written at once, and only what a full pipe does not take waits
for the writer task: the hop to that task cost a tenth of a small tool call.

On asyncio, stdin stays registered with the event loop while input lasts: registering it
for every read (as `anyio.wait_readable` does) cost another tenth of a small tool call.
Other backends (trio) wait with `anyio.wait_readable`.

Where the system allows (Linux), stdout's pipe holds `_PIPE_BYTES` rather than 64 KiB: a
large answer (10,000 rows, 1.5 MB) left a pipe-full at a time, each one more turn of the
event loop, and took 2 ms longer.

Each read goes into the thread's read buffer, and what came is copied out at its exact
size (`mcpkit.readbuffer`): `os.read(fd, 64 KiB)` grew the heap without end under
sustained load (a host writing files for hours) while live objects did not.
"""

import asyncio  # noqa: TID251 - only to keep stdin registered with the loop (see above)
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Self

import anyio
import anyio.abc

from .. import readbuffer
from ..jsonrpc import RequestId
from . import OneStream
from .framing import Framer, FrameTooLarge

if sys.platform == "linux":
    import fcntl

_MAX_FRAME = 64 << 20  # a message larger than this is refused, not buffered
_HIGH_WATER = 4 << 20  # stop reading requests while this much output waits for the client
_CLOSE_TIMEOUT = 5.0  # seconds to flush the last answers when the connection ends
_BUFFERS_PER_WRITE = 512  # writev takes at most IOV_MAX buffers (1,024 on Linux)
_PIPE_BYTES = 256 << 10
"""What stdout's pipe is asked to hold. Not the 1 MiB an unprivileged process may ask for:
pipe buffers count against a per-user allowance (64 MiB by default), past which the user's
new pipes get two pages."""

Buffer = bytes | memoryview


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """Return the running asyncio event loop, or None under another backend."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _write(fd: int, buffers: list[Buffer]) -> int:
    """Write `buffers` to `fd` in one system call; return the number of bytes written.

    Raises:
        OSError: the write failed (BlockingIOError: the pipe is full).
    """
    if os.name == "nt":  # no writev there
        return os.write(fd, b"".join(buffers))
    return os.writev(fd, buffers)


def _unwritten(buffers: list[Buffer], written: int) -> list[Buffer]:
    """Return what of `buffers` is left once their first `written` bytes are out."""
    for index, buffer in enumerate(buffers):
        if written < len(buffer):
            return [memoryview(buffer)[written:], *buffers[index + 1 :]]
        written -= len(buffer)
    return []


def _widen_pipe(fd: int) -> None:
    """Let the pipe `fd` hold `_PIPE_BYTES`, where pipes can be resized (Linux); else nothing."""
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError):  # over the user's allowance: it stays as it is
        if fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) < _PIPE_BYTES:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)


def _pollable(fd: int) -> bool:
    """Return whether `fd` can be waited on by the event loop (pipes, sockets, terminals)."""
    if os.name == "nt":
        return False
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


class StdioTransport(OneStream):
    """Frames over a pair of file descriptors (stdin and stdout by default).

    Use as an async context manager: it runs the writer task and, on exit, flushes what is
    still queued (for at most a few seconds) and restores the descriptors' blocking mode.
    """

    def __init__(self, stdin: int | None = None, stdout: int | None = None) -> None:
        self._in = sys.stdin.fileno() if stdin is None else stdin
        self._out = sys.stdout.fileno() if stdout is None else stdout
        self._pending: list[Buffer] = []
        self._pending_bytes = 0
        self._wake = anyio.Event()
        self._idle = anyio.Event()
        self._idle.set()
        self._broken = False
        self._reading = False  # answering a chunk of input: its answers leave together
        self._in_pollable = _pollable(self._in)
        self._out_pollable = _pollable(self._out)
        self._out_was_blocking = True
        self._task_group: anyio.abc.TaskGroup | None = None
        self._input_loop: asyncio.AbstractEventLoop | None = None  # stdin registered with it
        self._in_was_blocking = True
        self._readable = asyncio.Event()  # set by the loop when stdin is registered

    async def __aenter__(self) -> Self:
        if self._out_pollable:
            self._out_was_blocking = os.get_blocking(self._out)
            os.set_blocking(self._out, False)
            if stat.S_ISFIFO(os.fstat(self._out).st_mode):
                _widen_pipe(self._out)
        if self._in_pollable:
            self._input_loop = _running_asyncio_loop()
            if self._input_loop is not None:
                self._in_was_blocking = os.get_blocking(self._in)
                os.set_blocking(self._in, False)
                self._input_loop.add_reader(self._in, self._readable.set)
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._write_loop)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._task_group is not None
        with anyio.move_on_after(_CLOSE_TIMEOUT, shield=True):
            await self._idle.wait()
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(exc_type, exc, tb)
        self._stop_reading()
        if self._out_pollable:
            os.set_blocking(self._out, self._out_was_blocking)

    async def frames(self) -> AsyncIterator[bytes | FrameTooLarge]:
        """Yield each inbound frame until stdin reaches end of file."""
        framer = Framer(_MAX_FRAME)
        while chunk := await self._read():
            self._reading = True
            for frame in framer.feed(chunk):
                yield frame
            self._reading = False
            # Answers the reader gave (pings) leave now, without waiting for the writer task.
            self._write_some()
            await self._wait_for_room()

    def send_nowait(self, frame: bytes, related: RequestId | None = None) -> None:
        """Queue one message; the writer task sends it with whatever else is queued."""
        if self._broken:
            return
        self._pending.append(frame)
        self._pending.append(b"\n")
        self._pending_bytes += len(frame) + 1
        if not self._reading:
            self._write_some()  # an answer that came later leaves at once if the pipe takes it
            if not self._pending:
                return
        if self._idle.is_set():
            self._idle = anyio.Event()
        self._wake.set()

    async def drain(self) -> None:
        """Wait for the queued output to be written if it has grown past the limit."""
        if self._pending_bytes > _HIGH_WATER:
            await self._idle.wait()

    async def _wait_for_room(self) -> None:
        """Stop reading while too much output waits for the client (see `drain`).

        Meanwhile stdin is unregistered: input left unread would make the loop call back
        at every turn, a busy wait.
        """
        if self._pending_bytes <= _HIGH_WATER:
            return
        if self._input_loop is not None:
            self._input_loop.remove_reader(self._in)
        try:
            await self._idle.wait()
        finally:
            if self._input_loop is not None:
                self._input_loop.add_reader(self._in, self._readable.set)

    async def _read(self) -> bytes:
        """Return the next chunk of stdin, or b"" at end of file or on a read error."""
        try:
            chunk = await self._next_chunk()
        except OSError:
            chunk = b""
        if not chunk:
            self._stop_reading()  # else the loop would call back for ever: EOF stays readable
        return chunk

    async def _next_chunk(self) -> bytes:
        """Wait for stdin to be readable, and read what is there.

        Raises:
            OSError: the read failed.
        """
        if self._input_loop is None:
            if self._in_pollable:
                await anyio.wait_readable(self._in)
            elif os.name == "nt":
                return await anyio.to_thread.run_sync(os.read, self._in, readbuffer.BLOCK)
            return self._read_now()
        while True:  # stdin is non-blocking while it is registered
            await self._readable.wait()
            self._readable.clear()
            try:
                return self._read_now()
            except BlockingIOError:  # a call back for input that was read since
                continue

    def _read_now(self) -> bytes:
        """Read what stdin has (up to 64 KiB); return it.

        Raises:
            OSError: the read failed (BlockingIOError: nothing to read yet).
        """
        return readbuffer.read(self._in)

    def _stop_reading(self) -> None:
        """Unregister stdin from the asyncio event loop, if it is registered."""
        if self._input_loop is not None:
            self._input_loop.remove_reader(self._in)
            self._input_loop = None
            os.set_blocking(self._in, self._in_was_blocking)

    async def _write_loop(self) -> None:
        """Write queued output whenever there is some, waiting while the pipe is full."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            self._write_some()
            while self._pending:
                await anyio.wait_writable(self._out)
                self._write_some()
            self._idle.set()

    def _write_some(self) -> None:
        """Write as much of the queue as the pipe takes now, in one system call.

        The queued messages go out as they are, with `writev`: joined first, each answer
        was copied once more (a 1 MB one, 0.75 ms). What the pipe did not take stays
        queued, the first of it as a view of its rest, so a large answer draining a
        pipe-full at a time is not copied again for every write.
        """
        if not self._pending:
            return
        try:
            written = _write(self._out, self._pending[:_BUFFERS_PER_WRITE])
        except BlockingIOError:
            written = 0
        except OSError:  # the client closed its end: nothing more can be delivered
            self._broken = True
            written = self._pending_bytes
        self._pending_bytes -= written
        self._pending = _unwritten(self._pending, written)
