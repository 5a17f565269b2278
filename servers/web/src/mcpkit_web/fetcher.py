"""The safe fetcher: one GET, redirects followed by hand, every connection to a checked address.

Each new connection resolves its host once through the operator's `Policy` and dials an
address that passed the check (`PinnedBackend`), while the request keeps the name for
`Host`, TLS SNI and certificate checks; a rebinding DNS answer on a second lookup never
matters because there is none. Redirects are followed here, at most `max_redirects`,
each hop's URL checked again (scheme, credentials, host rules, no https to http). The
body is read raw and decoded here with a cap on the decoded size, so a gzip bomb stops at
the cap, and one deadline covers the whole fetch (a server trickling bytes cannot hold a
call). httpx and httpcore are imported on first use: start-up stays fast.
"""

import re
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import anyio

from .addresses import BlockedAddress, Policy, literal_address
from .errors import Refused, WebError, shown

if TYPE_CHECKING:
    import httpx

REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_URL_CHARS = 8192
"""The longest URL asked for (servers commonly refuse longer): a URL is matched against
every robots.txt rule of its site, and 2 MB against 33,000 rules froze the server a minute."""


@dataclass(frozen=True)
class Settings:
    """How fetches are made: user agent, caps, deadline and proxy.

    `proxy`: None connects directly; any other value is a proxy URL (`--proxy env` is read
    into one at start).
    """

    user_agent: str = "mcp-web/0.1 (+https://github.com/mcpkit/mcpkit)"
    max_bytes: int = 10_000_000
    timeout: float = 30.0
    max_redirects: int = 5
    proxy: str | None = None

    def deadline(self, timeout: float | None) -> float:
        """Return the seconds a fetch may take: a call may ask for less, never for more."""
        return self.timeout if timeout is None else min(timeout, self.timeout)


@dataclass(frozen=True)
class Fetched:
    """A response: final URL, status, headers (lower-case names), decoded body, timing."""

    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    seconds: float
    hops: tuple[str, ...] = field(default=())
    stylesheets: Mapping[str, str] = field(default_factory=dict[str, str])
    """The text of each stylesheet an HTML page links to, by the `href` it gives (`linked`)."""

    @property
    def size(self) -> int:
        """The bytes of the body and the characters of the stylesheets: what it holds."""
        return len(self.body) + sum(map(len, self.stylesheets.values()))

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower case ("" when absent or malformed).

        A malformed one is taken as absent: the site writes the header, and its words
        would reach the model in mcp-web's own ("Content type ... cannot be simplified").
        """
        media_type = self.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        return media_type if _MEDIA_TYPE.fullmatch(media_type) else ""

    @property
    def is_html(self) -> bool:
        """Whether the response says it is HTML, or says nothing of its type."""
        return self.content_type in ("text/html", "application/xhtml+xml", "")


Hop = Callable[[str], Awaitable[object]]
"""Told where a redirect leads before it is followed; raises `WebError` to refuse it."""
_MEDIA_TYPE = re.compile(r"[a-z0-9!#$&^_.+-]{1,127}/[a-z0-9!#$&^_.+-]{1,127}")
"""A media type as RFC 6838 names them: `type/subtype`, restricted characters."""


def check_url(url: str, policy: Policy) -> tuple[str, int]:
    """Return the host and port of `url` if mcp-web may ask for it.

    Raises:
        WebError: too long, not http(s), credentials in the URL, no host, or a host the
            rules exclude.
    """
    if len(url) > MAX_URL_CHARS:
        raise WebError(f"the URL is longer than {MAX_URL_CHARS:,} characters: {shown(url)}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebError(f"not a valid URL: {shown(url)!r}") from exc
    if parts.scheme not in ("http", "https"):
        raise Refused(f"only http and https URLs can be fetched, not {parts.scheme or 'none'!r}")
    if parts.username is not None or parts.password is not None:
        raise Refused("URLs with credentials (user:password@) are refused")
    if not parts.hostname:
        raise WebError(f"URL has no host: {shown(url)!r}")
    _check_host(parts.hostname, policy)  # as written: httpx refuses 0177.0.0.1 less clearly
    host = _host(url)
    _check_host(host, policy)
    return host, port or (443 if parts.scheme == "https" else 80)


def _check_host(host: str, policy: Policy) -> None:
    """Refuse `host` if the rules exclude it or it is a non-public address.

    Raises:
        Refused: it is.
    """
    try:
        policy.check_host(host)
        literal = literal_address(host)
        if literal is not None and not policy.allowed(literal):
            raise BlockedAddress(
                f"{host!r} is a non-public address; mcp-web reaches only public"
                " addresses (the operator may pass --allow-private-network)"
            )
    except BlockedAddress as exc:
        raise Refused(str(exc)) from exc


def _host(url: str) -> str:
    """Return the host of `url` as httpx will ask for it (IDNA-normalised, lower case).

    Raises:
        WebError: it is no valid host name.
    """
    import httpx

    try:
        # Not urlsplit's: "blocked\u3002test" is blocked.test to httpx, and went through a
        # proxy past a --deny-host of blocked.test.
        host = httpx.URL(url).host
    except (httpx.InvalidURL, UnicodeError) as exc:  # IDNA refuses xn--localhost, say
        raise WebError(f"not a valid URL: {shown(url)!r} ({shown(str(exc))})") from exc
    return host


def proxy_url(given: str | None) -> str | None:
    """Return the proxy every request goes through: `given`, or for `env` the environment's.

    Under `env` the proxy is read once, here: left to httpx, a request that NO_PROXY names,
    or any request when no proxy variable is set, went out directly without the address
    checks of a direct connection.

    Raises:
        ValueError: `given` is no http(s) URL with a host, or `env` finds no single proxy.
    """
    if given != "env":
        if given is not None:
            parts = urlsplit(given)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"--proxy must be an http:// or https:// URL, not {given!r}")
        return given
    import urllib.request  # here: it costs a tenth of the start, and only `env` needs it

    found = urllib.request.getproxies_environment()
    named = {found[scheme] for scheme in ("https", "http", "all") if found.get(scheme)}
    if len(named) != 1:
        raise ValueError(
            "--proxy env needs one proxy in HTTPS_PROXY, HTTP_PROXY or ALL_PROXY"
            f" ({len(named)} found); pass --proxy URL instead"
        )
    return proxy_url(named.pop())


def make_client(policy: Policy, settings: Settings) -> "httpx.AsyncClient":
    """Return the shared client: connections pinned to checked addresses, no environment."""
    import httpx

    if settings.proxy is not None:
        # Through a proxy the proxy resolves and dials; `fetch` checks the name beforehand.
        return httpx.AsyncClient(proxy=settings.proxy, trust_env=False, timeout=None)
    import httpcore

    from .pinned import PinnedBackend

    # One TLS context for both (loading the CA bundle costs tens of milliseconds).
    ssl_context = httpx.create_ssl_context(trust_env=False)
    transport = httpx.AsyncHTTPTransport(verify=ssl_context, trust_env=False)
    # httpx takes no network backend, so its pool is replaced by one dialling through ours.
    transport._pool = httpcore.AsyncConnectionPool(  # pyright: ignore[reportPrivateUsage]
        ssl_context=ssl_context,
        network_backend=PinnedBackend(policy),
        max_connections=20,
        keepalive_expiry=30.0,
    )
    # No timeout of httpx's own (5 s between two reads): the fetch's one deadline decides.
    return httpx.AsyncClient(transport=transport, trust_env=False, timeout=None)


async def fetch(
    client: "httpx.AsyncClient",
    policy: Policy,
    settings: Settings,
    url: str,
    *,
    timeout: float | None = None,
    headers: Mapping[str, str] | None = None,
    cut: bool = False,
    before_hop: Hop | None = None,
) -> Fetched:
    """GET `url` safely (see the module): follow redirects by hand, cap the body, one deadline.

    With `cut`, a body over the download cap is cut there instead of refused: for a file
    whose head is all that is read (robots.txt). `headers` go to `url`'s origin alone: a
    search service's key went along a redirect to another site. `before_hop` is awaited with each
    redirect's target before it is asked for, and may refuse it (robots.txt).

    Raises:
        WebError: the URL or a hop is refused, the body is too large (unless `cut`), the
            deadline passed, or the request failed; the message says which.
    """
    import httpx

    deadline = settings.deadline(timeout)
    started = time.perf_counter()
    hops: list[str] = []
    current = url
    try:
        with anyio.fail_after(deadline):
            for _ in range(settings.max_redirects + 1):
                host, port = check_url(current, policy)
                if settings.proxy is not None:
                    await policy.resolve(host, port)
                sent = {"user-agent": settings.user_agent, "accept-encoding": "gzip, deflate"}
                if headers and _origin(current) == _origin(url):  # a key for this origin only
                    sent.update(headers)
                async with client.stream("GET", current, headers=sent) as response:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECTS and location:
                        following = _redirect(current, location)
                        # Schemes as urlsplit gives them, lower case: `HTTP://` is http too.
                        schemes = urlsplit(current).scheme, urlsplit(following).scheme
                        if schemes == ("https", "http"):
                            raise Refused("refused a redirect from https to plain http")
                        if before_hop is not None:
                            await before_hop(following)
                        hops.append(current)
                        current = following
                        continue
                    body = await read_capped(response, settings.max_bytes, cut=cut)
                    return Fetched(
                        url=current,
                        status=response.status_code,
                        headers={k.lower(): v for k, v in response.headers.items()},
                        body=body,
                        seconds=time.perf_counter() - started,
                        hops=tuple(hops),
                    )
            raise WebError(f"more than {settings.max_redirects} redirects from {shown(url)}")
    except TimeoutError as exc:
        raise WebError(f"fetching {shown(url)} took longer than {deadline:g} s") from exc
    except BlockedAddress as exc:
        raise Refused(str(exc)) from exc
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:
        # UnicodeError: a header value httpx cannot send (not ASCII), a host IDNA refuses.
        problem = f"{type(exc).__name__}: {shown(str(exc))}"
        raise WebError(f"could not fetch {shown(current)}: {problem}") from exc


def _origin(url: str) -> tuple[str, str | None, int | None]:
    """Return the scheme, host and port of the checked `url`: what a browser calls its origin."""
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.hostname, parts.port


def _redirect(current: str, location: str) -> str:
    """Return where a redirect from `current` to `location` leads, written as it is asked for.

    That is percent-encoded, with its host in IDNA, as httpx sends it: the page's URL that
    tools show is the site's choice, and a `Location` header's tag characters or bidi
    overrides reached the model in it. Encoded, the URL still names the same page.

    Raises:
        WebError: `location` is no URL (`http://[oops`: an IPv6 address never closed; a
            host that IDNA refuses).
    """
    import httpx

    try:
        return str(httpx.URL(urljoin(current, location)))
    except (ValueError, httpx.InvalidURL) as exc:
        raise WebError(
            f"{shown(current)} redirects to {shown(location)!r}, which is no URL: {exc}"
        ) from None


async def read_capped(response: "httpx.Response", cap: int, *, cut: bool = False) -> bytes:
    """Return the decoded body, at most `cap` bytes however much it inflates.

    With `cut`, a longer body is cut at `cap` bytes (the rest is left unread).

    Raises:
        WebError: the declared or decoded size passes the cap (unless `cut`), or the
            encoding is unknown.
    """
    declared = response.headers.get("content-length", "")
    if not cut and declared.isdigit() and int(declared) > cap:
        raise WebError(f"the response is {declared} bytes, over the {cap}-byte download cap")
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        decoder: Any = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
    elif encoding in ("identity", ""):
        decoder = None
    else:
        raise WebError(f"unsupported content-encoding {encoding!r}")
    # One buffer, not a list of chunks: a body sent two bytes at a time would be five
    # million bytes objects of some 35 bytes each.
    body = bytearray()
    chunks = response.aiter_raw()
    try:
        async for raw in chunks:
            try:
                chunk = raw if decoder is None else decoder.decompress(raw, cap - len(body) + 1)
            except zlib.error as exc:
                raise WebError(f"the response's {encoding} body is corrupt") from exc
            if len(body) + len(chunk) > cap:
                if not cut:
                    raise WebError(f"the response passed the {cap}-byte download cap (decoded)")
                body += chunk[: cap - len(body)]
                await _abandon(response, chunks)
                break
            body += chunk
            if decoder is not None and decoder.unused_data:
                # Bytes after the end of the compressed body are none of it: read on, they
                # were kept in zlib's unused_data, without a cap.
                await _abandon(response, chunks)
                break
    except WebError:
        await _abandon(response, chunks)
        raise
    return bytes(body)


async def _abandon(response: "httpx.Response", chunks: AsyncIterator[bytes]) -> None:
    """Close the connection under a body left unread, and let httpx's readers finish.

    httpx reads a body through a chain of async generators; left suspended, they would be
    closed only by the garbage collector (which trio reports as a ResourceWarning). Once the
    connection is closed, the next read fails at once and ends every one of them.
    """
    import httpx

    await response.aclose()
    try:
        async for _ in chunks:
            pass  # at most what was already received before the connection closed
    except httpx.HTTPError:
        pass
