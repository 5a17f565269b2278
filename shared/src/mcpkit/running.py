"""The requests running in a server, on every connection together, and their bounds.

A request runs until its handler ends, whoever waits for it: over HTTP, a client that
leaves does not cancel its calls (the spec says so for the handshake era), and each keeps
what it was sent. One connection runs `MAX_IN_FLIGHT` requests at most, but one client
may open many sessions: seven sessions of a hundred calls of 4 MB each held 2.7 GB. The
server as a whole runs at most `MAX_REQUESTS`, holding `MAX_BYTES` of messages; past
either, a new request is refused until some end. A message is weighed as it is held,
parsed (`weight`), not as it came: 3 bytes of `[],` are a list of some 64 bytes, and forty
4 MiB requests of them held 6.6 GB.
"""

from collections.abc import Coroutine
from typing import Any, TypeVar

from .errors import InvalidRequest

T = TypeVar("T")

MAX_IN_FLIGHT = 100
"""Requests of one connection (one HTTP session) running at once: 20,000 took 532 MiB."""
MAX_REQUESTS = 1000
"""Requests running at once in the whole server."""
MAX_BYTES = 256 << 20
"""Bytes the requests running at once hold (`weight`; a batch's shared by its messages)."""
VALUE_BYTES = 128
"""Bytes one JSON value may take once parsed, twice over: a `{"a":1}` in a list is 96 as a
Python dict, and an HTTP server holds a POST's messages parsed for routing as well."""


def weight(frame: bytes) -> int:
    """Return about what `frame` holds once parsed, at most: `VALUE_BYTES` per value.

    Values are counted by the characters that begin or separate them: `[`, `{`, `,` and
    `:`, inside strings too (text holding many commas counts for more than it holds).
    """
    values = frame.count(b"[") + frame.count(b"{") + frame.count(b",") + frame.count(b":")
    return len(frame) + VALUE_BYTES * values


def check_room(in_flight: int) -> None:
    """Refuse a request of a connection that runs `in_flight` already, if that is all it may.

    Raises:
        InvalidRequest: `in_flight` is `MAX_IN_FLIGHT`.
    """
    if in_flight >= MAX_IN_FLIGHT:
        running = f"{MAX_IN_FLIGHT} requests of this client are running already"
        raise InvalidRequest(f"Invalid Request: {running}; send it once some are answered")


class Running:
    """How many requests the server runs, and the bytes that carried them."""

    def __init__(self) -> None:
        self.requests = 0
        self.bytes = 0

    async def run(self, handling: Coroutine[Any, Any, T], size: int) -> T:
        """Return what `handling` returns, counted as running while it runs.

        `size` is what the request's message holds (`weight`).

        Raises:
            InvalidRequest: the server runs all it may; `handling` is not run.
            Exception: what `handling` raises.
        """
        if self.requests >= MAX_REQUESTS or (self.requests and self.bytes + size > MAX_BYTES):
            handling.close()
            running = f"the server runs {self.requests} requests already"
            raise InvalidRequest(f"Invalid Request: {running}; send it once some are answered")
        self.requests += 1
        self.bytes += size
        try:
            return await handling
        finally:
            self.requests -= 1
            self.bytes -= size
