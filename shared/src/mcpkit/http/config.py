"""What an operator decides about the HTTP endpoints."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # read at start by every server's command line: the HTTP stack is not
    from .auth import Authenticator
    from .events import EventStore

KEEPALIVE_SECONDS = 15.0
"""Seconds of silence after which an SSE response sends a comment line: proxies and clients
with idle timeouts would otherwise close a quiet long-lived stream."""


@dataclass(kw_only=True)
class HttpConfig:
    """The HTTP transport's settings; the defaults are the safe ones."""

    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    streamable: bool = True
    """Serve Streamable HTTP on `path`."""
    legacy_sse: bool = False
    """Serve the deprecated HTTP+SSE transport (2024-11-05) on /sse and /messages."""
    json_response: bool = False
    """Answer POSTs with JSON only: request-scoped progress and logs go to the GET stream (and
    are dropped for 2026-07-28 requests). A 2026-07-28 `subscriptions/listen` is SSE still."""
    stateless: bool = False
    """No sessions: any process can answer any request; no server-to-client requests."""
    max_body: int = 4 << 20
    max_sessions: int = 1000
    session_idle_timeout: float = 1800.0
    allowed_hosts: Sequence[str] = ()
    allowed_origins: Sequence[str] = ()
    auth: "Authenticator | None" = None
    event_store: "EventStore | None" = None
    retry_ms: int = 1000
    """How long a client waits before it reconnects to a stream the server ended."""
    keepalive: float = KEEPALIVE_SECONDS
    """Seconds of silence after which an SSE response sends a keep-alive comment."""
