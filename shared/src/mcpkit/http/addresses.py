"""The addresses a bound server is reachable at, for the Host check and the operator.

A server bound to a wildcard (0.0.0.0, ::) answers on every interface of the machine, so a
client naming any of their addresses in its Host header is talking to this server, not to a
rebound DNS name: those addresses are accepted without `--allowed-host`, and the operator is
shown a URL for each. Linux lists its interfaces' IPv4 addresses through ioctl and its IPv6
ones in /proc; elsewhere the resolver's addresses of the host name and the address of the
default route stand in.
"""

import contextlib
import ipaddress
import socket
import struct
import sys
from pathlib import Path

WILDCARDS = ("0.0.0.0", "::", "")
_SIOCGIFADDR = 0x8915  # Linux: the IPv4 address of an interface
_IF_INET6 = Path("/proc/net/if_inet6")


def bound_addresses(host: str) -> list[str]:
    """Return the addresses a server bound to `host` answers on, loopback ones first.

    A specific address is just itself; a wildcard is every address of the machine in its
    family (both families for "::", which Linux binds dual-stack). Link-local IPv6 addresses
    are left out: a URL needs their zone, which no Host header carries.
    """
    if host not in WILDCARDS:
        return [host]
    found = {*_linux_interfaces(), *_resolver_addresses(), *_default_route_addresses()}
    wanted = (4,) if host == "0.0.0.0" else (4, 6)
    addresses: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for text in found:
        with contextlib.suppress(ValueError):
            address = ipaddress.ip_address(text)
            if address.version in wanted and not address.is_link_local:
                addresses.append(address)
    addresses += [ipaddress.ip_address("127.0.0.1")]
    if 6 in wanted:
        addresses.append(ipaddress.ip_address("::1"))
    unique = sorted(set(addresses), key=lambda a: (not a.is_loopback, a.version, a.packed))
    return [str(address) for address in unique]


def _linux_interfaces() -> list[str]:
    """Return the addresses of this machine's interfaces (Linux; empty elsewhere)."""
    if not sys.platform.startswith("linux"):
        return []
    import fcntl  # POSIX only

    found: list[str] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            with contextlib.suppress(OSError):  # an interface without an IPv4 address
                answer = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, request)
                found.append(socket.inet_ntoa(answer[20:24]))
    with contextlib.suppress(OSError):
        for line in _IF_INET6.read_text().splitlines():
            digits = line.split()[0]
            found.append(str(ipaddress.IPv6Address(bytes.fromhex(digits))))
    return found


def _resolver_addresses() -> list[str]:
    """Return the addresses the resolver gives for this machine's name (never waits long)."""
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, proto=socket.IPPROTO_TCP)
    except OSError:
        return []
    return [str(info[4][0]) for info in infos]


def _default_route_addresses() -> list[str]:
    """Return this machine's source address toward the default route, per family.

    Connecting a UDP socket sends nothing: it only asks the kernel which address it would
    send from.
    """
    found: list[str] = []
    for family, target in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((target, 9))
            found.append(str(probe.getsockname()[0]))
    return found
