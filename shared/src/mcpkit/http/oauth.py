"""An OAuth 2.1 resource server: bearer tokens checked at the authorization server.

What the MCP authorization spec (2025-06-18, 2025-11-25) asks of an HTTP server:

- Discovery (RFC 9728). A request without a token gets 401 and a challenge naming the
  protected resource metadata, `/.well-known/oauth-protected-resource<path>`, which lists
  the authorization server that issues tokens for this server.
- Validation. Each token is sent to the authorization server's introspection endpoint
  (RFC 7662) with this server's client credentials; it must be active, unexpired, and
  issued for this server: its audience must contain the canonical resource URI (RFC 8707).
  Required scopes missing give 403 `insufficient_scope`.
- No token passthrough. The token goes to the introspection endpoint and nowhere else; it
  is never logged, and the cache of recent results is keyed by its SHA-256 digest.

The principal of a request names the token's subject and client, so a session created with
one user's token cannot be used with another's. Imported only when OAuth is configured:
this module loads httpx.
"""

import hashlib
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote_plus, urlsplit

import anyio
import httpx
import pydantic

from .asgi import Request, Response, error_response, json_response
from .auth import Unauthorized, bearer_token
from .guard import is_loopback

logger = logging.getLogger("mcpkit.http.oauth")

WELL_KNOWN = "/.well-known/oauth-protected-resource"
CACHE_TTL = 60.0
"""Seconds an introspection result is trusted, at most (less when the token expires first)."""
REFUSAL_TTL = 10.0
"""Seconds a token found invalid is refused without asking again: a client sending one bad
token over and over made one introspection a request, with no bound."""
MAX_INTROSPECTIONS = 8
"""Introspections under way at once; requests with other new tokens wait their turn."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 section 3.3
_URL_FORBIDDEN = re.compile(r'[\s"\\]')  # would break out of a quoted challenge parameter
_MAX_ANSWER = 64 << 10  # bytes of an introspection response read, at most


class Introspection(pydantic.BaseModel):
    """The members of an introspection response (RFC 7662 section 2.2) this server reads."""

    model_config = pydantic.ConfigDict(strict=True, frozen=True)

    active: bool
    exp: float | None = None
    aud: str | list[str] | None = None
    scope: str | None = None
    sub: str | None = None
    client_id: str | None = None


@dataclass(frozen=True)
class Grant:
    """What a valid token allows: who it speaks for, its scopes, how long to trust that."""

    principal: str
    scopes: frozenset[str]
    expires: float
    """`time.monotonic()` after which the token must be introspected again."""


@dataclass(frozen=True)
class Refusal:
    """Why a token is not valid here, and until when to say so without asking again."""

    reason: str
    expires: float
    """`time.monotonic()` after which the token must be introspected again."""


class GrantCache:
    """Introspected tokens' grants and refusals, by digest, least recently used out first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._grants: OrderedDict[bytes, Grant | Refusal] = OrderedDict()

    def __len__(self) -> int:
        return len(self._grants)

    def get(self, key: bytes) -> Grant | Refusal | None:
        """Return what is kept under `key`, unless there is none or it has expired."""
        grant = self._grants.get(key)
        if grant is None:
            return None
        if grant.expires <= time.monotonic():
            del self._grants[key]
            return None
        self._grants.move_to_end(key)
        return grant

    def put(self, key: bytes, known: Grant | Refusal) -> None:
        """Keep `known` under `key`, dropping the least recently used beyond the size."""
        self._grants[key] = known
        self._grants.move_to_end(key)
        while len(self._grants) > self.size:
            self._grants.popitem(last=False)


class _BadAnswer(Exception):
    """The introspection endpoint did not give a usable answer."""


def _unavailable() -> Unauthorized:
    """The 503 refusing a token the authorization server could not check."""
    return Unauthorized(
        503, "Service Unavailable: the authorization server could not check the token", None
    )


def canonical_uri(uri: str) -> str | None:
    """Return `uri` in the form resource URIs are compared in, or None if it is not one.

    Scheme and host lowercase, the default port left out, no trailing slash (RFC 8707 and
    the MCP spec's canonical server URI). Only absolute http(s) URIs without user
    information or fragment are resource URIs.
    """
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:  # a port that is no number, or a malformed IPv6 address
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in _DEFAULT_PORTS or not host or "@" in parts.netloc or parts.fragment:
        return None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    query = f"?{parts.query}" if parts.query else ""
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}{query}"


def resource_uri(url: str) -> str:
    """Return the canonical form of this server's resource URI.

    Raises:
        ValueError: `url` is not an absolute http(s) URL, or has a query or fragment.
    """
    canonical = canonical_uri(url)
    if canonical is None or "?" in canonical or _URL_FORBIDDEN.search(canonical):
        raise ValueError(
            f"the resource URL must be an absolute http(s) URL without query or fragment: {url!r}"
        )
    return canonical


def secure_url(what: str, url: str) -> str:
    """Return `url` if credentials may be sent to it: https, or http to a loopback address.

    Raises:
        ValueError: `url` is another kind of URL, naming `what` it was meant to be.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    secure = (parts.scheme == "https" and host) or (parts.scheme == "http" and is_loopback(host))
    if secure and "@" not in parts.netloc:
        return url
    raise ValueError(
        f"{what} must be an https:// URL without user information (http:// only on a"
        f" loopback address): {url!r}"
    )


def scope_list(scopes: Sequence[str]) -> tuple[str, ...]:
    """Return the scopes, each checked against the scope-token syntax of RFC 6749.

    Raises:
        ValueError: a scope is empty or has a space, quote, backslash or control character.
    """
    for scope in scopes:
        if not _SCOPE_TOKEN.fullmatch(scope):
            raise ValueError(f"not a valid OAuth scope: {scope!r}")
    return tuple(dict.fromkeys(scopes))


class OAuthResourceServer:
    """An Authenticator accepting tokens that the authorization server vouches for."""

    def __init__(
        self,
        *,
        resource: str,
        issuer: str,
        introspection_url: str,
        client_id: str,
        client_secret: str,
        scopes: Sequence[str] = (),
        timeout: float = 5.0,
        cache_size: int = 1024,
    ) -> None:
        """Protect `resource` with tokens from `issuer`, checked at `introspection_url`.

        `client_id` and `client_secret` authenticate this server to the introspection
        endpoint (HTTP Basic); a token must carry every one of `scopes`; an introspection
        taking longer than `timeout` seconds fails.

        Raises:
            ValueError: a URL or scope that cannot be used (see `resource_uri`,
                `secure_url`, `scope_list`), or empty client credentials.
        """
        if not client_id or not client_secret:
            raise ValueError("the OAuth client id and secret must not be empty")
        self.resource = resource_uri(resource)
        self.issuer = secure_url("the issuer", issuer)
        self.introspection_url = secure_url("the introspection URL", introspection_url)
        self.scopes = scope_list(scopes)
        self.timeout = timeout
        # RFC 6749 section 2.3.1: id and secret are form-encoded before Basic encoding.
        self._client_auth = httpx.BasicAuth(quote_plus(client_id), quote_plus(client_secret))
        self._tls = httpx.create_ssl_context()  # once: loading the CA bundle takes a while
        self._cache = GrantCache(cache_size)
        self._asking: dict[bytes, anyio.Event] = {}  # tokens being introspected, by digest
        self._introspections = anyio.CapacityLimiter(MAX_INTROSPECTIONS)
        parts = urlsplit(self.resource)
        self.metadata_url = f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{parts.path}"
        self._metadata_paths = {WELL_KNOWN, f"{WELL_KNOWN}{parts.path}"}
        self._metadata = json_response(200, self._metadata_document())

    def _metadata_document(self) -> dict[str, object]:
        """The protected resource metadata (RFC 9728 section 2)."""
        document: dict[str, object] = {
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
        }
        if self.scopes:
            document["scopes_supported"] = list(self.scopes)
        return document

    def well_known(self, request: Request) -> Response | None:
        """Answer GET on the protected resource metadata, at the root or path-suffixed."""
        if request.route not in self._metadata_paths:
            return None
        if request.method != "GET":
            return error_response(405, "Method Not Allowed", headers={"allow": "GET"})
        return self._metadata

    async def authenticate(self, request: Request) -> str:
        """Return the principal of the request's token: its subject and client.

        Raises:
            Unauthorized: 401 without a valid token, 403 when it lacks a required scope,
                503 when the authorization server cannot say.
        """
        token = bearer_token(request)
        if token is None:
            raise Unauthorized(401, "Unauthorized: a bearer token is required", self._challenge())
        grant = await self._grant(token)
        if not grant.scopes.issuperset(self.scopes):
            reason = "the token lacks a required scope"
            raise Unauthorized(
                403, f"Forbidden: {reason}", self._challenge("insufficient_scope", reason)
            )
        return grant.principal

    def _challenge(self, error: str | None = None, description: str | None = None) -> str:
        """The WWW-Authenticate value: where the metadata is, the scopes, any error."""
        params: list[str] = []
        if error is not None:
            params.append(f'error="{error}"')
        if description is not None:
            params.append(f'error_description="{description}"')
        params.append(f'resource_metadata="{self.metadata_url}"')
        if self.scopes:
            params.append(f'scope="{" ".join(self.scopes)}"')
        return "Bearer " + ", ".join(params)

    def _invalid(self, reason: str) -> Unauthorized:
        """The 401 refusing a token that is not valid here, for `reason`."""
        return Unauthorized(
            401, f"Unauthorized: {reason}", self._challenge("invalid_token", reason)
        )

    async def _grant(self, token: str) -> Grant:
        """Return what `token` allows, from the cache or the authorization server.

        Raises:
            Unauthorized: the token is not valid here (401), or cannot be checked (503).
        """
        key = hashlib.sha256(token.encode()).digest()
        known = self._cache.get(key) or await self._ask(key, token)
        if isinstance(known, Refusal):
            raise self._invalid(known.reason)
        return known

    async def _ask(self, key: bytes, token: str) -> Grant | Refusal:
        """Introspect `token` (digest `key`) and keep the answer; once for requests at once.

        Raises:
            Unauthorized: 503, the authorization server cannot say.
        """
        asking = self._asking.get(key)
        if asking is not None:  # another request asks: its answer is this one's
            await asking.wait()
            known = self._cache.get(key)
            if known is None:  # the authorization server could not say
                raise _unavailable()
            return known
        done = self._asking[key] = anyio.Event()
        try:
            async with self._introspections:
                known = self._judge(await self._introspect(token))
            self._cache.put(key, known)
            return known
        finally:
            del self._asking[key]
            done.set()

    def _judge(self, claims: Introspection) -> Grant | Refusal:
        """Return the grant of an introspected token, or why it is not valid here.

        It is not if it is inactive, expired, issued for another resource, or names
        neither subject nor client.
        """
        now = time.time()
        refused = time.monotonic() + REFUSAL_TTL
        if not claims.active:
            return Refusal("the token is not active", refused)
        if claims.exp is not None and claims.exp <= now:
            return Refusal("the token has expired", refused)
        audiences = [claims.aud] if isinstance(claims.aud, str) else claims.aud or []
        if self.resource not in (canonical_uri(audience) for audience in audiences):
            return Refusal("the token was not issued for this server", refused)
        if claims.sub is None and claims.client_id is None:
            return Refusal("the token names neither a subject nor a client", refused)
        ttl = CACHE_TTL if claims.exp is None else min(claims.exp - now, CACHE_TTL)
        return Grant(
            # ASCII, as json.dumps escapes the rest: the session table compares principals
            # with secrets.compare_digest, which takes no other str.
            principal=json.dumps({"sub": claims.sub, "client_id": claims.client_id}),
            scopes=frozenset((claims.scope or "").split()),
            expires=time.monotonic() + ttl,
        )

    async def _introspect(self, token: str) -> Introspection:
        """Ask the authorization server about `token`.

        Raises:
            Unauthorized: 503 when it is unreachable, slow, or answers anything but a
                well-formed introspection response.
        """
        try:
            with anyio.fail_after(self.timeout):
                return await self._post(token)
        except TimeoutError:
            problem = f"no answer within {self.timeout:g} s"
        except httpx.HTTPError as exc:
            problem = f"{type(exc).__name__} {exc}".strip()
        except _BadAnswer as exc:
            problem = str(exc)
        logger.warning("token introspection at %s failed: %s", self.introspection_url, problem)
        raise _unavailable()

    async def _post(self, token: str) -> Introspection:
        """POST `token` to the introspection endpoint and parse the answer.

        Raises:
            httpx.HTTPError: the request failed.
            _BadAnswer: the answer is not 200, too large, or no introspection response.
        """
        async with (
            httpx.AsyncClient(
                auth=self._client_auth, verify=self._tls, timeout=self.timeout
            ) as client,
            client.stream(
                "POST",
                self.introspection_url,
                data={"token": token, "token_type_hint": "access_token"},
                headers={"accept": "application/json"},
            ) as response,
        ):
            if response.status_code != 200:
                raise _BadAnswer(f"it answered HTTP {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > _MAX_ANSWER:
                    raise _BadAnswer(f"its answer is longer than {_MAX_ANSWER} bytes")
        try:
            return Introspection.model_validate_json(body)
        except pydantic.ValidationError as exc:
            problem = f"its answer is no introspection response ({exc.error_count()} errors)"
            raise _BadAnswer(problem) from None
