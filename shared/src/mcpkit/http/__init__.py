"""MCP over HTTP: the Streamable HTTP transport and the legacy HTTP+SSE one, as ASGI."""

from .app import HttpApp
from .auth import Authenticator, StaticToken, Unauthorized
from .config import HttpConfig
from .events import EventStore, MemoryEventStore

__all__ = (
    "Authenticator",
    "EventStore",
    "HttpApp",
    "HttpConfig",
    "MemoryEventStore",
    "StaticToken",
    "Unauthorized",
)
