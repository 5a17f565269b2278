"""uvicorn's HTTP/1.1 protocol, reading each connection through its thread's read buffer.

asyncio reads the socket of a plain `asyncio.Protocol` with `recv(256 KiB)`: 256 KiB
allocated for every read, then shrunk to what came, which grew the heap under hours of
requests (mcp-fs `write_file` over HTTP: +0.2 MiB a minute, every minute; see
`mcpkit.readbuffer`). A `BufferedProtocol` is handed a buffer instead, and what came is
copied out at its exact size. All connections served by one thread share its buffer:
asyncio reads into it and hands it back in one call, so no two reads ever use it at once,
and a thousand connections do not each keep 64 KiB.
"""

import asyncio  # noqa: TID251 - uvicorn, which runs on asyncio only, takes asyncio protocols

from uvicorn.protocols.http.h11_impl import H11Protocol

from ..readbuffer import thread_buffer


# uvicorn's connection_made takes a Transport, narrower than asyncio's BaseTransport.
class BufferedH11Protocol(H11Protocol, asyncio.BufferedProtocol):  # pyright: ignore[reportIncompatibleMethodOverride]
    """uvicorn's h11 protocol, fed through its thread's read buffer (see above)."""

    def get_buffer(self, sizehint: int) -> memoryview:
        """Return the buffer the next read lands in (asyncio calls this before each read)."""
        return thread_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        """Hand uvicorn a copy of the `nbytes` just read: the buffer is reused at once."""
        self.data_received(thread_buffer()[:nbytes].tobytes())
