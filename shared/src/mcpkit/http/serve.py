"""Serve an MCP server over HTTP with uvicorn (imported here only: stdio never loads it)."""

import contextlib
import signal
import sys
from collections.abc import Generator

import anyio
import uvicorn

from ..server import Server
from .app import HttpApp
from .config import HttpConfig
from .guard import host_header


async def serve(server: Server, config: HttpConfig, log_level: str) -> None:
    """Serve until SIGINT or SIGTERM; in-flight work is cancelled at shutdown."""
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
    http_server = _Server(uvicorn_config)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(_stop_on_signal, http_server, app)
        await http_server.serve()
        task_group.cancel_scope.cancel()


class _Server(uvicorn.Server):
    """uvicorn, minus its signal handling, which we do ourselves.

    uvicorn re-raises the signal after shutdown, so the process would die of SIGTERM
    instead of exiting 0 as it does over stdio.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


async def _stop_on_signal(server: uvicorn.Server, app: HttpApp) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            # Ending the sessions first ends their open SSE streams, which uvicorn would
            # otherwise wait for until its graceful-shutdown timeout.
            app.sessions.close_all()
            server.should_exit = True
            return


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
