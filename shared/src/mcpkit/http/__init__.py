"""MCP over HTTP: the Streamable HTTP transport and the legacy HTTP+SSE one, as ASGI."""

from typing import TYPE_CHECKING

from .auth import Authenticator, StaticToken, Unauthorized
from .config import HttpConfig
from .events import EventStore, MemoryEventStore

if TYPE_CHECKING:
    from .app import HttpApp

__all__ = (
    "Authenticator",
    "EventStore",
    "HttpApp",
    "HttpConfig",
    "MemoryEventStore",
    "StaticToken",
    "Unauthorized",
)


def __getattr__(name: str) -> object:
    """Import `HttpApp` on first use (PEP 562).

    Every server's command line reads its HTTP options from this package; a server on
    stdio, which never makes the app, should not start a tenth slower importing it.

    Raises:
        AttributeError: `name` is not in this package.
    """
    if name == "HttpApp":
        from .app import HttpApp

        return HttpApp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
