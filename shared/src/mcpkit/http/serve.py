"""Serve an MCP server over HTTP with uvicorn (imported here only: stdio never loads it)."""

import contextlib
import dataclasses
import errno
import logging
import signal
import socket
import sys
import threading
from collections.abc import Generator

import uvicorn

from .. import oplog
from ..hosts import Remote, http_hints
from ..server import Server
from .addresses import bound_addresses
from .app import HttpApp
from .asgi import ASGIApp
from .config import HttpConfig
from .guard import host_header, is_loopback
from .oplog import OperatorLog
from .protocol import BufferedH11Protocol

TOKEN_VARIABLE = "MCPKIT_AUTH_TOKEN"


class BindError(Exception):
    """The address or port cannot be bound; the message says what to do instead."""


class _Uvicorn(uvicorn.Server):
    """uvicorn, with two changes to how it stops.

    - Shutdown first ends the app's sessions, so their SSE streams (a GET stream, a legacy
      /sse stream) finish; uvicorn would otherwise wait for them until its graceful timeout,
      then cancel them with a traceback.
    - A SIGTERM or SIGINT is taken as the request to stop and `serve()` returns, as on stdio;
      uvicorn would raise the signal again once done, killing the process before the callers'
      `finally` blocks (temporary directories, for one) could run.
    """

    def __init__(self, config: uvicorn.Config, app: HttpApp) -> None:
        super().__init__(config)
        self._app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """End the sessions and their streams, then shut down as uvicorn does."""
        self._app.sessions.close_all()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        """Stop on SIGINT or SIGTERM, without raising the signal again afterwards."""
        if threading.current_thread() is not threading.main_thread():
            yield  # signals reach the main thread only: its owner stops the server
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


async def serve(server: Server, config: HttpConfig, log_level: str) -> None:
    """Serve until SIGINT or SIGTERM; in-flight work is cancelled at shutdown.

    The socket is bound first, so that with port 0 the Host check and the message to the
    operator name the port the system chose.
    """
    listener = _bind(config.host, config.port)
    # Accepted connections inherit this: without it, a response written as headers then body
    # waits for the client's delayed ACK (some 40 ms a request).
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    config = dataclasses.replace(config, port=listener.getsockname()[1])
    app = HttpApp(server, config)
    settings = uvicorn_config(OperatorLog(app), config.host, config.port, log_level)
    urls = reachable_urls(config)
    oplog.log_start(server, f"{_transports(config)} {urls[0]}", logging.getLogger().level)
    sys.stderr.write(how_to_connect(server.info.name, server.info.version, config))
    with listener:
        await _Uvicorn(settings, app).serve(sockets=[listener])


def uvicorn_config(app: ASGIApp, host: str, port: int, log_level: str) -> uvicorn.Config:
    """Return uvicorn's settings for serving `app` on `host`:`port`.

    Connections are read through their thread's buffer (see `protocol`); log_config=None sends
    uvicorn's records through our stderr handler, never to stdout.
    """
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=BufferedH11Protocol,
        lifespan="on",
        log_config=None,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=3,
    )


def _bind(host: str, port: int) -> socket.socket:
    """Return a listening socket on `host`:`port`.

    Raises:
        BindError: the port is taken, privileged, or the address is not this machine's.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        where = host_header(host, port)
        if exc.errno == errno.EADDRINUSE:
            raise BindError(
                f"{where} is in use (another server, or this one still running): stop it, or"
                " choose another port with --port (0 takes any free one)"
            ) from None
        if exc.errno == errno.EACCES:
            raise BindError(
                f"not allowed to bind {where} (ports below 1024 need privileges):"
                " choose a port above 1023 with --port"
            ) from None
        raise BindError(
            f"cannot bind {where} ({exc.strerror or exc}): give an address of this machine"
            " with --host (127.0.0.1, or 0.0.0.0 for every interface)"
        ) from None


def _transports(config: HttpConfig) -> str:
    """Name the transports served, for the start-up line."""
    return " and ".join(
        name
        for name, served in (
            ("Streamable HTTP", config.streamable),
            ("HTTP+SSE", config.legacy_sse),
        )
        if served
    )


def reachable_urls(config: HttpConfig, path: str | None = None) -> list[str]:
    """Return the URLs clients reach `path` at (default: the endpoint), loopback first."""
    path = path or (config.path if config.streamable else "/sse")
    return [f"http://{host_header(a, config.port)}{path}" for a in bound_addresses(config.host)]


def how_to_connect(name: str, version: str, config: HttpConfig) -> str:
    """Return what to tell the operator: where the server listens and how a client connects."""
    urls = reachable_urls(config)
    lines = [f"{name} {version} serves MCP:"]
    if config.streamable:
        lines += [f"  Streamable HTTP at {url}" for url in urls]
    if config.legacy_sse:
        sse = reachable_urls(config, "/sse")
        lines += [f"  HTTP+SSE (protocol 2024-11-05) at {url}" for url in sse]
    if config.streamable:
        # From another machine, the loopback URL is no use: show the first network one.
        remote_url = next((u for u in urls if not _loopback_url(u)), urls[0])
        token = TOKEN_VARIABLE if config.auth is not None else None
        lines.append("Connect a client, for example:")
        lines += http_hints(Remote(name, remote_url, token))
    if config.auth is not None:
        lines.append(
            "Clients must authenticate: 'Authorization: Bearer <token>' (above, the token is"
            f" read from ${TOKEN_VARIABLE})."
        )
    return "\n".join(lines) + "\n"


def _loopback_url(url: str) -> bool:
    host = url.split("//", 1)[1].rsplit(":", 1)[0].strip("[]")
    return is_loopback(host)
