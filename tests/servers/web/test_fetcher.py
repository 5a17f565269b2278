"""The safe fetcher against a stub site on 127.0.0.1: pinning, redirects, caps, deadline."""

import gzip
import time
import tracemalloc
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, ClassVar, cast

import pytest

from mcpkit_web.__main__ import configured_server, make_parser
from mcpkit_web.addresses import Policy
from mcpkit_web.errors import Refused, WebError
from mcpkit_web.fetcher import (
    MAX_URL_CHARS,
    Fetched,
    Settings,
    check_url,
    fetch,
    make_client,
    read_capped,
)
from servers.web.conftest import STUB_ADDRESS
from servers.web.stub import Route, Site

if TYPE_CHECKING:
    import httpx

PUBLIC = Policy(private_allowed=STUB_ADDRESS)
DEFAULTS = Settings()


async def fetch_with(
    url: str, policy: Policy = PUBLIC, settings: Settings = DEFAULTS, timeout: float | None = None
) -> Fetched:
    async with make_client(policy, settings) as client:
        return await fetch(client, policy, settings, url, timeout=timeout)


async def test_a_page_is_fetched_through_a_name_pinned_to_the_checked_address(site: Site) -> None:
    lookups: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        # The first answer passes the check; every later one would point inside.
        lookups.append(host)
        return ["127.0.0.1"] if len(lookups) == 1 else ["10.0.0.1"]

    site.page("/", "<p>hello</p>")
    policy = Policy(private_allowed=STUB_ADDRESS, resolver=rebinding)
    settings = Settings()
    async with make_client(policy, settings) as client:
        page = await fetch(client, policy, settings, site.url("/", "rebind.test"))
    assert page.body == b"<p>hello</p>"
    assert page.status == 200
    assert lookups == ["rebind.test"]  # resolved once; that answer was dialled
    assert site.seen[-1][1]["host"] == f"rebind.test:{site.port}"  # Host keeps the name


async def test_a_rebinding_name_answering_private_first_is_refused(site: Site) -> None:
    async def private(host: str, port: int) -> list[str]:
        return ["127.0.0.2"]

    policy = Policy(private_allowed=STUB_ADDRESS, resolver=private)
    with pytest.raises(WebError, match="non-public"):
        await fetch_with(site.url("/", "rebind.test"), policy)
    assert site.seen == []


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/",
        "http://localhost:{port}/",
        "http://2130706433:{port}/",
        "http://0x7f.1:{port}/",
        "http://0177.0.0.1:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
        "http://127.1:{port}/",
    ],
)
async def test_loopback_is_refused_by_default(site: Site, url: str) -> None:
    with pytest.raises(WebError, match="non-public"):
        await fetch_with(url.format(port=site.port), Policy())
    assert site.seen == []


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/",
        "gopher://x/",
        "http://user:pw@example.com/",
        "http:///nohost",
        "javascript:alert(1)",
    ],
)
async def test_other_schemes_and_credentials_are_refused(url: str) -> None:
    with pytest.raises(WebError):
        await fetch_with(url)


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.2:{port}/",
        "http://0x7f000002:{port}/",
        "http://[::1]:{port}/",
        "http://[::ffff:7f00:2]:{port}/",
        "http://[64:ff9b::7f00:2]:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "file:///etc/passwd",
    ],
)
async def test_each_redirect_hop_is_checked_again(site: Site, target: str) -> None:
    site.routes["/go"] = Route(status=302, headers={"location": target.format(port=site.port)})
    with pytest.raises(WebError):
        await fetch_with(site.url("/go"))
    assert [path for path, _ in site.seen] == ["/go"]


async def test_redirects_are_followed_and_capped(site: Site) -> None:
    site.page("/end", "done")
    site.routes["/a"] = Route(status=301, headers={"location": "/b"})
    site.routes["/b"] = Route(status=307, headers={"location": site.url("/end")})
    page = await fetch_with(site.url("/a"))
    assert page.url == site.url("/end")
    assert page.hops == (site.url("/a"), site.url("/b"))
    site.routes["/loop"] = Route(status=302, headers={"location": "/loop"})
    with pytest.raises(WebError, match="more than 5 redirects"):
        await fetch_with(site.url("/loop"))
    assert site.hits("/loop") == 6


async def test_a_gzip_bomb_stops_at_the_decoded_cap(site: Site) -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)
    site.routes["/bomb"] = Route(bomb, headers={"content-encoding": "gzip"})
    with pytest.raises(WebError, match="1000000-byte download cap"):
        await fetch_with(site.url("/bomb"), settings=Settings(max_bytes=1_000_000))
    site.routes["/small"] = Route(gzip.compress(b"x" * 1000), headers={"content-encoding": "gzip"})
    assert (await fetch_with(site.url("/small"))).body == b"x" * 1000


async def test_a_corrupt_gzip_body_is_a_clear_error_and_the_next_fetch_works(site: Site) -> None:
    # The body is left unread: its connection is closed and httpx's readers ended (on trio
    # a reader left for the garbage collector is a ResourceWarning, an error here).
    corrupt = b"not gzip at all " * 20_000
    site.routes["/corrupt"] = Route(corrupt, headers={"content-encoding": "gzip"})
    site.routes["/after"] = Route(b"fine")
    client = make_client(PUBLIC, DEFAULTS)
    async with client:
        with pytest.raises(WebError, match="gzip body is corrupt"):
            await fetch(client, PUBLIC, DEFAULTS, site.url("/corrupt"))
        assert (await fetch(client, PUBLIC, DEFAULTS, site.url("/after"))).body == b"fine"


async def test_an_oversized_body_is_refused(site: Site) -> None:
    site.routes["/big"] = Route(b"a" * 2000)
    with pytest.raises(WebError, match="over the 1000-byte download cap"):
        await fetch_with(site.url("/big"), settings=Settings(max_bytes=1000))


async def test_a_cut_fetch_keeps_the_head_of_a_body_over_the_cap(site: Site) -> None:
    # For robots.txt: the cap cuts the body (plain or inflated) instead of refusing it,
    # and the next fetch on the client works (the rest was left unread).
    settings = Settings(max_bytes=1000)
    body = bytes(range(256)) * 40_000  # 10 MB
    site.routes["/plain"] = Route(body)
    site.routes["/bomb"] = Route(gzip.compress(body), headers={"content-encoding": "gzip"})
    site.routes["/after"] = Route(b"fine")
    async with make_client(PUBLIC, settings) as client:
        for path in ("/plain", "/bomb"):
            page = await fetch(client, PUBLIC, settings, site.url(path), cut=True)
            assert page.body == body[:1000]
        assert (await fetch(client, PUBLIC, settings, site.url("/after"))).body == b"fine"


async def test_an_unknown_encoding_is_refused(site: Site) -> None:
    site.routes["/br"] = Route(b"zz", headers={"content-encoding": "br"})
    with pytest.raises(WebError, match="unsupported content-encoding"):
        await fetch_with(site.url("/br"))


async def test_a_trickling_server_cannot_hold_the_call(site: Site) -> None:
    site.routes["/slow"] = Route(b"x" * 100, trickle=0.05)
    started = time.monotonic()
    with pytest.raises(WebError, match=r"longer than 0\.5 s"):
        await fetch_with(site.url("/slow"), timeout=0.5)
    assert time.monotonic() - started < 2


async def test_a_call_cannot_ask_for_longer_than_the_operators_deadline(site: Site) -> None:
    site.routes["/slow"] = Route(b"x" * 100, trickle=0.05)
    with pytest.raises(WebError, match=r"longer than 0\.5 s"):
        await fetch_with(site.url("/slow"), settings=Settings(timeout=0.5), timeout=300)


async def test_a_pause_longer_than_httpx_default_read_timeout_is_within_the_deadline(
    site: Site,
) -> None:
    # httpx gives up after 5 s without a byte, with the message "ReadTimeout: ": only the
    # fetch's own deadline may end it, and then say so.
    site.routes["/pause"] = Route(b"xy", trickle=5.5)
    page = await fetch_with(site.url("/pause"), timeout=10)
    assert page.body == b"xy"


class TwoBytesAtATime:
    """A response whose body comes in chunks of two bytes, as a hostile server may send it."""

    headers: ClassVar[dict[str, str]] = {}

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        for _ in range(250_000):
            yield b"ab"


async def test_a_body_of_tiny_chunks_is_held_as_its_bytes() -> None:
    tracemalloc.start()
    try:
        body = await read_capped(cast("httpx.Response", TwoBytesAtATime()), 10_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert body == b"ab" * 250_000
    assert peak < 3_000_000  # a list of the chunks took 9 MB for this half-megabyte


class GzipThenEndless:
    """A gzip body followed by zeros without end, as a hostile server may send it."""

    headers: ClassVar[dict[str, str]] = {"content-encoding": "gzip"}

    def __init__(self) -> None:
        self.sent = 0
        self.closed = False

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        yield gzip.compress(b"the body")
        while not self.closed and self.sent < 200:
            self.sent += 1
            yield b"\0" * 65536

    async def aclose(self) -> None:
        self.closed = True


async def test_what_follows_a_gzip_body_is_not_read_on() -> None:
    # It went into zlib's unused_data, uncapped and copied at every chunk: 125 MB and a
    # busy core for a server that kept sending.
    response = GzipThenEndless()
    body = await read_capped(cast("httpx.Response", response), 10_000_000)
    assert body == b"the body"
    assert response.sent == 1


@pytest.mark.parametrize("location", ["HTTP://public.test/plain", "http://public.test/plain"])
async def test_a_redirect_from_https_to_plain_http_is_refused_whatever_its_case(
    location: str,
) -> None:
    import httpx

    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        if request.url.scheme == "https":
            return httpx.Response(302, headers={"location": location})
        return httpx.Response(200, content=b"sent in the clear")

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        with pytest.raises(Refused, match="from https to plain http"):
            await fetch(client, Policy(), DEFAULTS, "HTTPS://public.test/start")
    assert asked == ["https://public.test/start"]


def test_a_url_longer_than_max_url_chars_is_refused_before_anything_else() -> None:
    # Each URL is matched against every robots.txt rule of its site: 2 MB against 33,000
    # rules froze the server for a minute.
    url = "https://example.com/" + "a" * MAX_URL_CHARS
    with pytest.raises(WebError, match="longer than 8,192 characters"):
        check_url(url, Policy())
    assert check_url(url[:MAX_URL_CHARS], Policy()) == ("example.com", 443)


def test_a_user_agent_with_control_characters_is_refused_at_start() -> None:
    # Accepted, it made every fetch fail, reported as "robots.txt could not be fetched".
    args = make_parser().parse_args(["--user-agent", "mcp-web\r\nX-Injected: 1"])
    with pytest.raises(ValueError, match="no control characters"):
        configured_server(args)


@pytest.mark.parametrize(
    ("flag", "rule", "message"),
    [
        ("--deny-host", "10.0.0.0/33", "neither a host nor a range"),
        ("--deny-host", "name/8", "neither a host nor a range"),
        ("--allow-host", "10.0.0.0/8", "not ranges"),
        ("--allow-private-address", "intranet.local", "neither an address nor a range"),
        ("--allow-private-address", "10.0.0.0/33", "neither an address nor a range"),
    ],
)
def test_a_host_rule_that_would_do_nothing_is_refused_at_start(
    flag: str, rule: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        configured_server(make_parser().parse_args([flag, rule]))


async def test_a_redirect_s_target_is_the_url_asked_for_percent_encoded(site: Site) -> None:
    # The site's Location, tag characters and bidi overrides in it, became the page's URL,
    # which tools show outside the page's frame; encoded, it names the same page.
    location = "/to\u202e\U000e0041".encode().decode("latin-1")  # the header's UTF-8 bytes
    site.routes["/go"] = Route(status=302, headers={"location": location})
    site.page("/to%E2%80%AE%F3%A0%81%81", "<p>here</p>")
    page = await fetch_with(site.url("/go"))
    assert page.url == site.url("/to%E2%80%AE%F3%A0%81%81")
    assert page.body == b"<p>here</p>"


async def test_a_header_that_cannot_be_sent_fails_the_fetch_as_a_web_error(site: Site) -> None:
    # httpx sends header values as ASCII: a page's ETag sent back raised UnicodeEncodeError.
    site.page("/", "<p>here</p>")
    async with make_client(PUBLIC, DEFAULTS) as client:
        with pytest.raises(WebError, match="UnicodeEncodeError"):
            await fetch(
                client, PUBLIC, DEFAULTS, site.url("/"), headers={"if-none-match": "\u00e9"}
            )
    assert site.seen == []
