"""A connected pair of in-memory transports, for tests and for embedding a server."""

import contextlib
import math
from collections.abc import AsyncIterator

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..jsonrpc import RequestId
from . import OneStream
from .framing import FrameTooLarge


class MemoryTransport(OneStream):
    """One end of an in-memory channel of frames. Closing it ends the peer's `frames()`."""

    def __init__(
        self, send: MemoryObjectSendStream[bytes], receive: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._send = send
        self._receive = receive

    async def frames(self) -> AsyncIterator[bytes | FrameTooLarge]:
        """Yield frames sent by the other end until it closes."""
        async for frame in self._receive:
            yield frame

    def send_nowait(self, frame: bytes, related: RequestId | None = None) -> None:
        """Deliver one frame to the other end; dropped if the other end has gone."""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._send.send_nowait(frame)

    async def drain(self) -> None:
        """Nothing to wait for: the channel is unbounded."""

    async def aclose(self) -> None:
        """Close this end: the other end sees end of input."""
        await self._send.aclose()
        await self._receive.aclose()


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """Return two transports connected to each other: (client end, server end)."""
    to_server_send, to_server_receive = anyio.create_memory_object_stream[bytes](math.inf)
    to_client_send, to_client_receive = anyio.create_memory_object_stream[bytes](math.inf)
    return (
        MemoryTransport(to_server_send, to_client_receive),
        MemoryTransport(to_client_send, to_server_receive),
    )
