"""The command-line options of the HTTP transports, each also read from the environment."""

import argparse
import os
from collections.abc import Callable
from typing import TypeVar

from ..envargs import flag_default
from .config import HttpConfig

DEFAULTS = HttpConfig()
N = TypeVar("N", int, float)


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def _port(text: str) -> int:
    """Parse a port to bind (argparse applies it to environment defaults too).

    Raises:
        argparse.ArgumentTypeError: not a port from 1 to 65535.
    """
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535; 0: any free one)")
    return int(text)


def _positive(kind: type[N]) -> Callable[[str], N]:
    """Return a parser of positive numbers of `kind`, for argparse."""

    def parse(text: str) -> N:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or value <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
        return value

    return parse


def add_http_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the HTTP options to `parser`."""
    group = parser.add_argument_group(
        "HTTP (--transport http, sse or http+sse)",
        "Binds 127.0.0.1 unless told otherwise. Host and Origin headers are checked on every"
        " request (DNS-rebinding defence). Binding any other address needs --auth-token or"
        " OAuth (--oauth-introspection-url).",
    )
    env = os.environ.get
    group.add_argument(
        "--host",
        default=env("MCPKIT_HOST", DEFAULTS.host),
        help="address to bind (env MCPKIT_HOST; default %(default)s)",
    )
    group.add_argument(
        "--port",
        type=_port,
        default=env("MCPKIT_PORT", str(DEFAULTS.port)),
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
        default=flag_default(parser, "json_response", "MCPKIT_JSON_RESPONSE"),
        help="answer every POST with plain JSON, not SSE; progress, logs and"
        " server requests during a call then reach the client only through its"
        " GET stream (2026-07-28 has none: they are dropped); a 2026-07-28"
        " subscriptions/listen is still an SSE stream (env MCPKIT_JSON_RESPONSE=1)",
    )
    group.add_argument(
        "--stateless",
        action="store_true",
        default=flag_default(parser, "stateless", "MCPKIT_STATELESS"),
        help="no sessions, so any worker behind a load balancer can answer any"
        " request; gives up the GET stream, subscriptions, list-change"
        " notifications, resumption and every server-to-client request"
        " (sampling, elicitation, roots) (env MCPKIT_STATELESS=1)",
    )
    group.add_argument(
        "--max-body",
        type=_positive(int),
        default=env("MCPKIT_MAX_BODY", str(DEFAULTS.max_body)),
        metavar="BYTES",
        help="largest request body accepted (default %(default)s)",
    )
    group.add_argument(
        "--max-sessions",
        type=_positive(int),
        default=env("MCPKIT_MAX_SESSIONS", str(DEFAULTS.max_sessions)),
        help="sessions held at once; more are refused with 503 (default %(default)s)",
    )
    group.add_argument(
        "--session-idle-timeout",
        type=_positive(float),
        metavar="SECONDS",
        default=env("MCPKIT_SESSION_IDLE_TIMEOUT", str(DEFAULTS.session_idle_timeout)),
        help="end a session unused for this long (default %(default)s)",
    )
    _add_oauth_arguments(parser)


def _add_oauth_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of the OAuth 2.1 resource server to `parser`."""
    group = parser.add_argument_group(
        "OAuth 2.1 (HTTP)",
        "Accept bearer tokens that an authorization server issued for this server, each"
        " checked at its introspection endpoint (RFC 7662); clients find the authorization"
        " server through /.well-known/oauth-protected-resource (RFC 9728).",
    )
    env = os.environ.get
    group.add_argument(
        "--oauth-issuer",
        default=env("MCPKIT_OAUTH_ISSUER"),
        metavar="URL",
        help="the authorization server's issuer URL, listed in the metadata"
        " (env MCPKIT_OAUTH_ISSUER)",
    )
    group.add_argument(
        "--oauth-introspection-url",
        default=env("MCPKIT_OAUTH_INTROSPECTION_URL"),
        metavar="URL",
        help="its token introspection endpoint; turns OAuth on"
        " (env MCPKIT_OAUTH_INTROSPECTION_URL)",
    )
    group.add_argument(
        "--oauth-client-id",
        default=env("MCPKIT_OAUTH_CLIENT_ID"),
        help="this server's client id at the authorization server (env MCPKIT_OAUTH_CLIENT_ID)",
    )
    group.add_argument(
        "--oauth-client-secret",
        default=env("MCPKIT_OAUTH_CLIENT_SECRET"),
        help="its client secret (prefer env MCPKIT_OAUTH_CLIENT_SECRET: arguments are"
        " visible to other users)",
    )
    group.add_argument(
        "--oauth-scope",
        action="append",
        default=_env_list("MCPKIT_OAUTH_SCOPES"),
        metavar="SCOPE",
        help="a scope every token must carry; repeat for more"
        " (env MCPKIT_OAUTH_SCOPES, comma-separated)",
    )
    group.add_argument(
        "--resource-url",
        default=env("MCPKIT_RESOURCE_URL"),
        metavar="URL",
        help="the URL clients reach this server at, which tokens must name as audience"
        " (env MCPKIT_RESOURCE_URL; default http://HOST:PORT/mcp, required off loopback)",
    )
