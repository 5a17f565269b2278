"""The command-line options of the HTTP transports, each also read from the environment."""

import argparse
import os
from collections.abc import Sequence

from .auth import Authenticator, StaticToken
from .config import HttpConfig
from .guard import is_loopback

_DEFAULTS = HttpConfig()


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes", "on")


def add_http_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the HTTP options to `parser`."""
    group = parser.add_argument_group(
        "HTTP (--transport http, sse or http+sse)",
        "Binds 127.0.0.1 unless told otherwise. Host and Origin headers are checked on every"
        " request (DNS-rebinding defence). Binding any other address needs --auth-token.",
    )
    env = os.environ.get
    group.add_argument(
        "--host",
        default=env("MCPKIT_HOST", _DEFAULTS.host),
        help="address to bind (env MCPKIT_HOST; default %(default)s)",
    )
    group.add_argument(
        "--port",
        type=int,
        default=int(env("MCPKIT_PORT", str(_DEFAULTS.port))),
        help="port to bind (env MCPKIT_PORT; default %(default)s)",
    )
    group.add_argument(
        "--auth-token",
        default=env("MCPKIT_AUTH_TOKEN"),
        help="require 'Authorization: Bearer TOKEN' on every request"
        " (prefer env MCPKIT_AUTH_TOKEN: arguments are visible to other users)",
    )
    group.add_argument(
        "--allowed-host",
        action="append",
        default=_env_list("MCPKIT_ALLOWED_HOSTS"),
        metavar="HOST:PORT",
        help="also accept this Host header, e.g. the name a proxy forwards;"
        " '*' accepts any (env MCPKIT_ALLOWED_HOSTS, comma-separated)",
    )
    group.add_argument(
        "--allowed-origin",
        action="append",
        default=_env_list("MCPKIT_ALLOWED_ORIGINS"),
        metavar="ORIGIN",
        help="let browser pages from ORIGIN (https://app.example) call the server,"
        " with CORS; none by default (env MCPKIT_ALLOWED_ORIGINS)",
    )
    group.add_argument(
        "--json-response",
        action="store_true",
        default=_env_flag("MCPKIT_JSON_RESPONSE"),
        help="answer every POST with plain JSON, never SSE; progress, logs and"
        " server requests during a call then reach the client only through its"
        " GET stream (env MCPKIT_JSON_RESPONSE=1)",
    )
    group.add_argument(
        "--stateless",
        action="store_true",
        default=_env_flag("MCPKIT_STATELESS"),
        help="no sessions, so any worker behind a load balancer can answer any"
        " request; gives up the GET stream, subscriptions, list-change"
        " notifications, resumption and every server-to-client request"
        " (sampling, elicitation, roots) (env MCPKIT_STATELESS=1)",
    )
    group.add_argument(
        "--max-body",
        type=int,
        default=int(env("MCPKIT_MAX_BODY", str(_DEFAULTS.max_body))),
        metavar="BYTES",
        help="largest request body accepted (default %(default)s)",
    )
    group.add_argument(
        "--max-sessions",
        type=int,
        default=int(env("MCPKIT_MAX_SESSIONS", str(_DEFAULTS.max_sessions))),
        help="sessions held at once; more are refused with 503 (default %(default)s)",
    )
    group.add_argument(
        "--session-idle-timeout",
        type=float,
        metavar="SECONDS",
        default=float(env("MCPKIT_SESSION_IDLE_TIMEOUT", str(_DEFAULTS.session_idle_timeout))),
        help="end a session unused for this long (default %(default)s)",
    )


def http_config(
    parser: argparse.ArgumentParser, args: argparse.Namespace, auth: Authenticator | None = None
) -> HttpConfig:
    """Return the HTTP configuration the arguments describe.

    Exits through `parser.error` when the server would be reachable from the network
    without authentication.
    """
    if auth is None and args.auth_token:
        auth = StaticToken(args.auth_token)
    if auth is None and not is_loopback(args.host):
        parser.error(
            f"refusing to serve {args.host} without authentication: anyone on the network could"
            " use this server. Set --auth-token (or MCPKIT_AUTH_TOKEN), or bind 127.0.0.1."
        )
    transports: Sequence[str] = args.transport.split("+")
    return HttpConfig(
        host=args.host,
        port=args.port,
        streamable="http" in transports,
        legacy_sse="sse" in transports,
        json_response=args.json_response,
        stateless=args.stateless,
        max_body=args.max_body,
        max_sessions=args.max_sessions,
        session_idle_timeout=args.session_idle_timeout,
        allowed_hosts=args.allowed_host,
        allowed_origins=args.allowed_origin,
        auth=auth,
    )
