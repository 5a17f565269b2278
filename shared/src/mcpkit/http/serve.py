"""Serve an MCP server over HTTP with uvicorn (imported here only: stdio never loads it)."""

import contextlib
import dataclasses
import signal
import socket
import sys
import threading
from collections.abc import Generator

import uvicorn

from ..server import Server
from .app import HttpApp
from .config import HttpConfig
from .guard import host_header


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
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    listener = socket.create_server((config.host, config.port), family=family)
    # Accepted connections inherit this: without it, a response written as headers then body
    # waits for the client's delayed ACK (some 40 ms a request).
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    config = dataclasses.replace(config, port=listener.getsockname()[1])
    app = HttpApp(server, config)
    # log_config=None: uvicorn's records go through our stderr handler, never to stdout.
    uvicorn_config = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        lifespan="on",
        log_config=None,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=3,
    )
    sys.stderr.write(how_to_connect(server.info.name, server.info.version, config))
    with listener:
        await _Uvicorn(uvicorn_config, app).serve(sockets=[listener])


def how_to_connect(name: str, version: str, config: HttpConfig) -> str:
    """Return what to tell the operator: where the server listens and how a client connects."""
    base = f"http://{host_header(config.host, config.port)}"
    lines = [f"{name} {version} serves MCP:"]
    if config.streamable:
        url = f"{base}{config.path}"
        lines += [
            f"  Streamable HTTP at {url}",
            "Connect a client to it, for example:",
            f"  claude mcp add --transport http {name} {url}",
            f'  or in a host configuration: {{"mcpServers": {{"{name}": {{"url": "{url}"}}}}}}',
        ]
    if config.legacy_sse:
        lines.append(f"  HTTP+SSE (protocol 2024-11-05) at {base}/sse")
    if config.auth is not None:
        lines.append("Clients must authenticate: send 'Authorization: Bearer <token>'.")
    return "\n".join(lines) + "\n"
