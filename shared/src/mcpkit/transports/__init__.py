"""The transport contract: frames in, frames out.

A transport yields each inbound frame (one JSON text: a message or a batch) and accepts
outbound frames. It owns framing and I/O; it never parses JSON-RPC.
"""

from collections.abc import AsyncIterator
from typing import Protocol

from .framing import FrameTooLarge

__all__ = ("FrameTooLarge", "Transport")


class Transport(Protocol):
    """A bidirectional channel of JSON frames."""

    def frames(self) -> AsyncIterator[bytes | FrameTooLarge]:
        """Yield inbound frames until the peer closes its side; oversized ones as errors."""
        ...

    def send_nowait(self, frame: bytes) -> None:
        """Queue one outbound frame without waiting (the reader answers pings this way)."""
        ...

    async def drain(self) -> None:
        """Wait until queued output is below the transport's limit (back-pressure)."""
        ...
