"""The HTTP settings the command line chose, refused where they would be unsafe.

Apart from `options`, which every server's command line reads: this loads the HTTP
stack's authentication and address checks, which a server on stdio never needs.
"""

import argparse
import re
from collections.abc import Sequence

from .auth import Authenticator, StaticToken
from .config import HttpConfig
from .guard import host_header, is_loopback
from .options import DEFAULTS

BEARER_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")
"""The characters a bearer token is made of (RFC 6750, section 2.1)."""


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
            or f"http://{host_header(args.host, args.port)}{DEFAULTS.path}",
            issuer=args.oauth_issuer,
            introspection_url=args.oauth_introspection_url,
            client_id=args.oauth_client_id,
            client_secret=args.oauth_client_secret,
            scopes=args.oauth_scope,
        )
    except ValueError as exc:
        parser.error(str(exc))
