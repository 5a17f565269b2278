"""uvicorn's HTTP/1.1 protocol, reading each connection into one buffer of its own.

asyncio reads the socket of a plain `asyncio.Protocol` with `recv(256 KiB)`: 256 KiB
allocated for every read, then shrunk to what came. Once glibc's adaptive mmap threshold
has risen past that size, these blocks come from the heap, and the shrunk ones, alive
while their requests run, leave holes that no later read fits in. Under hours of requests
the heap grew while live objects did not (mcp-fs `write_file` over HTTP: +0.2 MiB a
minute, every minute; issue 23). A `BufferedProtocol` is handed one buffer per
connection instead, and what came is copied out at its exact size, as the stdio
transport does.
"""

import asyncio  # noqa: TID251 - uvicorn, which runs on asyncio only, takes asyncio protocols

from uvicorn.protocols.http.h11_impl import H11Protocol

READ_BUFFER = 64 * 1024
"""Bytes read at once from a connection: a larger request comes in several reads."""


class BufferedH11Protocol(H11Protocol, asyncio.BufferedProtocol):
    """uvicorn's h11 protocol, fed from one reused buffer per connection (see above)."""

    # uvicorn's own connection_made takes a Transport, narrower than asyncio's BaseTransport.
    def connection_made(self, transport: asyncio.Transport) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Make the connection's buffer, then set up as uvicorn does."""
        self._read_buffer = memoryview(bytearray(READ_BUFFER))
        super().connection_made(transport)

    def get_buffer(self, sizehint: int) -> memoryview:
        """Return the buffer the next read lands in (asyncio calls this before each read)."""
        return self._read_buffer

    def buffer_updated(self, nbytes: int) -> None:
        """Hand uvicorn a copy of the `nbytes` just read: the buffer is reused at once."""
        self.data_received(self._read_buffer[:nbytes].tobytes())
