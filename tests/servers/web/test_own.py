"""This machine's own addresses are refused however public they look, unless the operator allows.

A cloud machine's public address sits on its own interface; a URL naming it reaches the
services of the machine mcp-web runs on. Here the machine's address on its default route
(whatever range it is in) stands for it: the tests make it look public, then show that
it is refused as the machine's own, for a literal URL and for a name resolving to it.
"""

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpkit_web import addresses, own
from mcpkit_web.addresses import Policy
from mcpkit_web.errors import Refused
from mcpkit_web.fetcher import Settings, fetch, make_client
from servers.web.stub import Route, Site, serving

FIB_TRIE = """Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
     |-- 203.0.113.0
        /24 link UNICAST
     |-- 203.0.113.9
        /32 host LOCAL
     |-- 198.51.100.0
        /28 host LOCAL
"""
IF_INET6 = """00000000000000000000000000000001 01 80 10 80       lo
20010db8000000000000000000000009 04 40 00 80     eth0
"""


def machine_address() -> str:
    """This machine's address on its default route (a connected UDP socket sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("198.51.100.1", 9))
        address = str(probe.getsockname()[0])
    assert not address.startswith("127."), "the machine has no address besides loopback"
    return address


@pytest.fixture
def mine(monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """A stub site on the machine's own address, which is made to look public."""
    address = machine_address()
    looks_public = addresses.is_public

    def is_public(found: addresses.IPAddress) -> bool:
        return str(found) == address or looks_public(found)

    monkeypatch.setattr(addresses, "is_public", is_public)
    with serving(address) as site:
        site.routes["/"] = Route(b"the machine's own service")
        yield site


def test_the_machines_addresses_are_its_own_and_others_are_not() -> None:
    for address in ("127.0.0.1", "::1", machine_address()):
        assert own.is_own(ipaddress.ip_address(address)), address
    for address in ("8.8.8.8", "93.184.215.14", "2001:4860:4860::8888"):
        assert not own.is_own(ipaddress.ip_address(address)), address


def test_where_any_address_binds_the_listed_ones_decide(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def binds(address: str, version: int) -> bool:
        return True  # as with Linux's ip_nonlocal_bind

    monkeypatch.setattr(own, "_binds", binds)
    (tmp_path / "fib_trie").write_text(FIB_TRIE)
    (tmp_path / "if_inet6").write_text(IF_INET6)
    monkeypatch.setattr(own, "FIB_TRIE", tmp_path / "fib_trie")
    monkeypatch.setattr(own, "IF_INET6", tmp_path / "if_inet6")
    for address in ("203.0.113.9", "198.51.100.14", "127.0.0.53", "2001:db8::9"):
        assert own.is_own(ipaddress.ip_address(address)), address
    for address in ("203.0.113.10", "198.51.100.16", "2001:db8::a"):
        assert not own.is_own(ipaddress.ip_address(address)), address


def test_proc_listings_are_read_as_local_addresses_and_ranges() -> None:
    assert [str(net) for net in own.local_ipv4(FIB_TRIE)] == [
        "127.0.0.0/8",
        "127.0.0.1/32",
        "203.0.113.9/32",
        "198.51.100.0/28",
    ]
    assert [str(net) for net in own.local_ipv6(IF_INET6)] == ["::1/128", "2001:db8::9/128"]
    assert own.local_ipv4("garbage\n|-- nonsense\n  /32 host LOCAL\n") == []


def test_the_policy_refuses_an_own_address_that_looks_public(mine: Site) -> None:
    address = ipaddress.ip_address(machine_address())
    assert addresses.is_public(address)  # as a cloud machine's public address is
    assert not Policy().allowed(address)
    assert not Policy().allowed(ipaddress.ip_address(f"::ffff:{address}"))
    assert Policy(allow_private=True).allowed(address)
    assert Policy().allowed(ipaddress.ip_address("93.184.215.14"))


async def test_fetching_the_machines_own_address_is_refused(mine: Site) -> None:
    address = machine_address()

    async def to_me(host: str, port: int) -> list[str]:
        return [address]

    for policy, url in (
        (Policy(), mine.url("/", host=address)),
        (Policy(resolver=to_me), mine.url("/", host="shop.example")),
    ):
        async with make_client(policy, Settings()) as client:
            with pytest.raises(Refused, match="non-public address"):
                await fetch(client, policy, Settings(), url)
    assert mine.seen == []
    allowed = Policy(allow_private=True, resolver=to_me)
    async with make_client(allowed, Settings()) as client:
        page = await fetch(client, allowed, Settings(), mine.url("/", host="shop.example"))
    assert page.body == b"the machine's own service"
