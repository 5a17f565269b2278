"""httpcore's network backend, dialling only addresses the operator's policy allowed.

Imported with httpx, on the first fetch.
"""

from collections.abc import Iterable
from typing import cast

import httpcore

from .addresses import BlockedAddress, Policy


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Resolve once per connection, check every answer, dial only checked answers."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        # httpcore types AnyIOBackend as a fallback class when anyio is missing; it is not.
        self.inner = cast(httpcore.AsyncNetworkBackend, httpcore.AnyIOBackend())

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Dial the first checked answer for `host` that connects.

        Raises:
            BlockedAddress: the host or one of its addresses is not allowed.
            httpcore.ConnectError: no answer could be connected to.
        """
        answers = await self.policy.resolve(host, port)
        failure: Exception = httpcore.ConnectError(f"cannot connect to {host}")
        for answer in answers:
            try:
                return await self.inner.connect_tcp(
                    answer, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Refuse: mcp-web never dials a Unix socket."""
        raise BlockedAddress("Unix sockets are not reachable")

    async def sleep(self, seconds: float) -> None:
        """Sleep, as the pool does between retries."""
        await self.inner.sleep(seconds)
