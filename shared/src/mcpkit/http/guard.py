"""DNS-rebinding and cross-origin defence: which Host and Origin headers are let in.

A browser page on another site can make requests to a server on 127.0.0.1, and a DNS
name can be rebound to 127.0.0.1; checking Host (421) and Origin (403) on every endpoint
stops both. Requests without an Origin (every non-browser client) pass the Origin check.
CORS headers go only to the origins the operator allowed; by default there are none.
"""

import ipaddress
import re
from collections.abc import Iterable

from .addresses import WILDCARDS, bound_addresses
from .asgi import Request, Response, error_response
from .headers import PARAM_HEADER_PREFIX

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_CORS_METHODS = "GET, POST, DELETE, OPTIONS"
_PARAM_HEADER = re.compile(rf"{PARAM_HEADER_PREFIX}[!#$%&'*+.^_`|~0-9a-z-]+")
"""An `Mcp-Param-*` header's name, as a preflight asks for it (lower case)."""
MAX_PARAM_HEADERS = 64
_CORS_REQUEST_HEADERS = (
    "authorization, content-type, last-event-id, mcp-method, mcp-name, mcp-protocol-version,"
    " mcp-session-id"
)
_CORS_EXPOSED_HEADERS = "mcp-session-id, www-authenticate"


def host_header(host: str, port: int) -> str:
    """Return `host:port` as it appears in a Host header (IPv6 in brackets)."""
    name = f"[{host}]" if ":" in host else host
    return f"{name}:{port}"


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the server reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name: it could resolve to anything
        return False


class OriginGuard:
    """Checks Host and Origin against allowlists and answers CORS for allowed origins."""

    def __init__(
        self, host: str, port: int, allowed_hosts: Iterable[str], allowed_origins: Iterable[str]
    ) -> None:
        """Allow the addresses the server is bound to on `port`, plus the lists.

        Bound to a wildcard, those are the loopback names and every address of the
        machine's interfaces. An allowed host "*" turns the Host check off (for a server
        behind a proxy that checks it); origins are exact `scheme://host[:port]` strings.
        """
        names = {*_LOOPBACK_NAMES} if is_loopback(host) or host in WILDCARDS else set[str]()
        names.update(bound_addresses(host))
        self.hosts = {host_header(name, port) for name in names}
        self.hosts.update(allowed_hosts)
        self.default_origins = {f"http://{name}" for name in self.hosts}
        self.cors_origins = set(allowed_origins)

    def refuse(self, request: Request) -> Response | None:
        """Return the error response for a foreign Host or Origin, or None to let it in."""
        host = request.headers.get("host", "")
        if "*" not in self.hosts and host not in self.hosts:
            return error_response(
                421,
                f"Misdirected Request: host {host!r} is not served here; the operator can"
                f" allow it with --allowed-host {host}",
            )
        origin = request.headers.get("origin")
        if origin is not None and origin not in self.default_origins | self.cors_origins:
            return error_response(
                403,
                f"Forbidden: origin {origin!r} is not allowed; the operator can allow it"
                f" with --allowed-origin {origin}",
            )
        return None

    def cors_headers(self, request: Request) -> list[tuple[str, str]]:
        """Return the CORS headers for this request's Origin (none unless it is allowed)."""
        origin = request.headers.get("origin")
        if origin is None or origin not in self.cors_origins:
            return []
        return [
            ("access-control-allow-origin", origin),
            ("access-control-expose-headers", _CORS_EXPOSED_HEADERS),
            ("vary", "origin"),
        ]

    def preflight(self, request: Request) -> Response:
        """Answer an OPTIONS preflight: allowed only for the configured origins."""
        if not self.cors_headers(request):
            return error_response(403, "Forbidden: cross-origin requests are not allowed")
        # A tool's arguments in headers (2026-07-28) have names of its own: those asked for.
        asked = request.headers.get("access-control-request-headers", "").lower().split(",")
        params = [name for name in map(str.strip, asked) if _PARAM_HEADER.fullmatch(name)]
        return Response(
            204,
            headers={
                "access-control-allow-methods": _CORS_METHODS,
                "access-control-allow-headers": ", ".join(
                    [_CORS_REQUEST_HEADERS, *params[:MAX_PARAM_HEADERS]]
                ),
                "access-control-max-age": "600",
            },
        )
