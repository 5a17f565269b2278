"""The egress policy directly: every non-public address class and spelling is refused."""

import ipaddress

import pytest

from mcpkit_web.__main__ import private_addresses
from mcpkit_web.addresses import BlockedAddress, Policy, host_rules, is_public, literal_address
from servers.web.conftest import STUB_ADDRESS

NOT_PUBLIC = [
    "127.0.0.1",
    "127.255.255.254",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "169.254.170.2",
    "100.64.0.1",
    "100.100.100.200",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "198.18.0.1",
    "192.0.0.192",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd00:ec2::254",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::7f00:1",
    "2002:a9fe:a9fe::",
    "2002:7f00:1::",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo hiding 127.0.0.1
    "::127.0.0.2",  # IPv4-compatible
    "::ffff:0:7f00:2",  # SIIT
    "64:ff9b:1::7f00:2",  # local-use NAT64
    "fec0::1",  # site-local: global to Python 3.11, as the two below
    "3fff::1",
    "5f00::1",
]

SPELLINGS = ["2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1", "127.1", "017700000001"]


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"])
def test_public_addresses_pass(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_numeric_spellings_are_read_as_the_address_they_reach(spelling: str) -> None:
    assert literal_address(spelling) == ipaddress.IPv4Address("127.0.0.1")


@pytest.mark.parametrize("spelling", [*SPELLINGS, "[::ffff:7f00:1]", "[::1]", "localhost"])
async def test_resolving_a_loopback_spelling_is_refused(spelling: str) -> None:
    with pytest.raises(BlockedAddress, match="non-public"):
        await Policy().resolve(spelling, 80)


async def test_one_private_answer_refuses_the_name() -> None:
    async def mixed(host: str, port: int) -> list[str]:
        return ["93.184.215.14", "10.1.2.3"]

    with pytest.raises(BlockedAddress):
        await Policy(resolver=mixed).resolve("example.com", 443)


async def test_private_network_allowed_only_by_the_operator() -> None:
    assert await Policy(allow_private=True).resolve("127.0.0.1", 80) == ["127.0.0.1"]
    assert await Policy(private_allowed=STUB_ADDRESS).resolve("127.0.0.1", 80) == ["127.0.0.1"]
    with pytest.raises(BlockedAddress):
        await Policy(private_allowed=STUB_ADDRESS).resolve("127.0.0.2", 80)


async def test_private_addresses_the_operator_names_are_reached_and_no_others() -> None:
    # --allow-private-address: an intranet's range, without the whole private network.
    policy = Policy(
        private_allowed=private_addresses(["10.1.0.0/16", "[fd00::5]"]), deny_hosts=("10.1.9.9",)
    )
    assert await policy.resolve("10.1.2.3", 80) == ["10.1.2.3"]
    assert await policy.resolve("[fd00::5]", 80) == ["fd00::5"]
    for refused in ("10.2.0.1", "127.0.0.1", "[fd00::6]", "169.254.169.254"):
        with pytest.raises(BlockedAddress, match="non-public"):
            await policy.resolve(refused, 80)
    with pytest.raises(BlockedAddress, match="denied by the operator"):
        await policy.resolve("10.1.9.9", 80)


def test_host_lists() -> None:
    policy = Policy(
        allow_hosts=host_rules([".example.com, docs.python.org"]), deny_hosts=("bad.example.com",)
    )
    policy.check_host("example.com")
    policy.check_host("www.EXAMPLE.com.")
    policy.check_host("docs.python.org")
    for host in ("bad.example.com", "python.org", "example.com.evil.net"):
        with pytest.raises(BlockedAddress):
            policy.check_host(host)


@pytest.mark.parametrize(
    "spelling", ["8.8.8.8", "134744072", "0x8.0x8.0x8.0x8", "8.8.2056", "[::ffff:808:808]"]
)
async def test_a_denied_address_is_denied_however_it_is_spelled(spelling: str) -> None:
    # The rule matched the host's text only: each of these reached 8.8.8.8.
    with pytest.raises(BlockedAddress, match="denied by the operator"):
        await Policy(deny_hosts=("8.8.8.8",)).resolve(spelling, 80)


async def test_a_name_resolving_to_a_denied_address_is_denied() -> None:
    async def to_denied(host: str, port: int) -> list[str]:
        return ["64:ff9b::808:808"]  # NAT64 of 8.8.8.8

    with pytest.raises(BlockedAddress, match="denied by the operator"):
        await Policy(deny_hosts=("8.8.8.8",), resolver=to_denied).resolve("dns.example", 53)
    assert await Policy(deny_hosts=("8.8.4.4",), resolver=to_denied).resolve("x", 53)


async def test_a_denied_range_denies_every_address_in_it_however_reached() -> None:
    # A range was taken for a host name: --deny-host 127.0.0.0/8 denied nothing.
    async def to_loopback(host: str, port: int) -> list[str]:
        return ["127.0.0.2"]

    policy = Policy(deny_hosts=("127.0.0.0/8", "[fd00::/8]"), allow_private=True)
    for host in ("127.0.0.1", "2130706433", "[::ffff:127.0.0.3]", "[fd00::1]"):
        with pytest.raises(BlockedAddress, match="denied by the operator"):
            await policy.resolve(host, 80)
    with pytest.raises(BlockedAddress, match="denied by the operator"):
        await Policy(deny_hosts=("127.0.0.0/8",), resolver=to_loopback).resolve("x.test", 80)
    assert await policy.resolve("10.0.0.1", 80) == ["10.0.0.1"]
