"""This machine's own addresses, which reach its own services however public they look.

A cloud machine often holds its public address on an interface; a URL naming that address
reaches whatever listens on all interfaces of the machine mcp-web runs on, as loopback
would. An address is this machine's own when a socket can be bound to it: the kernel
answers from its current addresses and local routes, on every platform, with no list to
keep fresh. Where the kernel lets any address be bound (Linux's `ip_nonlocal_bind`), that
answer means nothing, so the local addresses Linux lists in /proc decide instead.
"""

import contextlib
import ipaddress
import socket
from pathlib import Path

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Documentation addresses (RFC 5737, RFC 3849): bound nowhere, so binding one means the
# kernel binds anything.
_NOWHERE = {4: "198.51.100.254", 6: "2001:db8::fe"}
FIB_TRIE = Path("/proc/net/fib_trie")
IF_INET6 = Path("/proc/net/if_inet6")


def is_own(address: IPAddress) -> bool:
    """Say whether `address` is one of this machine's own (a connection would stay here)."""
    if not _binds(str(address), address.version):
        return False
    if not _binds(_NOWHERE[address.version], address.version):
        return True
    return any(address in network for network in listed_networks())


def _binds(address: str, version: int) -> bool:
    family = socket.AF_INET6 if version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((address, 0))
    except OSError:  # not an address of this machine (or no such protocol here)
        return False
    return True


def listed_networks() -> list[IPNetwork]:
    """Return the local addresses and ranges Linux lists in /proc (none elsewhere)."""
    found: list[IPNetwork] = []
    for path, parse in ((FIB_TRIE, local_ipv4), (IF_INET6, local_ipv6)):
        with contextlib.suppress(OSError):  # not Linux: nothing listed
            found.extend(parse(path.read_text()))
    return found


def local_ipv4(fib_trie: str) -> list[IPNetwork]:
    """Return the LOCAL routes of /proc/net/fib_trie: each address (or range) of this host."""
    found: list[IPNetwork] = []
    last = ""
    for line in fib_trie.splitlines():
        words = line.replace("|--", " ").split()
        if line.strip().startswith("|--") and words:
            last = words[0]
        elif len(words) == 3 and words[0].startswith("/") and words[2] == "LOCAL" and last:
            try:
                found.append(ipaddress.IPv4Network(f"{last}{words[0]}", strict=False))
            except ValueError:
                continue
    return found


def local_ipv6(if_inet6: str) -> list[IPNetwork]:
    """Return the addresses of /proc/net/if_inet6 (32 hex digits first on each line)."""
    found: list[IPNetwork] = []
    for line in if_inet6.splitlines():
        words = line.split()
        try:
            found.append(ipaddress.IPv6Network(int(words[0], 16)))
        except (IndexError, ValueError):
            continue
    return found
