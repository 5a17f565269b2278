"""`--proxy`: requests go through a proxy only when the operator asks, and the guard still holds.

A forward proxy the test starts on 127.0.0.1 records what it was asked for; the stub site
records what reached it. The environment's proxy variables point at the proxy throughout,
so a fetch that should ignore them would be caught using them.
"""

from collections.abc import Iterator

import pytest

from mcpkit_web.addresses import Policy
from mcpkit_web.errors import Refused, WebError
from mcpkit_web.fetcher import Fetched, Settings, fetch, make_client, proxy_url
from servers.web.conftest import STUB_ADDRESS
from servers.web.proxy import Proxy, proxying
from servers.web.stub import Route, Site


async def internal_name(host: str, port: int) -> list[str]:
    """A resolver for which every name is a private address."""
    return ["10.0.0.7"]


PUBLIC = Policy(private_allowed=STUB_ADDRESS)


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Proxy]:
    with proxying() as running:
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, running.url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        yield running


async def get(url: str, proxy: str | None, policy: Policy = PUBLIC) -> Fetched:
    settings = Settings(proxy=proxy_url(proxy))
    async with make_client(policy, settings) as client:
        return await fetch(client, policy, settings, url)


async def test_without_the_flag_the_environments_proxy_is_ignored(site: Site, proxy: Proxy) -> None:
    site.routes["/direct"] = Route(b"direct")
    assert (await get(site.url("/direct"), None)).body == b"direct"
    assert proxy.seen == []
    assert site.hits("/direct") == 1


async def test_a_proxy_url_carries_every_request(site: Site, proxy: Proxy) -> None:
    site.routes["/via"] = Route(b"via the proxy")
    assert (await get(site.url("/via"), proxy.url)).body == b"via the proxy"
    assert proxy.seen == [site.url("/via")]
    assert site.hits("/via") == 1


async def test_env_uses_the_environments_proxy(site: Site, proxy: Proxy) -> None:
    site.routes["/env"] = Route(b"from env")
    assert (await get(site.url("/env"), "env")).body == b"from env"
    assert proxy.seen == [site.url("/env")]


async def test_env_sends_what_no_proxy_names_through_the_proxy_too(
    site: Site, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Left to httpx, a host that NO_PROXY names was fetched directly, without the checks
    # of a direct connection: a name resolving to loopback was reached.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    site.routes["/env"] = Route(b"from env")
    assert (await get(site.url("/env"), "env")).body == b"from env"
    assert proxy.seen == [site.url("/env")]


@pytest.mark.parametrize(
    "variables", [{}, {"HTTP_PROXY": "http://a.test:1", "HTTPS_PROXY": "http://b.test:1"}]
)
def test_env_without_one_proxy_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    # With none, httpx connected directly, without the address checks of a direct connection.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match="needs one proxy"):
        proxy_url("env")


@pytest.mark.parametrize(
    "given", ["garbage", "socks5://proxy.test:1080", "ftp://proxy.test", "http://"]
)
def test_a_proxy_that_is_no_http_url_is_refused_at_start(given: str) -> None:
    with pytest.raises(ValueError, match="must be an http"):
        proxy_url(given)


@pytest.mark.parametrize("spelling", ["blocked\u3002test", "blocked\uff0etest", "BLOCKED.test."])
async def test_through_a_proxy_a_denied_host_is_refused_however_spelled(
    proxy: Proxy, spelling: str
) -> None:
    # The rules saw the name as written, the proxy as httpx spells it: blocked.test.
    policy = Policy(deny_hosts=("blocked.test",), private_allowed=STUB_ADDRESS)
    with pytest.raises(Refused, match=r"blocked\.test"):
        await get(f"http://{spelling}/", proxy.url, policy)
    assert proxy.seen == []


async def test_a_host_name_idna_refuses_is_a_clear_error(proxy: Proxy) -> None:
    with pytest.raises(WebError, match="not a valid URL"):
        await get("http://xn--localhost/", proxy.url)
    assert proxy.seen == []


@pytest.mark.parametrize("mode", ["url", "env"])
@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:{port}/",
        "http://localhost:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:10.0.0.1]/",
        "http://0x7f000001:{port}/",
    ],
)
async def test_through_a_proxy_private_targets_are_still_refused(
    site: Site, proxy: Proxy, mode: str, target: str
) -> None:
    with pytest.raises(Refused, match="non-public address"):
        await get(target.format(port=site.port), proxy.url if mode == "url" else "env", Policy())
    assert proxy.seen == []


async def test_through_a_proxy_a_name_is_resolved_and_checked_first(proxy: Proxy) -> None:
    policy = Policy(resolver=internal_name)
    with pytest.raises(Refused, match="resolves to a non-public address"):
        await get("http://intranet.example/", proxy.url, policy)
    assert proxy.seen == []


async def test_through_a_proxy_each_redirect_hop_is_checked(site: Site, proxy: Proxy) -> None:
    site.routes["/away"] = Route(status=302, headers={"location": "http://10.1.2.3/admin"})
    with pytest.raises(Refused, match="non-public address"):
        await get(site.url("/away"), proxy.url)
    assert proxy.seen == [site.url("/away")]


async def test_a_public_target_is_left_to_the_proxy(proxy: Proxy) -> None:
    # Nothing is dialled but the proxy (this one reaches only loopback, so it answers 403).
    page = await get("http://93.184.215.14/", proxy.url, Policy())
    assert page.status == 403
    assert proxy.seen == ["http://93.184.215.14/"]
