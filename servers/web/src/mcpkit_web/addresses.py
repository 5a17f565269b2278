"""Which hosts and addresses mcp-web may connect to: the operator's egress policy.

A URL names a host; the host resolves to addresses; only a public address may be dialled
(unless the operator allows private networks). "Public" is decided on the address itself
after unwrapping every form that embeds an IPv4 address (IPv4-mapped, NAT64, 6to4,
Teredo), so `::ffff:127.0.0.1` or `64:ff9b::a9fe:a9fe` are what they hide; the forms
nothing public uses (IPv4-compatible, SIIT, local-use NAT64) are refused whole. Numeric host
spellings (`2130706433`, `0x7f.1`, `0177.0.0.1`) are read as the C library reads them,
so the check sees the address a connection would reach. This machine's own addresses
(`own`) are never public, since they reach its own services.
"""

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from .errors import shown
from .own import is_own

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]
"""Resolve a host name and port to addresses (the tests inject one that lies)."""

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_DENIED = tuple(
    ipaddress.ip_network(net)
    for net in (
        "100.64.0.0/10",  # carrier-grade NAT, not global though `is_private` says no
        "192.0.0.0/24",
        "198.18.0.0/15",
        "169.254.169.254/32",  # cloud metadata services, named so no rule change frees them
        "169.254.170.2/32",
        "100.100.100.200/32",
        "168.63.129.16/32",
        "fd00:ec2::254/128",
        "::/96",  # IPv4-compatible (::127.0.0.1), long deprecated: no public host uses it
        "::ffff:0:0:0/96",  # SIIT translated IPv4 (::ffff:0:7f00:1)
        "64:ff9b:1::/48",  # local-use NAT64: the network's own translator, never public
        # Not global, though Python 3.11 says so: site-local (deprecated, yet routed
        # inside sites), documentation (RFC 9637) and SRv6 segment ids (RFC 9602).
        "fec0::/10",
        "3fff::/20",
        "5f00::/16",
    )
)


class BlockedAddress(Exception):
    """The URL's host is not one mcp-web may reach; the message says why, opaquely."""


def literal_address(host: str) -> IPAddress | None:
    """Return the address a numeric host spells (any IPv4 spelling the C library takes), or None."""
    text = host.strip("[]")
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        pass
    try:
        # inet_aton accepts the legacy forms browsers and curl accept: 127.1, 0x7f.1, 017700000001
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except (OSError, ValueError):
        return None


def embedded(address: IPAddress) -> list[IPAddress]:
    """Return `address` and every IPv4 address it carries (mapped, NAT64, 6to4, Teredo)."""
    found: list[IPAddress] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            found.append(address.ipv4_mapped)
        if address.sixtofour is not None:
            found.append(address.sixtofour)
        if address.teredo is not None:
            found.extend(address.teredo)
        if address in _NAT64:
            found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def is_public(address: IPAddress) -> bool:
    """Say whether `address`, and every address it embeds, is a global unicast address."""
    for candidate in embedded(address):
        if not candidate.is_global or candidate.is_multicast:
            return False
        if any(candidate in net for net in _DENIED if net.version == candidate.version):
            return False
    return True


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve `host` once through the system (getaddrinfo), without blocking the loop.

    Raises:
        BlockedAddress: the name does not resolve.
    """
    import anyio

    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise BlockedAddress(f"cannot resolve host {shown(host)!r}") from exc
    answers: list[str] = []
    for info in infos:
        text = str(info[4][0])
        if text not in answers:
            answers.append(text)
    return answers


@dataclass(frozen=True)
class Policy:
    """The operator's egress rules.

    `allow_hosts`: when not empty, the only host names (or `.suffix` domains) allowed.
    `deny_hosts`: names or domains always refused. `allow_private`: private, loopback and
    link-local addresses, and this machine's own, may be reached. `private_allowed`: those
    of them that may be reached without `allow_private` (an intranet's wiki), each address
    or range as the operator named it.
    """

    allow_hosts: tuple[str, ...] = ()
    deny_hosts: tuple[str, ...] = ()
    allow_private: bool = False
    private_allowed: tuple[IPNetwork, ...] = ()
    resolver: Resolver = field(default=system_resolver, compare=False)

    def check_host(self, host: str) -> None:
        """Refuse a host name the operator's lists exclude.

        Raises:
            BlockedAddress: the host is denied, or not among the allowed hosts.
        """
        name = host.strip("[]").rstrip(".").lower()
        if any(_matches(name, rule) for rule in self.deny_hosts):
            raise BlockedAddress(f"host {shown(name)!r} is denied by the operator (--deny-host)")
        if self.allow_hosts and not any(_matches(name, rule) for rule in self.allow_hosts):
            raise BlockedAddress(f"host {shown(name)!r} is not in the operator's --allow-host list")

    def _denied(self, address: IPAddress) -> bool:
        """Whether `address`, or one it embeds, is one a --deny-host rule spells or ranges over.

        The rule `8.8.8.8` matched that text only: `134744072`, `[::ffff:808:808]`, or a
        name resolving to it, reached it; `127.0.0.0/8` matched nothing.
        """
        networks = [network for rule in self.deny_hosts if (network := address_range(rule))]
        return any(each in network for network in networks for each in embedded(address))

    def allowed(self, address: IPAddress) -> bool:
        """Say whether a connection to `address` is allowed.

        An address of this machine's own counts as private however public it looks: it
        reaches the services of the machine mcp-web runs on.
        """
        if self.allow_private or any(address in allowed for allowed in self.private_allowed):
            return True
        return is_public(address) and not any(is_own(each) for each in embedded(address))

    async def resolve(self, host: str, port: int) -> list[str]:
        """Resolve `host` once and return the answers that may be dialled, in order.

        Raises:
            BlockedAddress: the host is excluded, does not resolve, or some answer is not
                public (one bad answer refuses the name: rebinding sets often mix them).
        """
        self.check_host(host)
        literal = literal_address(host)
        answers = [str(literal)] if literal is not None else await self.resolver(host, port)
        if not answers:
            raise BlockedAddress(f"host {shown(host)!r} has no address")
        for answer in answers:
            address = literal_address(answer)
            if address is not None and self._denied(address):
                raise BlockedAddress(
                    f"host {shown(host)!r} is {address}, denied by the operator (--deny-host)"
                )
            if address is None or not self.allowed(address):
                raise BlockedAddress(
                    f"host {shown(host)!r} resolves to a non-public address; mcp-web reaches only"
                    " public addresses (the operator may pass --allow-private-network)"
                )
        return answers


def _matches(name: str, rule: str) -> bool:
    rule = rule.lower().rstrip(".")
    if rule.startswith("."):
        return name == rule[1:] or name.endswith(rule)
    return name == rule


def address_range(rule: str) -> IPNetwork | None:
    """Return the addresses a host rule names: a range (`10.0.0.0/8`), one address, or None.

    Raises:
        ValueError: the rule has a `/` but is no range of addresses.
    """
    if "/" in rule:
        return ipaddress.ip_network(rule.strip("[]"), strict=False)
    address = literal_address(rule.rstrip("."))
    return None if address is None else ipaddress.ip_network(address)


def host_rules(values: Sequence[str]) -> tuple[str, ...]:
    """Return host rules from flag values, splitting commas and dropping blanks."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())
