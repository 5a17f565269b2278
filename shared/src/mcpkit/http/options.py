"""The command-line options of the HTTP transports, each also read from the environment."""

import argparse
import os
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from ..envargs import flag_default
from .auth import Authenticator, StaticToken
from .config import HttpConfig
from .guard import host_header, is_loopback

_DEFAULTS = HttpConfig()
N = TypeVar("N", int, float)


BEARER_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")
"""The characters a bearer token is made of (RFC 6750, section 2.1)."""


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
        default=env("MCPKIT_HOST", _DEFAULTS.host),
        help="address to bind (env MCPKIT_HOST; default %(default)s)",
    )
    group.add_argument(
        "--port",
        type=_port,
        default=env("MCPKIT_PORT", str(_DEFAULTS.port)),
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
        default=env("MCPKIT_MAX_BODY", str(_DEFAULTS.max_body)),
        metavar="BYTES",
        help="largest request body accepted (default %(default)s)",
    )
    group.add_argument(
        "--max-sessions",
        type=_positive(int),
        default=env("MCPKIT_MAX_SESSIONS", str(_DEFAULTS.max_sessions)),
        help="sessions held at once; more are refused with 503 (default %(default)s)",
    )
    group.add_argument(
        "--session-idle-timeout",
        type=_positive(float),
        metavar="SECONDS",
        default=env("MCPKIT_SESSION_IDLE_TIMEOUT", str(_DEFAULTS.session_idle_timeout)),
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


def http_config(
    parser: argparse.ArgumentParser, args: argparse.Namespace, auth: Authenticator | None = None
) -> HttpConfig:
    """Return the HTTP configuration the arguments describe.

    Exits through `parser.error` when the server would be reachable from the network
    without authentication, or the authentication options do not fit together.
    """
    if auth is None:
        auth = _authenticator(parser, args)
    if auth is None and not is_loopback(args.host):
        parser.error(
            f"refusing to serve {args.host} without authentication: anyone on the network could"
            " use this server. Set --auth-token (or MCPKIT_AUTH_TOKEN) or OAuth"
            " (--oauth-introspection-url), or bind 127.0.0.1."
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


def _authenticator(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> Authenticator | None:
    """Return the shared-token or OAuth authenticator the arguments configure, or None.

    Exits through `parser.error` when both are configured.
    """
    if args.auth_token and args.oauth_introspection_url:
        parser.error("--auth-token and OAuth (--oauth-introspection-url) exclude each other")
    if args.auth_token:
        if not BEARER_TOKEN.fullmatch(args.auth_token):
            # Another character could never match: headers arrive as Latin-1, and spaces
            # around a token are not part of it.
            parser.error(
                "--auth-token (MCPKIT_AUTH_TOKEN) must be a bearer token: ASCII letters,"
                " digits and -._~+/ , then any '=' (RFC 6750); `openssl rand -hex 32` makes one"
            )
        return StaticToken(args.auth_token)
    return _oauth(parser, args)


def _oauth(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Authenticator | None:
    """Return the OAuth resource server the arguments configure, or None without OAuth.

    Exits through `parser.error` when the OAuth options are incomplete or unusable.
    """
    settings = {
        "--oauth-issuer": args.oauth_issuer,
        "--oauth-client-id": args.oauth_client_id,
        "--oauth-client-secret": args.oauth_client_secret,
    }
    if not args.oauth_introspection_url:
        optional = {"--oauth-scope": args.oauth_scope, "--resource-url": args.resource_url}
        stray = [flag for flag, value in {**settings, **optional}.items() if value]
        if stray:
            parser.error(f"{stray[0]} needs --oauth-introspection-url (OAuth is off without it)")
        return None
    missing = [flag for flag, value in settings.items() if not value]
    if missing:
        parser.error(f"--oauth-introspection-url needs {' and '.join(missing)}")
    if not args.resource_url and not is_loopback(args.host):
        parser.error(
            f"OAuth on {args.host} needs --resource-url: the URL clients reach this server at,"
            " which the authorization server puts in the tokens' audience"
        )
    from .oauth import OAuthResourceServer  # httpx loads only when OAuth is configured

    try:
        return OAuthResourceServer(
            resource=args.resource_url
            or f"http://{host_header(args.host, args.port)}{_DEFAULTS.path}",
            issuer=args.oauth_issuer,
            introspection_url=args.oauth_introspection_url,
            client_id=args.oauth_client_id,
            client_secret=args.oauth_client_secret,
            scopes=args.oauth_scope,
        )
    except ValueError as exc:
        parser.error(str(exc))
