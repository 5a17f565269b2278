"""The transport contract: frames in, frames out, and where each outbound frame belongs.

A transport yields each inbound frame (one JSON text: a message or a batch) and accepts
outbound frames. It owns framing and I/O; it never parses JSON-RPC. Outbound frames say
which client request they belong to, because over Streamable HTTP each request has its
own stream; a transport with one stream for everything (stdio) ignores that.
"""

from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from ..jsonrpc import RequestId
from .framing import FrameTooLarge

__all__ = ("FrameTooLarge", "OneStream", "Transport")


class Transport(Protocol):
    """A bidirectional channel of JSON frames."""

    def frames(self) -> AsyncIterator[bytes | FrameTooLarge]:
        """Yield inbound frames until the peer closes its side; oversized ones as errors."""
        ...

    def send_nowait(self, frame: bytes, related: RequestId | None = None) -> None:
        """Queue one outbound frame, sent while handling request `related` if not None."""
        ...

    def reply_nowait(self, frame: bytes | None, request_ids: Sequence[RequestId]) -> None:
        """Queue the answer to `request_ids` (None: they were cancelled); they are done."""
        ...

    def close_stream(self, request_id: RequestId) -> None:
        """End the stream carrying `request_id`'s messages early; the client may resume it."""
        ...

    def can_ask(self, related: RequestId | None) -> bool:
        """Whether a request to the client, sent now, would reach it and could be answered."""
        ...

    async def drain(self) -> None:
        """Wait until queued output is below the transport's limit (back-pressure)."""
        ...


class OneStream:
    """For transports where every message shares one stream: replies are plain frames."""

    def send_nowait(self, frame: bytes, related: RequestId | None = None) -> None:
        """Queue one outbound frame."""
        raise NotImplementedError

    def reply_nowait(self, frame: bytes | None, request_ids: Sequence[RequestId]) -> None:
        """Queue the answer to `request_ids`, if there is one."""
        if frame is not None:
            self.send_nowait(frame)

    def close_stream(self, request_id: RequestId) -> None:
        """Nothing to do: the one stream lives as long as the connection."""

    def can_ask(self, related: RequestId | None) -> bool:
        """Always: the one stream reaches the client, which answers on the same channel."""
        return True
