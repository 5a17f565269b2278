"""The command line every server shares: `mcp-x [server args] [--transport T] ...`.

`main(server, parser)` is a server's whole `__main__`: it parses the command line, builds
the server if given a function that makes it from the parsed arguments, and serves it.
Underneath, `parse(parser, argv)` adds the common options, and `run(server, args)` sends
operator logs to stderr and serves over stdio until stdin closes, or over HTTP, until a
SIGTERM/SIGINT arrives (in-flight work is cancelled either way). Every option can also be
set through an environment variable, for host configurations, and is checked as the flag is
(`mcpkit.envargs`). At start one line on stderr says what is served where (`mcpkit.oplog`).
"""

import argparse
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence

import anyio

from . import oplog
from .allocator import fix_mmap_threshold
from .connection import Connection
from .envargs import check_flags, choice
from .http.options import add_http_arguments
from .runtime import Runtime
from .server import Server
from .transports import Transport
from .transports.stdio import StdioTransport

_LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
_TRANSPORTS = ("stdio", "http", "sse", "http+sse")
_STATE_KEY_BYTES = 32


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options every server has to `parser`."""
    group = parser.add_argument_group("protocol")
    group.add_argument(
        "--transport",
        type=choice("MCPKIT_TRANSPORT", _TRANSPORTS),
        metavar="{" + ",".join(_TRANSPORTS) + "}",
        default=os.environ.get("MCPKIT_TRANSPORT", "stdio"),
        help="how clients connect: stdio, for a host that starts the server; http, Streamable"
        " HTTP on /mcp; sse, the deprecated HTTP+SSE transport of 2024-11-05 on /sse; or"
        " http+sse, both (env MCPKIT_TRANSPORT; default stdio)",
    )
    group.add_argument(
        "--log-level",
        type=choice("MCPKIT_LOG_LEVEL", _LOG_LEVELS),
        metavar="{" + ",".join(_LOG_LEVELS) + "}",
        default=os.environ.get("MCPKIT_LOG_LEVEL", "warning"),
        help="operator log level; logs go to stderr (env MCPKIT_LOG_LEVEL, default warning)",
    )


def main(
    server: Server | Callable[[argparse.Namespace], Server],
    parser: argparse.ArgumentParser | None = None,
    *,
    argv: Sequence[str] | None = None,
    config_hint: str | None = None,
) -> None:
    """Parse `argv` (default: the command line) with `parser`, then serve until the end.

    `server` is the server, or a function that makes it from the parsed arguments; a
    `ValueError` it raises is a bad configuration: its message goes to stderr and the
    process exits with status 2, as for a bad option. `config_hint` is the host
    configuration `run` shows to someone who starts the server from a terminal.
    """
    parser = parser or argparse.ArgumentParser(prog=os.path.basename(sys.argv[0]))
    args = parse(parser, argv)
    if not isinstance(server, Server):
        try:
            server = server(args)
        except ValueError as exc:
            sys.stderr.write(f"{parser.prog}: {exc}\n")
            sys.exit(2)
    hint = {"mcpServers": {server.info.name: {"command": parser.prog}}}
    run(server, args, config_hint=config_hint or json.dumps(hint, indent=2))


def run(server: Server, args: argparse.Namespace, *, config_hint: str) -> None:
    """Serve `server` as `args` say, until the client disconnects or a signal arrives.

    `config_hint` is the host configuration to show someone who starts the server on stdio
    from a terminal, where nobody would speak JSON-RPC to it.
    """
    fix_mmap_threshold()  # before the first large answer (see mcpkit.allocator)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.transport != "stdio":
        from .http.serve import BindError, serve  # uvicorn loads only when HTTP is used

        try:
            anyio.run(serve, server, args.http_config, args.log_level)
        except BindError as exc:
            sys.stderr.write(f"{server.info.name}: {exc}\n")
            sys.exit(1)
        return
    oplog.log_start(server, "stdio", logging.getLogger().level)
    if sys.stdin.isatty():
        sys.stderr.write(terminal_hint(server, config_hint))
    anyio.run(_serve_stdio, server)


def terminal_hint(server: Server, config_hint: str) -> str:
    """Return what to tell someone who started a stdio server by hand in a terminal."""
    return (
        f"{server.info.name} {server.info.version} speaks MCP on stdin and stdout: a host"
        f" starts it. Add it to your host's configuration, for example:\n\n{config_hint}\n\n"
        "Waiting for JSON-RPC on stdin (Ctrl-D to quit).\n"
    )


def claim_stdio() -> tuple[int, int]:
    """Take stdin and stdout for the protocol alone; return the descriptors that now hold them.

    File descriptors 0 and 1 are left to everything else: 0 reads nothing (`/dev/null`),
    1 writes to stderr. A `print` in a handler, or a child process that writes to its
    stdout, put lines that are not JSON on the protocol's stream; a child that read its
    stdin took the client's messages.
    """
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    os.dup2(2, 1)
    return protocol_in, protocol_out


async def _serve_stdio(server: Server) -> None:
    protocol_in, protocol_out = claim_stdio()
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(_cancel_on_signal, task_group.cancel_scope)
        async with Runtime(server) as runtime, StdioTransport(protocol_in, protocol_out) as stdio:
            transport: Transport = stdio
            if oplog.logger.isEnabledFor(logging.INFO):  # costs nothing at the default level
                transport = oplog.TracedTransport(stdio, oplog.Trace())
            await Connection(runtime, transport).run()
        task_group.cancel_scope.cancel()


async def _cancel_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            scope.cancel()
            return


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Add the common options to `parser` and parse `argv` (default: the command line).

    Exits with a usage error for options that cannot be served (an unauthenticated
    non-loopback address); `args.http_config` holds the HTTP settings.
    """
    add_common_arguments(parser)
    add_http_arguments(parser)
    args = parser.parse_args(argv)
    check_flags(parser, args)
    state_key = os.environ.get("MCPKIT_STATE_KEY")
    if state_key is not None and len(state_key.encode()) < _STATE_KEY_BYTES:
        # It seals the answers a 2026-07-28 retry carries: a short one can be guessed.
        parser.error(
            f"MCPKIT_STATE_KEY must be at least {_STATE_KEY_BYTES} bytes"
            " (for example: openssl rand -hex 32)"
        )
    args.http_config = None
    if args.transport != "stdio":
        from .http.configure import http_config  # the HTTP stack loads only when it is used

        args.http_config = http_config(parser, args)
    return args
