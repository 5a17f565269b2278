"""MCP over HTTP: the Streamable HTTP transport and the legacy HTTP+SSE one, as ASGI."""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import HttpApp
    from .auth import Authenticator, StaticToken, Unauthorized
    from .config import HttpConfig
    from .events import EventStore, MemoryEventStore

_HOMES = {
    "Authenticator": "auth",
    "EventStore": "events",
    "HttpApp": "app",
    "HttpConfig": "config",
    "MemoryEventStore": "events",
    "StaticToken": "auth",
    "Unauthorized": "auth",
}
"""The module of each name this package exports."""

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
    """Import a name of this package on first use (PEP 562).

    Every server's command line reads its HTTP options from this package; a server on
    stdio, which never serves HTTP, should not start slower importing the HTTP stack.

    Raises:
        AttributeError: `name` is not in this package.
    """
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{home}", __name__), name)
