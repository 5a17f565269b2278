"""uvicorn's HTTP/1.1 protocol, reading each connection into one buffer of its own.

asyncio reads the socket of a plain `asyncio.Protocol` with `recv(256 KiB)`: 256 KiB
allocated for every read, then shrunk to what came. Once glibc's adaptive mmap threshold
has risen past that size, these blocks come from the heap, and the shrunk ones, alive
while their requests run, leave holes that no later read fits in. Under hours of requests
the heap grew while live objects did not (mcp-fs `write_file` over HTTP: +0.2 MiB a
minute, every minute; issue 23). A `BufferedProtocol` is handed a buffer instead, and what
came is copied out at its exact size, as the stdio transport does. All connections served
by one thread share one buffer: asyncio reads into it and hands it back in one call, so no
two reads ever use it at once, and a thousand connections do not each keep 64 KiB.
"""

import asyncio  # noqa: TID251 - uvicorn, which runs on asyncio only, takes asyncio protocols
import threading

from uvicorn.protocols.http.h11_impl import H11Protocol

READ_BUFFER = 64 * 1024
"""Bytes read at once from a connection: a larger request comes in several reads."""

_buffers = threading.local()


def _read_buffer() -> memoryview:
    """Return this thread's read buffer, made on first use."""
    buffer: memoryview | None = getattr(_buffers, "view", None)
    if buffer is None:
        buffer = _buffers.view = memoryview(bytearray(READ_BUFFER))
    return buffer


# uvicorn's connection_made takes a Transport, narrower than asyncio's BaseTransport.
class BufferedH11Protocol(H11Protocol, asyncio.BufferedProtocol):  # pyright: ignore[reportIncompatibleMethodOverride]
    """uvicorn's h11 protocol, fed through its thread's read buffer (see above)."""

    def get_buffer(self, sizehint: int) -> memoryview:
        """Return the buffer the next read lands in (asyncio calls this before each read)."""
        return _read_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        """Hand uvicorn a copy of the `nbytes` just read: the buffer is reused at once."""
        self.data_received(_read_buffer()[:nbytes].tobytes())
